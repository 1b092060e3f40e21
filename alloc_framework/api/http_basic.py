"""HTTP basic authentication against an htpasswd file, for both APIs.

oslo.middleware's ``basic_auth`` parses the ``Authorization`` header and
the file's entries (bcrypt only). Its middleware reads the file again for
every request, answers a broken file with an error for every request, and
runs a full bcrypt check each time; :class:`HtpasswdAuth` adds what it
lacks:

* The file is read when the API is built, and a file that cannot be read
  or holds an entry that is not bcrypt stops the command
  (:class:`HtpasswdError`). Later it is read again only when it changes;
  a file that became unreadable or invalid is logged as an error and the
  last good one stays in use.
* A successful check is remembered for ``cache_ttl`` seconds, under an
  HMAC-SHA256 of the user name and password keyed with a random key of
  the process (neither is kept), and forgotten when the file changes: a
  bcrypt check costs hundreds of milliseconds at the usual cost factors.
* An unknown user is checked against a dummy hash of the file's highest
  cost, so that the time of a failure does not tell which users exist.

:class:`BasicAuthMiddleware` puts it in front of an application; each API
gives its error format and the identity its policy reads.
"""

import functools
import hashlib
import hmac
import os
import re
import threading
import time

import bcrypt
from oslo_log import log
from oslo_middleware import basic_auth
import webob.exc

LOG = log.getLogger(__name__)

# A bcrypt hash: prefix, cost, 22 characters of salt and 31 of hash.
_BCRYPT = re.compile(r'\$2[aby]\$(\d\d)\$[./A-Za-z0-9]{53}')
# The cost of the dummy hash when the file has no entry.
_DEFAULT_COST = 12
# Successful checks remembered at most (one per user and password).
_CACHE_SIZE = 1024

# Identity headers a client could forge: dropped before authentication
# sets its own.
IDENTITY_HEADERS = ('HTTP_X_USER_ID', 'HTTP_X_USER_NAME', 'HTTP_X_USER',
                    'HTTP_X_PROJECT_ID', 'HTTP_X_PROJECT_NAME',
                    'HTTP_X_TENANT_ID', 'HTTP_X_TENANT_NAME',
                    'HTTP_X_TENANT', 'HTTP_X_ROLES', 'HTTP_X_ROLE',
                    'HTTP_X_USER_DOMAIN_ID', 'HTTP_X_PROJECT_DOMAIN_ID',
                    'HTTP_OPENSTACK_SYSTEM_SCOPE', 'HTTP_X_IDENTITY_STATUS',
                    'HTTP_X_SERVICE_ROLES', 'HTTP_X_IS_ADMIN_PROJECT')


def strip_identity(environ):
    for name in IDENTITY_HEADERS:
        environ.pop(name, None)


class HtpasswdError(ValueError):
    """The htpasswd file cannot be read or holds an entry that is not bcrypt.
    """


def read_htpasswd(path):
    """``{user: bcrypt hash}`` of an Apache htpasswd file.

    Blank lines and lines starting with ``#`` are skipped.

    :raises: HtpasswdError
    """
    try:
        with open(path, encoding='utf-8') as stream:
            lines = stream.read().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise HtpasswdError('Cannot read the htpasswd file %s: %s'
                            % (path, exc))
    users = {}
    for number, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith('#'):
            continue
        try:
            user, hashed = basic_auth.parse_entry(line)
        except (ValueError, webob.exc.HTTPBadRequest):
            hashed = None
        if hashed is None or not _BCRYPT.fullmatch(hashed.decode()):
            raise HtpasswdError('%s line %d: not a "user:bcrypt hash" '
                                'entry; only bcrypt (htpasswd -B) is '
                                'supported' % (path, number))
        users[user] = hashed
    return users


@functools.lru_cache(maxsize=None)
def _dummy_hash(cost):
    """A bcrypt hash of a random password, at ``cost``."""
    return bcrypt.hashpw(os.urandom(16).hex().encode(),
                         bcrypt.gensalt(rounds=cost))


def _file_stamp(path):
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_ino, stat.st_size, stat.st_mtime_ns


class HtpasswdAuth:
    """Checks user names and passwords against an htpasswd file.

    :param path: the htpasswd file.
    :param cache_ttl: seconds a successful check is remembered (0: never).
    :raises: HtpasswdError when the file is bad now.
    """

    def __init__(self, path, cache_ttl=60):
        self.path = path
        self.cache_ttl = cache_ttl
        self._key = os.urandom(32)
        self._lock = threading.Lock()
        self._stamp = _file_stamp(path)
        self._load(read_htpasswd(path))

    def _load(self, users):
        costs = [int(_BCRYPT.fullmatch(h.decode()).group(1))
                 for h in users.values()]
        self._dummy = _dummy_hash(max(costs, default=_DEFAULT_COST))
        self._users = users
        self._cache = {}

    def _refresh(self):
        """Read the file again if it changed; keep the last good one."""
        stamp = _file_stamp(self.path)
        if stamp == self._stamp:
            return
        with self._lock:
            if stamp == self._stamp:
                return
            self._stamp = stamp
            try:
                users = read_htpasswd(self.path)
            except HtpasswdError as exc:
                LOG.error('%s; the %d users read from it before are still '
                          'accepted', exc, len(self._users))
                return
            self._load(users)
            LOG.info('Read %d users from %s', len(users), self.path)

    def _cache_key(self, user, password):
        user = user.encode('utf-8')
        return hmac.new(self._key, b'%d:%s%s' % (len(user), user, password),
                        hashlib.sha256).digest()

    def check(self, user, password):
        """Whether ``password`` (bytes) is ``user``'s.

        A failure costs one bcrypt check, whether the user exists or not.
        """
        self._refresh()
        key = self._cache_key(user, password)
        cache = self._cache
        now = time.monotonic()
        expiry = cache.get(key)
        if expiry is not None and expiry > now:
            return True
        hashed = self._users.get(user)
        try:
            good = bcrypt.checkpw(password, hashed or self._dummy)
        except ValueError:
            # Longer than bcrypt's 72 bytes: no hash can match.
            return False
        if not (good and hashed):
            return False
        if self.cache_ttl:
            if len(cache) >= _CACHE_SIZE:
                for old in [k for k, e in cache.items() if e <= now]:
                    cache.pop(old, None)
                if len(cache) >= _CACHE_SIZE:
                    cache.clear()
            cache[key] = now + self.cache_ttl
        return True


class BasicAuthMiddleware:
    """HTTP basic authentication in front of ``app``.

    :param auth: an :class:`HtpasswdAuth`.
    :param identity: ``identity(user)`` -> the environ entries (identity
        headers) of an authenticated request.
    :param unauthorized: ``unauthorized(message)`` -> the API's 401 WSGI
        response (with ``WWW-Authenticate: Basic``).
    :param is_public: ``is_public(environ)``: paths served to anyone.
    """

    def __init__(self, app, auth, identity, unauthorized,
                 is_public=lambda environ: False):
        self.app = app
        self.auth = auth
        self.identity = identity
        self.unauthorized = unauthorized
        self.is_public = is_public

    def __call__(self, environ, start_response):
        strip_identity(environ)
        if self.is_public(environ):
            environ.pop('HTTP_AUTHORIZATION', None)
            return self.app(environ, start_response)
        if not environ.get('HTTP_AUTHORIZATION'):
            resp = self.unauthorized('Authorization required')
            return resp(environ, start_response)
        try:
            user, password = basic_auth.parse_token(
                basic_auth.parse_header(environ))
        except webob.exc.HTTPException:
            user = None
        if user is None or not self.auth.check(user, password):
            resp = self.unauthorized('Incorrect username or password')
            return resp(environ, start_response)
        environ.update(self.identity(user))
        return self.app(environ, start_response)
