"""The in-process client of the Placement API: no HTTP, no server.

One keystoneauth1 ``Adapter`` over our Placement application, called in
this process on the same database, with noauth and the admin token. It
serves these callers, all through :func:`adapter`:

* the ``placement`` node allocation backend and the report client
  (``alloc_framework.placement_client.report``), when ``[placement]``
  names no remote Placement: the command that starts the service hands
  them an :class:`InProcessPlacement` (``drivers/`` never imports the
  API), which also gathers a provider tree's allocations straight from
  the database (:meth:`InProcessPlacement.tree_allocations`);
* tools and tests, through the context manager :class:`PlacementDirect`::

      with direct.PlacementDirect(conf, latest_microversion=True) as client:
          resp = client.get('/resource_classes')

The requests never leave the process: :class:`InProcessTransport`, a
``requests`` transport mounted on the adapter's own session, calls the
WSGI application in the calling thread, as a WSGI server's worker would.
Nothing is patched process-wide, so several clients (several apps, in
tests) never see one another, and one client is safe to share between
threads.
"""

import io
import json
import os
import sys
import threading
import urllib.parse

from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import session as ks_session
import requests
from requests import adapters as requests_adapters
from requests import structures

from alloc_framework.api.placement import deploy
from alloc_framework.api.placement.handlers import allocation as alloc_handler
from alloc_framework.api.placement import microversion
from alloc_framework.common import context as common_context
from alloc_framework.objects.placement import allocation as alloc_obj
from alloc_framework.objects.placement import attribute_cache

# The URL the adapter calls; never resolved: the session sends every
# request under it to the application.
URL = 'http://placement.in-process'
_SCHEME, _HOST = urllib.parse.urlsplit(URL)[:2]

# noauth's admin token: the caller is this process, the service itself,
# with the roles of a service user (as keystone flattens them): ``service``
# is what the secure-RBAC default of ``POST /reshaper`` asks for.
ADMIN_HEADERS = {'X-Auth-Token': 'admin',
                 'X-Roles': 'admin,member,reader,service'}


class InProcessTransport(requests_adapters.BaseAdapter):
    """A requests transport that calls a WSGI application directly.

    Thread-safe: the application is built once (lazily, by the first
    request) and every request runs in the calling thread.

    :param app_factory: builds the WSGI application (no argument).
    """

    def __init__(self, app_factory):
        super().__init__()
        self._factory = app_factory
        self._app = None
        self._lock = threading.Lock()

    def _get_app(self):
        with self._lock:
            if self._app is None:
                self._app = self._factory()
            return self._app

    def send(self, request, stream=False, timeout=None, verify=True,
             cert=None, proxies=None):
        url = urllib.parse.urlsplit(request.url)
        response = self.call(request.method, url.path, url.query,
                             request.body, request.headers.items(),
                             host=url.hostname, scheme=url.scheme)
        response.url = request.url
        response.request = request
        return response

    def call(self, method, path, query, body, headers, host=_HOST,
             scheme=_SCHEME):
        """The application's answer to one request, a ``requests.Response``.

        :param path: the path, quoted as in a URL.
        :param query: the query string, encoded.
        :param body: bytes, str or None.
        :param headers: (name, value) pairs.
        """
        body = body or b''
        if isinstance(body, str):
            body = body.encode('utf-8')
        environ = {
            'REQUEST_METHOD': method,
            'SCRIPT_NAME': '',
            'PATH_INFO': urllib.parse.unquote(path),
            'QUERY_STRING': query,
            'SERVER_NAME': host,
            'SERVER_PORT': '80',
            'SERVER_PROTOCOL': 'HTTP/1.1',
            'CONTENT_LENGTH': str(len(body)),
            'wsgi.version': (1, 0),
            'wsgi.url_scheme': scheme,
            'wsgi.input': io.BytesIO(body),
            'wsgi.errors': io.StringIO(),
            'wsgi.multithread': True,
            'wsgi.multiprocess': False,
            'wsgi.run_once': False,
        }
        for name, value in headers:
            key = name.upper().replace('-', '_')
            if key == 'CONTENT_TYPE':
                environ['CONTENT_TYPE'] = value
            elif key != 'CONTENT_LENGTH':
                environ['HTTP_' + key] = value
        started = {}

        def start_response(status, headers, exc_info=None):
            started['status'] = status
            started['headers'] = headers

        chunks = self._get_app()(environ, start_response)
        try:
            content = b''.join(chunks)
        finally:
            if hasattr(chunks, 'close'):
                chunks.close()
        response = requests.Response()
        response.status_code = int(started['status'].split(' ', 1)[0])
        response.reason = started['status'].partition(' ')[2]
        response.headers = structures.CaseInsensitiveDict(
            started['headers'])
        response._content = content
        response.encoding = 'utf-8'
        return response

    def close(self):
        pass


class InProcessAdapter(ks_adapter.Adapter):
    """The ``Adapter`` of :func:`adapter`: plain requests take a short cut.

    A request of a path with nothing but ``json``, ``params`` and
    ``headers`` (every request of the node allocation backend and the
    report client) goes straight to the transport with the headers the
    session would send; the session's work (proxy settings read from the
    environment, cookies, hooks, request logging), which costs about as
    much as a small request itself, is skipped. Any other request goes
    through the session as usual.

    :param transport: the :class:`InProcessTransport` mounted on the
        session.
    """

    _PLAIN = frozenset(('json', 'params', 'headers'))

    def __init__(self, session, transport, **kwargs):
        super().__init__(session, **kwargs)
        self._transport = transport
        # What keystoneauth and requests add to every request.
        self._defaults = dict(session.additional_headers)
        self._defaults.setdefault('User-Agent', '%s %s' % (
            os.path.basename(sys.argv[0] if sys.argv else ''),
            ks_session.DEFAULT_USER_AGENT))
        self._defaults.setdefault('Accept', '*/*')

    def request(self, url, method, **kwargs):
        if (not url.startswith('/') or '?' in url
                or not self._PLAIN.issuperset(kwargs)):
            return super().request(url, method, **kwargs)
        headers = {name.lower(): (name, value) for name, value
                   in (kwargs.get('headers') or {}).items()}
        body = None
        if kwargs.get('json') is not None:
            body = json.dumps(kwargs['json'], allow_nan=False)
            headers.setdefault('content-type',
                               ('Content-Type', 'application/json'))
        for name, value in self._defaults.items():
            headers.setdefault(name.lower(), (name, value))
        params = kwargs.get('params') or {}
        query = urllib.parse.urlencode(
            [(k, v) for k, v in params.items() if v is not None],
            doseq=True)
        response = self._transport.call(method, url, query, body,
                                        headers.values())
        response.url = URL + url + ('?' + query if query else '')
        return response


def adapter(conf, headers=None):
    """A keystoneauth1 ``Adapter`` to our Placement, in this process.

    The application is ``deploy.loadapp(conf)`` with noauth whatever
    ``[placement_api]`` configures, built on the first request. The
    adapter does not raise on HTTP errors (``raise_exc=False``).

    :param conf: the ConfigOpts the application is built with (database
        and policy).
    :param headers: headers sent with every request besides the admin
        token (an ``OpenStack-API-Version``, for example).
    """
    http = requests.Session()
    transport = InProcessTransport(
        lambda: deploy.loadapp(conf, auth_strategy='noauth'))
    http.mount(URL, transport)
    sess = ks_session.Session(
        auth=None, session=http,
        additional_headers=dict(ADMIN_HEADERS, **(headers or {})))
    return InProcessAdapter(sess, transport, service_type='placement',
                            endpoint_override=URL, raise_exc=False)


class InProcessPlacement:
    """Our Placement in this process, as a service hands it to its parts.

    Calling it returns an :func:`adapter` (so it stands wherever a
    callable ``(headers=None) -> Adapter`` is expected); its
    :meth:`tree_allocations` is the ``tree_allocations`` of the report
    client (``placement_client.report.ReportClient``) over such an
    adapter.

    :param conf: the ConfigOpts the application is built with (database
        and policy).
    """

    # What tree_allocations answers looks like GET /allocations/{uuid}
    # at the report client's microversion.
    _VERSION = microversion.extract_version(
        {microversion.HEADER: 'placement 1.36'})

    def __init__(self, conf):
        self.conf = conf
        self._attribute_cache = attribute_cache.AttributeCache()

    def __call__(self, headers=None):
        """A new :func:`adapter` sending ``headers`` with every request."""
        return adapter(self.conf, headers)

    def tree_allocations(self, root_uuid):
        """The allocations of every consumer of the tree of ``root_uuid``.

        What the report client's ``get_allocations_for_provider_tree``
        answers over HTTP (consumers with an allocation in the tree, each
        with all its allocations, sharing providers included, shaped as
        ``GET /allocations/{uuid}`` answers at 1.36), read in one
        database transaction of a constant number of queries however
        many providers and consumers there are.

        :returns: ``{consumer uuid: {'allocations': {rp uuid:
            {'generation': g, 'resources': {rc: n}}}, 'project_id',
            'user_id', 'consumer_generation'}}``; empty for an unknown
            provider.
        """
        context = common_context.get_admin_context()
        context.attribute_cache = self._attribute_cache
        found = alloc_obj.get_all_by_provider_tree(context, root_uuid)
        return {
            uuid: alloc_handler.serialize_consumer_allocations(
                consumer, allocations, self._VERSION)
            for uuid, (consumer, allocations) in found.items()}


class PlacementDirect:
    """A context manager giving an in-process :func:`adapter`.

    :param conf: the ConfigOpts the application is built with.
    :param latest_microversion: send ``OpenStack-API-Version: placement
        latest`` with every request unless the caller sets it.
    """

    def __init__(self, conf, latest_microversion=False):
        headers = ({'OpenStack-API-Version': 'placement latest'}
                   if latest_microversion else None)
        self.url = URL
        self.adapter = adapter(conf, headers)

    def __enter__(self):
        return self.adapter

    def __exit__(self, *exc_info):
        self.adapter.session.session.close()
