"""Authentication middleware of the bare metal API.

``[DEFAULT]auth_strategy`` picks one:

* ``noauth``: no authentication; identity headers sent by the client are
  ignored and every request acts as an administrator.
* ``http_basic``: users and bcrypt password hashes in an Apache htpasswd
  file (``[DEFAULT]http_basic_auth_user_file``). A request without valid
  credentials gets 401 with ``WWW-Authenticate: Basic``.
* ``keystone``: keystonemiddleware's ``auth_token`` (``[keystone_authtoken]``
  options) validates tokens and sets the identity headers.

The version documents (``/`` and ``/v1``) are public in every strategy.
"""

import base64
import binascii

import bcrypt
from oslo_log import log

from alloc_framework.api.baremetal import errors
from alloc_framework.api.baremetal import handler

LOG = log.getLogger(__name__)

REALM = 'Baremetal API'

# Identity headers a client could forge; they are dropped before our own
# values are set.
_IDENTITY_HEADERS = ('HTTP_X_USER_ID', 'HTTP_X_USER_NAME', 'HTTP_X_USER',
                     'HTTP_X_PROJECT_ID', 'HTTP_X_PROJECT_NAME',
                     'HTTP_X_TENANT_ID', 'HTTP_X_TENANT_NAME',
                     'HTTP_X_ROLES', 'HTTP_X_ROLE',
                     'HTTP_X_USER_DOMAIN_ID', 'HTTP_X_PROJECT_DOMAIN_ID',
                     'HTTP_OPENSTACK_SYSTEM_SCOPE', 'HTTP_X_IDENTITY_STATUS',
                     'HTTP_X_SERVICE_ROLES', 'HTTP_X_IS_ADMIN_PROJECT')


def is_public(environ):
    return environ.get('PATH_INFO', '') in handler.PUBLIC_PATHS


def _strip_identity(environ):
    for name in _IDENTITY_HEADERS:
        environ.pop(name, None)


class NoAuth:
    """Every request is an administrator of the whole system."""

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        _strip_identity(environ)
        environ['HTTP_X_ROLES'] = 'admin,member,reader'
        environ['HTTP_OPENSTACK_SYSTEM_SCOPE'] = 'all'
        environ['HTTP_X_IDENTITY_STATUS'] = 'Confirmed'
        return self.app(environ, start_response)


def _unauthorized(message):
    return errors.response(401, message, errors.AUTH_REQUIRED,
                           {'WWW-Authenticate': 'Basic realm="%s"' % REALM})


def read_htpasswd(path):
    """Return {user: bcrypt hash} from an htpasswd file.

    :raises: ValueError when the file cannot be read or holds a
        non-bcrypt entry (only bcrypt is safe enough to accept).
    """
    users = {}
    try:
        with open(path, encoding='utf-8') as stream:
            lines = stream.read().splitlines()
    except OSError as exc:
        raise ValueError('cannot read %s: %s' % (path, exc))
    for number, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith('#'):
            continue
        user, sep, hashed = line.partition(':')
        if not sep or not hashed.startswith(('$2y$', '$2b$', '$2a$')):
            raise ValueError('%s line %d: only bcrypt entries are '
                             'supported' % (path, number))
        users[user] = hashed.encode('utf-8')
    return users


class HTTPBasic:
    """HTTP basic authentication against an htpasswd file."""

    def __init__(self, app, path):
        self.app = app
        self.path = path
        # Fail at start-up, not on the first request, when the file is bad.
        read_htpasswd(path)

    def _check(self, header):
        scheme, _sep, token = (header or '').partition(' ')
        if scheme.lower() != 'basic' or not token:
            return None
        try:
            decoded = base64.b64decode(token.strip(), validate=True)
            user, sep, password = decoded.decode('utf-8').partition(':')
        except (binascii.Error, UnicodeDecodeError):
            return None
        if not sep:
            return None
        # Re-read so that users can be added without a restart.
        hashed = read_htpasswd(self.path).get(user)
        if hashed is None:
            return None
        try:
            if bcrypt.checkpw(password.encode('utf-8'), hashed):
                return user
        except ValueError:
            LOG.warning('Invalid bcrypt hash for user %s in %s', user,
                        self.path)
        return None

    def __call__(self, environ, start_response):
        _strip_identity(environ)
        if is_public(environ):
            return self.app(environ, start_response)
        header = environ.get('HTTP_AUTHORIZATION')
        if not header:
            resp = _unauthorized('Authorization required')
            return resp(environ, start_response)
        user = self._check(header)
        if user is None:
            resp = _unauthorized('Incorrect username or password')
            return resp(environ, start_response)
        environ['HTTP_X_USER_ID'] = user
        environ['HTTP_X_USER_NAME'] = user
        environ['HTTP_X_ROLES'] = 'admin,member,reader'
        environ['HTTP_OPENSTACK_SYSTEM_SCOPE'] = 'all'
        environ['HTTP_X_IDENTITY_STATUS'] = 'Confirmed'
        return self.app(environ, start_response)


class PublicRoutes:
    """Send public paths around ``protected`` (the keystone middleware)."""

    def __init__(self, app, protected):
        self.app = app
        self.protected = protected

    def __call__(self, environ, start_response):
        if is_public(environ):
            _strip_identity(environ)
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
        return NoAuth(app)
    if strategy == 'http_basic':
        return HTTPBasic(app, conf.http_basic_auth_user_file)
    if strategy == 'keystone':
        return keystone(app, conf)
    raise ValueError('unknown auth_strategy %r' % strategy)
