"""Build the bare metal API WSGI application.

The stack, outermost first: CORS (when ``[cors]allowed_origin`` is set),
the proxy headers (when
``[oslo_middleware]enable_proxy_headers_parsing`` is set), request ids
(``X-OpenStack-Request-Id`` and ``OpenStack-Request-Id``), the
Prometheus metrics (request timing, and ``GET /metrics`` when it needs
no credentials: see ``alloc_framework.api.prometheus``), the health
check (``GET /healthcheck``, unauthenticated, when
``[healthcheck]enabled``), the request limits
(UTF-8 URLs, body size: see ``alloc_framework.api.limits``), the fault
wrapper (no traceback ever reaches a client), authentication
(``[DEFAULT]auth_strategy``) and the dispatcher of the route table. A
layer with nothing to do is left out: each costs every request a pass
through webob.
"""

from oslo_log import log
from oslo_middleware import http_proxy_to_wsgi
from oslo_middleware import request_id

from alloc_framework.api.baremetal import auth
from alloc_framework.api.baremetal import errors
from alloc_framework.api.baremetal import handler
from alloc_framework.api.baremetal import microversion
from alloc_framework.api import limits
from alloc_framework.api import middleware
from alloc_framework.api import prometheus

LOG = log.getLogger(__name__)


class RequestId(request_id.RequestId):
    """Request ids in ``X-OpenStack-Request-Id`` and, as upstream
    (microversion 1.107), the same id in ``OpenStack-Request-Id``.

    Headers are not negotiated, so both are sent at every version.
    """

    compat_headers = ['OpenStack-Request-Id']


class FaultWrapper:
    """Turn any uncaught exception into a 500 in the API's error format."""

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        try:
            return self.app(environ, start_response)
        except Exception:
            LOG.exception('Unexpected error serving %s %s',
                          environ.get('REQUEST_METHOD'),
                          environ.get('PATH_INFO'))
            resp = errors.response(
                500, 'An unexpected error prevented the server from '
                     'fulfilling the request.', errors.INTERNAL_ERROR)
            microversion.add_headers(resp, None)
            return resp(environ, start_response)


_LIMIT_CODES = {400: errors.INVALID_URL, 413: errors.REQUEST_TOO_LARGE}


def _limit_error(environ, status, message):
    resp = errors.response(status, message, _LIMIT_CODES[status])
    microversion.add_headers(resp, None)
    return resp


def setup_app(conf, auth_middleware=None):
    """Return the WSGI application of the bare metal API.

    :param conf: the oslo.config ConfigOpts to use.
    :param auth_middleware: a callable ``(app, conf) -> app`` replacing the
        one chosen by ``[DEFAULT]auth_strategy`` (tests use it to stand in
        for keystonemiddleware).
    """
    app = handler.Dispatcher(conf)
    wrapper = auth_middleware or auth.wrap
    app = wrapper(app, conf)
    app = FaultWrapper(app)
    app = limits.wrap(app, conf, _limit_error)
    app = middleware.wrap_healthcheck(app, conf)
    app = prometheus.wrap(app, conf, prometheus.BAREMETAL)
    app = RequestId(app)
    conf.register_opts(http_proxy_to_wsgi.OPTS, group='oslo_middleware')
    if conf.oslo_middleware.enable_proxy_headers_parsing:
        app = http_proxy_to_wsgi.HTTPProxyToWSGI(app, conf)
    return middleware.wrap_cors(
        app, conf,
        allow_headers=['X-Auth-Token', microversion.HEADER,
                       'X-OpenStack-Request-Id', 'Content-Type'],
        expose_headers=[microversion.HEADER, microversion.MIN_HEADER,
                        microversion.MAX_HEADER, 'X-OpenStack-Request-Id',
                        'OpenStack-Request-Id'])
