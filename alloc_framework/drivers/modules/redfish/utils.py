"""Redfish connections: ``driver_info`` parsing, sushy set-up, error wording.

A node's BMC is described by the ``redfish_*`` keys of its
``driver_info`` (:data:`PROPERTIES`, the names upstream ironic uses).
:func:`parse_driver_info` validates them without talking to the BMC.

:func:`get_system` gives the node's ``sushy`` ComputerSystem. The sushy
connection behind it is built so that a worker thread never sleeps on a
BMC: every request has a deadline (``[redfish]connection_timeout`` and
``read_timeout``), sushy's own retries of failed requests (which pause
between tries) are turned off, and ``[redfish]connection_attempts``
repeats a failed connection at once. Asynchronous BMC operations are
never awaited by sushy ("blocking" requests are refused): callers poll
them from later calls.

Connections are kept in a small least-recently-used cache keyed by BMC
address, user, credentials and TLS settings, so that a BMC with Redfish
sessions sees one login per conductor instead of one per call. Sushy
objects are safe to share between threads for the requests we make (a
``requests.Session`` per connection); the cache itself is guarded by a
lock. A connection that failed authentication or could not connect is
dropped, so the next call logs in again.

Credentials never leave ``driver_info``: they are not logged, not put in
exception messages and not put in deferred action arguments.
"""

import collections
import os
import threading
from urllib import parse as urlparse

from oslo_log import log
from oslo_utils import strutils
import sushy
from sushy import auth as sushy_auth
from sushy import connector as sushy_connector
from sushy import exceptions as sushy_exc

from alloc_framework.common import exception

LOG = log.getLogger(__name__)

REQUIRED_PROPERTIES = {
    'redfish_address': 'Required. The URL of the BMC\'s Redfish service, '
                       'https://<host>[:<port>] (or http://); a host name '
                       'alone means https. It may not contain credentials.',
}
OPTIONAL_PROPERTIES = {
    'redfish_system_id': 'Optional. The ComputerSystem of the node: its '
                         'path (/redfish/v1/Systems/<id>) or its id. '
                         'Needed when the BMC manages more than one '
                         'system.',
    'redfish_username': 'Optional. The user to log in to the BMC as.',
    'redfish_password': 'Optional. The password of redfish_username; '
                        'shown as ****** by the API.',
    'redfish_verify_ca': 'Optional. Whether to verify the BMC\'s TLS '
                         'certificate: true (the default), false, or the '
                         'path of a CA bundle file or directory.',
    'redfish_auth_type': 'Optional. basic, session or auto (a session '
                         'when the BMC offers it, else basic). Defaults '
                         'to [redfish]auth_type.',
}
PROPERTIES = dict(REQUIRED_PROPERTIES, **OPTIONAL_PROPERTIES)

AUTH_TYPES = ('basic', 'session', 'auto')
_SYSTEMS = '/redfish/v1/Systems/'


def _invalid(node, key, why):
    return exception.InvalidParameterValue(
        err='Invalid %s in driver_info of node %s: %s' % (key, node.uuid,
                                                          why))


def _parse_address(node, value):
    if not isinstance(value, str) or not value.strip():
        raise _invalid(node, 'redfish_address', 'expected a URL.')
    value = value.strip()
    if '://' not in value:
        value = 'https://' + value
    try:
        url = urlparse.urlsplit(value)
        _ = url.port  # raises for a bad port
    except ValueError as exc:
        raise _invalid(node, 'redfish_address', exc)
    if url.scheme not in ('http', 'https'):
        raise _invalid(node, 'redfish_address',
                       'the scheme must be http or https.')
    if not url.hostname:
        raise _invalid(node, 'redfish_address', 'no host name.')
    if url.username is not None or url.password is not None:
        raise _invalid(node, 'redfish_address',
                       'credentials belong in redfish_username and '
                       'redfish_password, not in the URL.')
    if url.query or url.fragment:
        raise _invalid(node, 'redfish_address',
                       'a query or fragment is not allowed.')
    # Only scheme and authority: sushy adds the /redfish/v1 root.
    return '%s://%s' % (url.scheme, url.netloc)


def _parse_system_id(node, value):
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip('/ '):
        raise _invalid(node, 'redfish_system_id',
                       'expected a path or an id.')
    value = value.strip()
    if not value.startswith('/'):
        if '/' in value:
            raise _invalid(node, 'redfish_system_id',
                           'an id may not contain "/".')
        value = _SYSTEMS + urlparse.quote(value)
    return value.rstrip('/')


def _parse_verify_ca(node, value):
    if value is None or isinstance(value, bool):
        return True if value is None else value
    if isinstance(value, str):
        try:
            return strutils.bool_from_string(value, strict=True)
        except ValueError:
            if os.path.exists(value):
                return value
    raise _invalid(node, 'redfish_verify_ca',
                   'expected true, false or the path of an existing CA '
                   'bundle file or directory.')


def parse_driver_info(node, conf):
    """Validate a node's ``redfish_*`` keys; talks to nothing.

    :returns: a dict with ``address``, ``system_id`` (path or None),
        ``username``, ``password``, ``verify_ca``, ``auth_type``.
    :raises: MissingParameterValue, InvalidParameterValue
    """
    info = node.driver_info or {}
    if not info.get('redfish_address'):
        raise exception.MissingParameterValue(
            err='Missing redfish_address in driver_info of node %s: the '
                'URL of the node\'s Redfish BMC is required.' % node.uuid)
    for key in ('redfish_username', 'redfish_password'):
        if info.get(key) is not None and not isinstance(info[key], str):
            raise _invalid(node, key, 'expected a string.')
    auth_type = info.get('redfish_auth_type') or conf.redfish.auth_type
    if auth_type not in AUTH_TYPES:
        raise _invalid(node, 'redfish_auth_type',
                       'expected one of %s.' % ', '.join(AUTH_TYPES))
    return {
        'address': _parse_address(node, info['redfish_address']),
        'system_id': _parse_system_id(node, info.get('redfish_system_id')),
        'username': info.get('redfish_username'),
        'password': info.get('redfish_password'),
        'verify_ca': _parse_verify_ca(node, info.get('redfish_verify_ca')),
        'auth_type': auth_type,
    }


class _Connector(sushy_connector.Connector):
    """sushy's connector without pauses.

    sushy retries failed connections and 5xx answers after sleeping, and
    waits for asynchronous operations when asked to block. Here each
    request is tried ``attempts`` times in a row, server errors are not
    retried and nothing blocks: the callers poll instead.
    """

    def __init__(self, url, attempts, **kwargs):
        # One try per call of the parent's loop: it pauses between tries.
        super().__init__(url, server_side_retries=1,
                         server_side_retries_delay=0, **kwargs)
        self._attempts = attempts

    def _op(self, method, path='', data=None, headers=None, blocking=False,
            timeout=None, server_side_retries_left=None, **kwargs):
        for attempt in range(1, self._attempts + 1):
            try:
                return super()._op(method, path, data=data, headers=headers,
                                   blocking=False, timeout=timeout,
                                   server_side_retries_left=0, **kwargs)
            except sushy_exc.ConnectionError:
                if attempt >= self._attempts:
                    raise


class _Cache:
    """Sushy root objects by connection key, least recently used out."""

    def __init__(self):
        self._lock = threading.Lock()
        self._items = collections.OrderedDict()

    def get(self, key, create, size):
        if size <= 0:
            return create()
        with self._lock:
            conn = self._items.get(key)
            if conn is not None:
                self._items.move_to_end(key)
                return conn
        # Created outside the lock: a slow BMC must not hold up the others.
        conn = create()
        with self._lock:
            existing = self._items.get(key)
            if existing is not None:
                conn = existing
            else:
                self._items[key] = conn
            while len(self._items) > size:
                self._items.popitem(last=False)
        return conn

    def drop(self, key):
        with self._lock:
            self._items.pop(key, None)

    def clear(self):
        with self._lock:
            self._items.clear()


_CACHE = _Cache()


def _key(info):
    return (info['address'], info['username'], info['password'],
            str(info['verify_ca']), info['auth_type'])


def _auth(info):
    cls = {'basic': sushy_auth.BasicAuth,
           'session': sushy_auth.SessionAuth,
           'auto': sushy_auth.SessionOrBasicAuth}[info['auth_type']]
    return cls(username=info['username'], password=info['password'])


def _connect(info, conf):
    opts = conf.redfish
    connector = _Connector(info['address'], opts.connection_attempts,
                           verify=info['verify_ca'],
                           default_request_timeout=opts.read_timeout,
                           connect_timeout=opts.connection_timeout)
    return sushy.Sushy(info['address'], verify=info['verify_ca'],
                       auth=_auth(info), connector=connector)


class Connection:
    """The node's BMC for the length of one driver call.

    Use as a context manager: sushy errors raised in the block become
    domain errors whose message names the node and the BMC (never the
    credentials); a connection that failed to authenticate or connect
    leaves the cache.
    """

    def __init__(self, node, conf, info=None):
        self.node = node
        self.conf = conf
        self.info = info or parse_driver_info(node, conf)
        self._root = None

    @property
    def root(self):
        """The sushy root service (connecting on first use)."""
        if self._root is None:
            self._root = _CACHE.get(
                _key(self.info), lambda: _connect(self.info, self.conf),
                self.conf.redfish.connection_cache_size)
        return self._root

    def system(self):
        """The node's ComputerSystem."""
        return self.root.get_system(self.info['system_id'])

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc is None or not isinstance(exc, sushy_exc.SushyError):
            return False
        if isinstance(exc, (sushy_exc.AccessError,
                            sushy_exc.ConnectionError)):
            _CACHE.drop(_key(self.info))
        raise translate(self.node, self.info, exc) from exc


def translate(node, info, exc):
    """The domain exception for a sushy error on ``node``'s BMC."""
    where = 'node %s at %s' % (node.uuid, info['address'])
    if isinstance(exc, sushy_exc.AccessError):
        return exception.RedfishAuthenticationError(
            error='Redfish authentication failed for %s: check '
                  'redfish_username/redfish_password (HTTP %s).'
                  % (where, getattr(exc, 'status_code', '?')))
    if isinstance(exc, sushy_exc.ConnectionError):
        return exception.RedfishConnectionError(
            error='Redfish BMC of %s did not answer: %s'
                  % (where, short(exc)))
    if isinstance(exc, sushy_exc.ResourceNotFoundError):
        return exception.RedfishError(
            error='Redfish resource not found for %s (check '
                  'redfish_system_id): %s' % (where, short(exc)))
    if isinstance(exc, sushy_exc.UnknownDefaultError):
        return exception.RedfishError(
            error='The Redfish BMC of %s manages several systems: set '
                  'redfish_system_id.' % where)
    return exception.RedfishError(
        error='Redfish request for %s failed: %s' % (where, short(exc)),
        status=getattr(exc, 'status_code', None))


def short(exc):
    """The message of a sushy error, cut to 400 characters.

    The error of a timed-out or refused connection is a long chain of
    reprs; its start says what happened.
    """
    text = str(getattr(exc, 'message', None) or exc)
    return text if len(text) < 400 else text[:397] + '...'


def reset_cache():
    """Forget every cached connection (tests, configuration changes)."""
    _CACHE.clear()
