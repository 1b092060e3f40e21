"""Assemble the Placement WSGI application.

``loadapp(conf)`` returns the whole stack, outermost first: request ids,
the Prometheus metrics (request timing, and ``GET /metrics`` when it
needs no credentials: see ``alloc_framework.api.prometheus``), CORS
(when ``[cors]allowed_origin`` is set), the health check (``GET
/healthcheck``, unauthenticated, when ``[healthcheck]enabled``), request
log, request limits (UTF-8 URLs, body size: see
``alloc_framework.api.limits``), fault wrapper, authentication (noauth,
http_basic or keystone), request context, the dashboard
(``/dashboard/``, when ``[dashboard]enabled``: see
``alloc_framework.api.dashboard``), microversion, route table. Loading
also makes sure the standard resource classes and traits are in the
database.
"""

from oslo_log import log as logging
from oslo_middleware import request_id
import webob
import webob.exc

from alloc_framework.api.dashboard import app as dashboard_app
from alloc_framework.api import limits
from alloc_framework.api import middleware
from alloc_framework.api.placement import auth
from alloc_framework.api.placement import fault_wrap
from alloc_framework.api.placement import handler
from alloc_framework.api.placement import microversion_middleware
from alloc_framework.api.placement import policy
from alloc_framework.api.placement import requestlog
from alloc_framework.api.placement import response
from alloc_framework.api import prometheus
from alloc_framework.common import context as common_context
from alloc_framework.objects.placement import resource_class
from alloc_framework.objects.placement import trait

LOG = logging.getLogger(__name__)


def sync_standard_data():
    """Insert missing standard resource classes and traits."""
    ctx = common_context.get_admin_context()
    resource_class.sync_standard(ctx)
    trait.sync_standard(ctx)


def _limit_error(environ, status, message):
    return response.error_response(webob.Request(environ),
                                   webob.exc.status_map[status](message))


def deploy(conf, auth_strategy=None):
    """The WSGI stack over ``conf`` (no database work).

    :param auth_strategy: 'noauth', 'http_basic' or 'keystone' to override
        the configured strategy (the in-process client forces noauth).
    :raises: HtpasswdError with http_basic and a bad htpasswd file.
    :raises: DriverLoadError for an unknown ``[healthcheck]backends``.
    """
    enforcer = policy.DecisionCache(policy.get_enforcer(conf),
                                    conf.placement_api.policy_cache_seconds)
    placement_handler = handler.PlacementHandler(conf)
    application = microversion_middleware.MicroversionMiddleware(
        placement_handler)
    application = dashboard_app.wrap(application, conf, placement_handler)
    application = auth.PlacementKeystoneContext(application, enforcer)
    strategy = auth_strategy or auth.get_auth_strategy(conf)
    if strategy == 'keystone':
        application = auth.keystone_middleware(application, conf)
    elif strategy == 'http_basic':
        application = auth.basic_middleware(application, conf)
    else:
        if auth_strategy is None:
            LOG.warning('The Placement API authenticates nobody '
                        '(auth_strategy = noauth): every client that '
                        'reaches it may act as any user, administrators '
                        'included. Use http_basic or keystone outside '
                        'development and tests.')
        application = auth.NoAuthMiddleware(
            application, conf.placement_api.noauth_admin_tokens,
            tokenless=dashboard_app.is_dashboard
            if conf.dashboard.enabled else None)
    application = fault_wrap.FaultWrapper(application)
    application = limits.wrap(application, conf, _limit_error)
    application = requestlog.RequestLog(application)
    application = middleware.wrap_healthcheck(application, conf)
    application = middleware.wrap_cors(
        application, conf,
        allow_headers=['X-Auth-Token', 'X-Openstack-Request-Id',
                       'OpenStack-API-Version', 'Content-Type'],
        expose_headers=['X-Openstack-Request-Id', 'OpenStack-API-Version',
                        'Location', 'Last-Modified', 'Vary'])
    application = prometheus.wrap(application, conf, prometheus.PLACEMENT)
    application = request_id.RequestId(application)
    return application


def loadapp(conf, auth_strategy=None):
    """The Placement WSGI application, with standard data synced."""
    sync_standard_data()
    return deploy(conf, auth_strategy=auth_strategy)
