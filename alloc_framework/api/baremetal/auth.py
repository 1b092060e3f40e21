"""Authentication middleware of the bare metal API.

``[DEFAULT]auth_strategy`` picks one:

* ``noauth``: no authentication; identity headers sent by the client are
  ignored and every request acts as an administrator.
* ``http_basic``: users and bcrypt password hashes in an Apache htpasswd
  file (``[DEFAULT]http_basic_auth_user_file``, see
  :mod:`alloc_framework.api.http_basic`); every user is an operator
  (admin of the whole system). A request without valid credentials gets
  401 with ``WWW-Authenticate: Basic``.
* ``keystone``: keystonemiddleware's ``auth_token`` (``[keystone_authtoken]``
  options) validates tokens and sets the identity headers.

The version documents (``/`` and ``/v1``) are public in every strategy.
"""

from oslo_log import log

from alloc_framework.api.baremetal import errors
from alloc_framework.api.baremetal import handler
from alloc_framework.api import http_basic

LOG = log.getLogger(__name__)

REALM = 'Baremetal API'


def is_public(environ):
    return environ.get('PATH_INFO', '') in handler.PUBLIC_PATHS


class NoAuth:
    """Every request is an administrator of the whole system."""

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        http_basic.strip_identity(environ)
        environ['HTTP_X_ROLES'] = 'admin,member,reader'
        environ['HTTP_OPENSTACK_SYSTEM_SCOPE'] = 'all'
        environ['HTTP_X_IDENTITY_STATUS'] = 'Confirmed'
        return self.app(environ, start_response)


def _unauthorized(message):
    return errors.response(401, message, errors.AUTH_REQUIRED,
                           {'WWW-Authenticate': 'Basic realm="%s"' % REALM})


def _operator(user):
    """The identity of an http_basic user: an operator of the system."""
    return {'HTTP_X_USER_ID': user,
            'HTTP_X_USER_NAME': user,
            'HTTP_X_ROLES': 'admin,member,reader',
            'HTTP_OPENSTACK_SYSTEM_SCOPE': 'all',
            'HTTP_X_IDENTITY_STATUS': 'Confirmed'}


def basic(app, conf):
    """``app`` behind HTTP basic authentication of operators.

    :raises: HtpasswdError when the file is bad.
    """
    return http_basic.BasicAuthMiddleware(
        app, http_basic.HtpasswdAuth(conf.http_basic_auth_user_file,
                                     conf.http_basic_auth_cache_ttl),
        identity=_operator, unauthorized=_unauthorized, is_public=is_public)


class PublicRoutes:
    """Send public paths around ``protected`` (the keystone middleware)."""

    def __init__(self, app, protected):
        self.app = app
        self.protected = protected

    def __call__(self, environ, start_response):
        if is_public(environ):
            http_basic.strip_identity(environ)
            return self.app(environ, start_response)
        return self.protected(environ, start_response)


def keystone(app, conf):
    from keystonemiddleware import auth_token
    protected = auth_token.AuthProtocol(app, {'oslo_config_config': conf})
    return PublicRoutes(app, protected)


def wrap(app, conf):
    """Put the middleware of ``[DEFAULT]auth_strategy`` around ``app``."""
    strategy = conf.auth_strategy
    if strategy == 'noauth':
        LOG.warning('The bare metal API authenticates nobody '
                    '([DEFAULT]auth_strategy = noauth): every client that '
                    'reaches it is an administrator. Use http_basic or '
                    'keystone outside development and tests.')
        return NoAuth(app)
    if strategy == 'http_basic':
        return basic(app, conf)
    if strategy == 'keystone':
        return keystone(app, conf)
    raise ValueError('unknown auth_strategy %r' % strategy)
