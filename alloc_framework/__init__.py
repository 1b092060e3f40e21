"""alloc_framework: Placement, node allocation and deferred actions.

oslo.service's native-thread backend is selected here, before anything
imports oslo.service, so that no code path of the project ever runs on
eventlet.
"""

from oslo_service import backend as _service_backend

_service_backend.init_backend(_service_backend.BackendType.THREADING)
