"""Authentication middleware of the Placement API.

The strategy is ``[placement_api]auth_strategy``, else
``[DEFAULT]auth_strategy``, the one of the bare metal API:

``noauth`` follows upstream Placement's test conventions: every request
but ``GET /`` needs an ``x-auth-token``; the token reads ``user[:project]``
(project defaults to the user, ``x-project-id`` overrides it), the tokens
of ``[placement_api]noauth_admin_tokens`` (``admin``, and ``notused``, what
keystoneauth's ``none`` plugin sends) have the admin role unless
``x-roles`` gives the role list.
``openstack-system-scope: all`` asks for a system scoped context.
``http_basic`` checks users and passwords against the htpasswd file of
``[DEFAULT]http_basic_auth_user_file`` (:mod:`alloc_framework.api.http_basic`)
as the bare metal API does, where every user is an operator: here too each
one has the admin role, in a project named like the user, and identity
headers sent by the client are ignored.
``keystone`` uses keystonemiddleware's auth_token (``[keystone_authtoken]``).
``GET /`` stays public in every strategy.
``PlacementKeystoneContext`` then builds the request context from the
identity headers any of them set.
"""

from keystonemiddleware import auth_token
from oslo_log import log as logging
from oslo_middleware import request_id
import webob
import webob.exc

from alloc_framework.api import http_basic
from alloc_framework.api.placement import context
from alloc_framework.api.placement import response

LOG = logging.getLogger(__name__)


def _is_root(environ):
    return environ.get('PATH_INFO', '') in ('', '/')


REALM = 'Placement API'


def get_auth_strategy(conf):
    """``[placement_api]auth_strategy``, else ``[DEFAULT]auth_strategy``."""
    return conf.placement_api.auth_strategy or conf.auth_strategy


class NoAuthMiddleware:
    """Trust ``x-auth-token`` as ``user[:project]``; 401 without one.

    :param tokenless: ``tokenless(environ)``: requests that need no token
        (a browser sends none): without one they are the first admin
        token's (the dashboard's pages).
    """

    def __init__(self, application, admin_tokens=('admin',),
                 tokenless=None):
        self.application = application
        self.admin_tokens = frozenset(admin_tokens)
        self.default_token = next(iter(admin_tokens), None)
        self.tokenless = tokenless

    def __call__(self, environ, start_response):
        req = webob.Request(environ)
        if _is_root(environ):
            return self.application(environ, start_response)
        token = req.headers.get('X-Auth-Token')
        if (token is None and self.tokenless is not None
                and self.default_token is not None
                and self.tokenless(environ)):
            # Nothing is protected with noauth: the browser is the admin.
            token = self.default_token
            req.headers.pop('X-Roles', None)
        if token is None:
            return response.error_response(
                req, webob.exc.HTTPUnauthorized(
                    'This server could not verify that you are authorized '
                    'to access the document you requested.'))(
                environ, start_response)
        user_id, _sep, project_id = token.partition(':')
        project_id = project_id or user_id
        # x-roles stands for keystone's flattened role list (admin implies
        # member and reader there): when sent, it is the whole list.
        if 'X-Roles' in req.headers:
            roles = [r.strip() for r in req.headers['X-Roles'].split(',')
                     if r.strip()]
        elif user_id in self.admin_tokens:
            roles = ['admin']
        else:
            roles = []
        req.headers['X-User-Id'] = user_id
        # A system-scoped request has no project; an explicit
        # x-project-id still wins over the token's project.
        if not req.headers.get('OpenStack-System-Scope'):
            req.headers['X-Tenant-Id'] = project_id
        req.headers['X-Roles'] = ','.join(roles)
        return self.application(environ, start_response)


class PlacementKeystoneContext:
    """Build ``environ['placement.context']`` from the identity headers."""

    def __init__(self, application, enforcer):
        self.application = application
        self.enforcer = enforcer

    def __call__(self, environ, start_response):
        req_id = environ.get(request_id.ENV_REQUEST_ID)
        ctx = context.RequestContext.from_environ(
            environ, request_id=req_id, enforcer=self.enforcer)
        if ctx.user_id is None and not _is_root(environ):
            LOG.debug('Neither X_USER_ID nor X_USER found in request')
            req = webob.Request(environ)
            return response.error_response(
                req, webob.exc.HTTPUnauthorized())(environ, start_response)
        environ['placement.context'] = ctx
        return self.application(environ, start_response)


class PlacementAuthProtocol(auth_token.AuthProtocol):
    """keystonemiddleware's auth_token that leaves ``GET /`` public."""

    def __init__(self, app, conf):
        self._placement_app = app
        super().__init__(app, conf)

    def __call__(self, environ, start_response):
        if _is_root(environ):
            return self._placement_app(environ, start_response)
        return super().__call__(environ, start_response)


def keystone_middleware(application, conf):
    """Wrap ``application`` with auth_token configured from ``conf``."""
    # Tell keystonemiddleware which ConfigOpts holds [keystone_authtoken].
    return PlacementAuthProtocol(application, {'oslo_config_config': conf})


def _unauthorized(message):
    exc = webob.exc.HTTPUnauthorized(
        message, headers={'WWW-Authenticate': 'Basic realm="%s"' % REALM})
    return lambda environ, start_response: response.error_response(
        webob.Request(environ), exc)(environ, start_response)


def _operator(user):
    """The identity of an http_basic user, as on the bare metal side."""
    return {'HTTP_X_USER_ID': user,
            'HTTP_X_USER_NAME': user,
            'HTTP_X_PROJECT_ID': user,
            'HTTP_X_ROLES': 'admin,member,reader',
            'HTTP_X_IDENTITY_STATUS': 'Confirmed'}


def basic_middleware(application, conf):
    """Wrap ``application`` with HTTP basic authentication of operators.

    :raises: HtpasswdError when the htpasswd file is bad.
    """
    return http_basic.BasicAuthMiddleware(
        application,
        http_basic.HtpasswdAuth(conf.http_basic_auth_user_file,
                                conf.http_basic_auth_cache_ttl),
        identity=_operator, unauthorized=_unauthorized, is_public=_is_root)
