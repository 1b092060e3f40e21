"""Middleware set-up shared by the REST APIs: CORS and the health check."""

import importlib.metadata

from oslo_middleware import cors
from oslo_middleware import healthcheck

from alloc_framework.common import exception

CORS_METHODS = ['GET', 'PUT', 'POST', 'DELETE', 'PATCH']


def wrap_cors(app, conf, allow_headers, expose_headers):
    """``app`` behind oslo.middleware's CORS when ``[cors]allowed_origin``.

    Without allowed origins CORS would do nothing but cost every request
    a pass through webob, and ``OPTIONS`` stays an ordinary method (405
    with ``Allow``), as upstream. The headers are the defaults of the
    ``[cors]`` options: browsers may only send and read the headers CORS
    lists. The middleware reads its options when it is built, so the two
    APIs of one ``alloc-server`` process each keep their own defaults.
    """
    conf.register_opts(cors.CORS_OPTS, 'cors')
    if not conf.cors.allowed_origin:
        return app
    cors.set_defaults(allow_headers=list(allow_headers),
                      expose_headers=list(expose_headers),
                      allow_methods=CORS_METHODS)
    return cors.CORS(app, conf)


HEALTHCHECK_PATH = '/healthcheck'
HEALTHCHECK_BACKENDS = 'oslo.middleware.healthcheck'


class _HealthcheckRoute:
    """``/healthcheck`` to oslo.middleware's health check, the rest on.

    oslo.middleware's ``Healthcheck`` answers whatever it is given; a
    request it ignores (its source is outside ``allowed_source_ranges``,
    or it came through a proxy with ``ignore_proxied_requests``) goes on
    to the API, which answers it as any unknown path.
    """

    def __init__(self, app, conf):
        self.app = app
        self.healthcheck = healthcheck.Healthcheck(app, conf)

    def __call__(self, environ, start_response):
        if environ.get('PATH_INFO', '').rstrip('/') == HEALTHCHECK_PATH:
            return self.healthcheck(environ, start_response)
        return self.app(environ, start_response)


def _check_backends(names):
    """Refuse what would not do what the operator asked: an unknown
    backend (a typo would drain nothing) or two that contradict.

    :raises: DriverLoadError
    """
    if not names:
        # Nothing to check (the default): spare the scan of every
        # installed distribution, made each time an application is built.
        return
    available = sorted({ep.name for ep in importlib.metadata.entry_points(
        group=HEALTHCHECK_BACKENDS)})
    unknown = [name for name in names if name not in available]
    if unknown:
        reason = ('no such entry point (available: %s); see '
                  '[healthcheck]backends' % ', '.join(available))
    elif {'disable_by_file', 'enable_by_files'} <= set(names):
        unknown = names
        reason = ('disable_by_file and enable_by_files cannot be enabled '
                  'together; see [healthcheck]backends')
    else:
        return
    raise exception.DriverLoadError(name=', '.join(unknown),
                                    namespace=HEALTHCHECK_BACKENDS,
                                    reason=reason)


def wrap_healthcheck(app, conf):
    """``app`` behind ``GET /healthcheck`` when ``[healthcheck]enabled``.

    It goes in front of authentication (load balancers and supervisors
    have no credentials), of the request limits and of the request log
    (which would log every probe). The answer says ``OK`` (200) or why
    not (503), with details only when ``[healthcheck]detailed``.

    :raises: DriverLoadError for unknown or contradictory
        ``[healthcheck]backends``.
    """
    if not conf.healthcheck.enabled:
        return app
    _check_backends(conf.healthcheck.backends)
    return _HealthcheckRoute(app, conf)
