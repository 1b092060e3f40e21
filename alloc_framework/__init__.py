"""alloc_framework: Placement, node allocation and deferred actions.

oslo.service's native-thread backend is selected here, before anything
imports oslo.service, so that no code path of the project ever runs on
eventlet.
"""

import warnings

# eventlet is installed only because oslo.service still depends on it, and
# futurist imports it when it is present just to see whether it could be
# used: its deprecation banner means nothing for us and would be printed by
# every command.
warnings.filterwarnings('ignore', message=r'\s*Eventlet is deprecated')

from oslo_service import backend as _service_backend  # noqa: E402

_service_backend.init_backend(_service_backend.BackendType.THREADING)
