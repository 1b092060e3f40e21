"""alloc_framework: Placement, node allocation and deferred actions.

The project runs on native threads only. oslo.service's threading backend
is selected here, before anything imports oslo.service, and eventlet is
made unimportable: it is installed only because oslo.service still depends
on it, and libraries that probe for it (futurist, oslo.utils) must see it
as absent, so that nothing can ever switch to its hub or monkey-patch.
"""

import sys

if 'eventlet' not in sys.modules:
    sys.modules['eventlet'] = None

from oslo_service import backend as _service_backend  # noqa: E402

try:
    _service_backend.init_backend(_service_backend.BackendType.THREADING)
except _service_backend.exceptions.BackendAlreadySelected:
    # Only a foreign process that chose eventlet before importing us (for
    # example oslo-config-generator loading oslo.messaging's options
    # first) gets here; it reads our options and runs none of our
    # services, which refuse to start on any backend but threading
    # (alloc_framework.cmd.service_setup.prepare_service).
    pass
