"""Options of the [oslo_middleware] group that the APIs use.

``max_request_body_size`` is oslo.middleware's sizelimit option, read by
``alloc_framework.api.limits`` in front of both APIs. Its default here is
1 MiB rather than the library's 112 KiB: bulk Placement writes
(``POST /allocations``, ``POST /reshaper``) of a large host legitimately
exceed 112 KiB.
"""

from oslo_config import cfg
from oslo_middleware import sizelimit

MAX_REQUEST_BODY_SIZE = 1024 * 1024

cfg.set_defaults(sizelimit.OPTS, max_request_body_size=MAX_REQUEST_BODY_SIZE)

opts = sizelimit.OPTS


def register_opts(conf):
    conf.register_opts(opts, group='oslo_middleware')
