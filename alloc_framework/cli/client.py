"""A small JSON HTTP client for the bare metal and Placement APIs.

Built on keystoneauth1 sessions and adapters so that the same code path
serves ``noauth``, HTTP basic and keystone deployments. The client is
stateless apart from the microversion it negotiates once per command
run: nothing about the server is cached between invocations.

Every 4xx/5xx answer becomes an :class:`HttpError` carrying the server's
message, status and (when the API sends one) its stable error code, so
that callers branch on the code and users read the server's own words.
"""

import json
import logging

from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import http_basic
from keystoneauth1 import loading
from keystoneauth1 import session as ks_session

LOG = logging.getLogger(__name__)

PLACEMENT = 'placement'
BAREMETAL = 'baremetal'

# The header each service reads its microversion from.
_VERSION_HEADERS = {
    PLACEMENT: 'OpenStack-API-Version',
    BAREMETAL: 'X-OpenStack-Ironic-API-Version',
}


# The bare metal API advertises its version range on every response.
_MIN_HEADER = 'X-OpenStack-Ironic-API-Minimum-Version'
_MAX_HEADER = 'X-OpenStack-Ironic-API-Maximum-Version'


class CommandError(Exception):
    """A user error detected on the client side (bad option, version)."""


class HttpError(Exception):
    """The server answered with a 4xx or 5xx status."""

    def __init__(self, status, message, code=None, request_id=None,
                 method=None, url=None):
        self.status = status
        self.message = message
        self.code = code
        self.request_id = request_id
        self.method = method
        self.url = url
        super().__init__(str(self))

    def __str__(self):
        text = '%s (HTTP %s)' % (self.message, self.status)
        if self.code:
            text += ' (code: %s)' % self.code
        if self.request_id:
            text += ' (Request-ID: %s)' % self.request_id
        return text


def version_tuple(version):
    """'1.14' -> (1, 14); used for microversion comparisons."""
    major, minor = str(version).split('.', 1)
    return int(major), int(minor)


def one_line(text):
    """``text`` with its runs of white space (newlines too) as one space."""
    return ' '.join(str(text).split())


def _placement_detail(detail):
    """The handler's own words from a Placement error ``detail``.

    The server renders errors with its web framework, which puts the
    generic explanation of the status first ("There was a conflict when
    trying to complete your request.") and the handler's message after a
    blank line; the user wants the latter.
    """
    parts = [p for p in str(detail).split('\n\n') if p.strip()]
    return ' '.join(parts[1:]) if len(parts) > 1 else detail


def _with_range(message, minimum, maximum):
    """``message`` followed by the version range of a 406."""
    message = message.rstrip()
    if not message.endswith('.'):
        message += '.'
    return '%s The supported version range is: [%s, %s].' % (
        message, minimum, maximum)


def _error_from_placement(body):
    errors = body.get('errors') if isinstance(body, dict) else None
    if not errors or not isinstance(errors[0], dict):
        return None, None
    first = errors[0]
    message = first.get('detail') or first.get('title')
    if message:
        message = _placement_detail(message)
        # A 406 for the version carries the server's range (as upstream).
        if first.get('min_version') and first.get('max_version'):
            message = _with_range(message, first['min_version'],
                                  first['max_version'])
    return message, first.get('code')


def _error_from_baremetal(body):
    if not isinstance(body, dict) or 'error_message' not in body:
        return None, None
    msg = body['error_message']
    # The bare metal API sends its fault as a JSON document encoded in a
    # string (a legacy of its WSME era); accept both shapes.
    if isinstance(msg, str):
        try:
            msg = json.loads(msg)
        except ValueError:
            return msg, None
    if isinstance(msg, dict):
        return (msg.get('faultstring') or msg.get('message')
                or json.dumps(msg)), msg.get('code')
    return str(msg), None


def error_from_response(resp, method=None, url=None):
    """Build the HttpError for a failed response (any body shape)."""
    message = code = None
    try:
        body = resp.json()
    except ValueError:
        body = None
    for parse in (_error_from_placement, _error_from_baremetal):
        message, code = parse(body)
        if message:
            break
    if not message:
        text = (resp.text or '').strip()
        message = text[:500] if text else resp.reason or 'Request failed'
    if (resp.status_code == 406 and 'range' not in message
            and resp.headers.get(_MIN_HEADER)):
        message = _with_range(message, resp.headers[_MIN_HEADER],
                              resp.headers.get(_MAX_HEADER))
    # One line: the CLI prints it after the command's own output.
    message = one_line(message)
    request_id = (resp.headers.get('x-openstack-request-id')
                  or resp.headers.get('openstack-request-id'))
    return HttpError(resp.status_code, message, code=code,
                     request_id=request_id, method=method, url=url)


class ServiceClient:
    """JSON requests to one service through a keystoneauth1 adapter.

    ``requested_version`` is either an explicit ``X.Y`` (sent as is; the
    server refuses it with 406 when out of range) or ``latest``, which is
    resolved to the newest version the server offers from its version
    document at ``/``.
    """

    def __init__(self, adapter, service, requested_version='latest',
                 path_prefix=''):
        self.adapter = adapter
        self.service = service
        self.requested_version = requested_version or 'latest'
        self.path_prefix = path_prefix
        self._version = None

    # -- microversions -------------------------------------------------

    @property
    def api_version(self):
        """The microversion this client sends, negotiated on first use."""
        if self._version is None:
            if self.requested_version == 'latest':
                self._version = self._negotiate()
            else:
                try:
                    version_tuple(self.requested_version)
                except ValueError:
                    raise CommandError(
                        'Invalid %s API version %r: expected X.Y or latest'
                        % (self.service, self.requested_version))
                self._version = self.requested_version
        return self._version

    def supports(self, min_version):
        """True when the negotiated version is at least ``min_version``."""
        version = self.api_version
        if version == 'latest':
            return True
        return version_tuple(version) >= version_tuple(min_version)

    def _negotiate(self):
        try:
            resp = self.adapter.get('/', raise_exc=False)
            doc = resp.json() if resp.status_code == 200 else {}
        except (ks_exc.ClientException, ValueError) as exc:
            LOG.debug('Version discovery failed: %s', exc)
            doc = {}
        if self.service == PLACEMENT:
            versions = doc.get('versions') or [{}]
            found = versions[0].get('max_version')
        else:
            default = doc.get('default_version') or {}
            found = default.get('version')
            if not found:
                versions = doc.get('versions') or [{}]
                found = versions[0].get('version')
        # Servers accept the literal "latest" too: fall back to it rather
        # than failing when discovery is unavailable.
        return found or 'latest'

    # -- requests ------------------------------------------------------

    def request(self, method, url, json=None, params=None):
        """Send a request; return the response or raise HttpError."""
        headers = {'Accept': 'application/json'}
        version = self.api_version
        header = _VERSION_HEADERS[self.service]
        headers[header] = ('placement %s' % version
                           if self.service == PLACEMENT else version)
        full_url = self.path_prefix + url
        try:
            resp = self.adapter.request(full_url, method, json=json,
                                        params=params, headers=headers,
                                        raise_exc=False)
        except ks_exc.ConnectFailure as exc:
            raise CommandError('Unable to connect to the %s API: %s'
                               % (self.service, exc))
        except ks_exc.ClientException as exc:
            raise CommandError('%s API request failed: %s'
                               % (self.service, exc))
        if resp.status_code >= 400:
            raise error_from_response(resp, method, full_url)
        return resp

    def _json(self, method, url, **kwargs):
        resp = self.request(method, url, **kwargs)
        if resp.status_code == 204 or not resp.content:
            return None
        try:
            return resp.json()
        except ValueError:
            return None

    def get(self, url, params=None):
        return self._json('GET', url, params=params)

    def post(self, url, body=None):
        return self._json('POST', url, json=body)

    def put(self, url, body=None):
        return self._json('PUT', url, json=body)

    def patch(self, url, body):
        return self._json('PATCH', url, json=body)

    def delete(self, url, params=None):
        return self._json('DELETE', url, params=params)


def make_session(auth_type, options):
    """A keystoneauth1 session for ``--os-auth-type``.

    ``none`` sends no credentials (the Placement token header is added by
    the Placement adapter), ``http_basic`` sends the user name and
    password, any other value names a keystoneauth1 plugin (``password``,
    ``v3password``, ``token`` ...) loaded from the ``--os-*`` options.
    """
    verify = not options.get('insecure')
    if options.get('cacert') and verify:
        verify = options['cacert']
    if auth_type in (None, '', 'none', 'noauth'):
        return ks_session.Session(verify=verify)
    if auth_type == 'http_basic':
        if not options.get('username') or options.get('password') is None:
            raise CommandError('Auth type http_basic needs '
                               '--os-username and --os-password (or '
                               'username and password in the cloud\'s '
                               'auth)')
        auth = http_basic.HTTPBasicAuth(username=options['username'],
                                        password=options['password'])
        return ks_session.Session(auth=auth, verify=verify)
    try:
        loader = loading.get_plugin_loader(auth_type)
    except ks_exc.NoMatchingPlugin:
        raise CommandError('Unknown --os-auth-type %r' % auth_type)
    accepted = {opt.dest for opt in loader.get_options()}
    kwargs = {k: v for k, v in options.items()
              if k in accepted and v is not None}
    try:
        auth = loader.load_from_options(**kwargs)
    except ks_exc.MissingRequiredOptions as exc:
        names = ', '.join('--os-%s' % o.dest.replace('_', '-')
                          for o in exc.options)
        raise CommandError('Auth type %s needs: %s' % (auth_type, names))
    return ks_session.Session(auth=auth, verify=verify)
