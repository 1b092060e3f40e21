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

# noauth's admin token: the caller is this process, the service itself,
# so it also has the service role (POST /reshaper, for one, needs it
# under the new policy defaults).
ADMIN_HEADERS = {'X-Auth-Token': 'admin', 'X-Roles': 'admin,service'}


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
        body = request.body or b''
        if isinstance(body, str):
            body = body.encode('utf-8')
        environ = {
            'REQUEST_METHOD': request.method,
            'SCRIPT_NAME': '',
            'PATH_INFO': urllib.parse.unquote(url.path),
            'QUERY_STRING': url.query,
            'SERVER_NAME': url.hostname,
            'SERVER_PORT': '80',
            'SERVER_PROTOCOL': 'HTTP/1.1',
            'CONTENT_LENGTH': str(len(body)),
            'wsgi.version': (1, 0),
            'wsgi.url_scheme': url.scheme,
            'wsgi.input': io.BytesIO(body),
            'wsgi.errors': io.StringIO(),
            'wsgi.multithread': True,
            'wsgi.multiprocess': False,
            'wsgi.run_once': False,
        }
        for name, value in request.headers.items():
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
        response.url = request.url
        response.request = request
        response.encoding = 'utf-8'
        return response

    def close(self):
        pass


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
    http.mount(URL, InProcessTransport(
        lambda: deploy.loadapp(conf, auth_strategy='noauth')))
    sess = ks_session.Session(
        auth=None, session=http,
        additional_headers=dict(ADMIN_HEADERS, **(headers or {})))
    return ks_adapter.Adapter(sess, service_type='placement',
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
