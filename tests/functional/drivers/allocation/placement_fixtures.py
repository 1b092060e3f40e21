"""The ``placement`` allocation backend against each kind of Placement.

:class:`PlacementBackendFixture` sets ``[allocation]backend = placement``
and points ``[placement]`` at one of:

* ``in-process``: nothing else set, our Placement in this process on the
  test database (the default deployment);
* ``http``: our Placement application served over HTTP on 127.0.0.1
  (``tests.base.Server``), reached with keystoneauth1's ``admin_token``
  plugin;
* ``upstream``: upstream openstack-placement (a test requirement) served
  on 127.0.0.1 by a child process (``placement_upstream_server.py``, one
  per test process, emptied for each test) over its own SQLite database,
  with ``noauth2``;
* ``catalog``: our Placement served over HTTP as with ``http``, found
  through the service catalog of a token: ``[placement]`` names only a
  Keystone (:class:`CatalogKeystone`, served on 127.0.0.1) and a user,
  with keystoneauth1's ``v3password`` plugin.

Nodes the tests write straight to the database bypass the conductor's
mirroring, so the fixture patches the node factories to mirror what they
create (:meth:`PlacementBackendFixture.sync`), as the conductor does for
nodes created through the API.
"""

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile

import fixtures
from keystoneauth1 import fixture as ks_fixture
from keystoneauth1 import loading as ks_loading
import requests

from alloc_framework.api.placement import direct
from alloc_framework.conductor import manager as manager_mod
from alloc_framework.drivers.allocation import placement as placement_backend
from tests import base
from tests.functional.objects.baremetal import factories

# How the backend reaches Placement in the scenario tests.
MODES = ('in-process', 'http', 'upstream')
# Also 'catalog': our Placement over HTTP found through a Keystone
# service catalog. Only the finding differs from 'http', so the tests of
# that mode name it themselves rather than repeat every scenario.
ALL_MODES = MODES + ('catalog',)

_SERVER_SCRIPT = os.path.join(os.path.dirname(__file__),
                              'placement_upstream_server.py')


class _UpstreamServer:
    """One upstream Placement process per test process, started once.

    Starting it costs seconds (imports, schema); each test empties it
    instead (:class:`UpstreamPlacement`).
    """

    process = None
    url = None

    @classmethod
    def get(cls):
        if cls.process is None or cls.process.poll() is not None:
            cls._start()
        return cls.url

    @classmethod
    def _start(cls):
        tmp = tempfile.mkdtemp(prefix='alloc-upstream-placement-')
        atexit.register(shutil.rmtree, tmp, True)
        port = base.free_port()
        url = 'http://127.0.0.1:%d' % port
        log_path = os.path.join(tmp, 'placement.log')
        with open(log_path, 'wb') as log:
            process = subprocess.Popen(
                [sys.executable, _SERVER_SCRIPT, str(port),
                 os.path.join(tmp, 'placement.sqlite')],
                stdout=log, stderr=subprocess.STDOUT)
        atexit.register(cls._stop, process)

        def answers():
            if process.poll() is not None:
                with open(log_path) as out:
                    raise AssertionError('upstream Placement exited: %s'
                                         % out.read()[-2000:])
            try:
                return requests.get(url, timeout=2).status_code == 200
            except requests.ConnectionError:
                return False
        base.wait_for(answers, 'upstream Placement to answer', timeout=60,
                      interval=0.1)
        cls.process, cls.url = process, url

    @staticmethod
    def _stop(process):
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class UpstreamPlacement(fixtures.Fixture):
    """Upstream openstack-placement over HTTP on 127.0.0.1, noauth2.

    Empty when the test starts: every provider and allocation is
    deleted before and after it.
    """

    def _setUp(self):
        self.url = _UpstreamServer.get()
        self._empty()
        self.addCleanup(self._empty)

    def _empty(self):
        headers = {'x-auth-token': 'admin',
                   'OpenStack-API-Version': 'placement 1.36'}
        providers = requests.get(self.url + '/resource_providers',
                                 headers=headers, timeout=30).json()
        parents = {rp['uuid']: rp['parent_provider_uuid']
                   for rp in providers['resource_providers']}

        def depth(rp):
            count, parent = 0, parents.get(rp['uuid'])
            while parent:
                count, parent = count + 1, parents.get(parent)
            return count
        # Children first: a provider with children cannot be deleted.
        for rp in sorted(providers['resource_providers'], key=depth,
                         reverse=True):
            allocations = requests.get(
                self.url + '/resource_providers/%s/allocations' % rp['uuid'],
                headers=headers, timeout=30).json()['allocations']
            for consumer in allocations:
                requests.delete(self.url + '/allocations/%s' % consumer,
                                headers=headers, timeout=30)
            requests.delete(self.url + '/resource_providers/%s' % rp['uuid'],
                            headers=headers, timeout=30)


class CatalogKeystone(fixtures.Fixture):
    """A Keystone that issues one token, its catalog naming Placement.

    ``POST /v3/auth/tokens`` answers, whatever the credentials, a
    project-scoped token (keystoneauth1's ``fixture.V3Token``) whose id is
    ``admin`` (the token our Placement's noauth takes for the admin) and
    whose catalog has one ``placement`` service at ``placement_url``
    (public and internal). ``issued`` counts the tokens issued.

    It also validates tokens, for a keystonemiddleware pointed at it
    (``[keystone_authtoken]`` of :func:`configure_authtoken`):
    ``GET /v3/auth/tokens`` answers, for
    the ``X-Subject-Token`` of one of ``roles`` (``{token id: [role
    names]}``), a project-scoped token with those roles, else 404.
    """

    def __init__(self, placement_url, roles=None):
        super().__init__()
        self.placement_url = placement_url
        self.roles = dict(roles or {})
        self.issued = 0

    def _setUp(self):
        token = ks_fixture.V3Token()
        token.set_project_scope()
        service = token.add_service('placement')
        service.add_standard_endpoints(public=self.placement_url,
                                       internal=self.placement_url)
        body = json.dumps(token).encode('utf-8')

        def answer(start_response, status, document, headers=()):
            data = json.dumps(document).encode('utf-8')
            start_response(status, [
                ('Content-Type', 'application/json'),
                ('Content-Length', str(len(data)))] + list(headers))
            return [data]

        def app(environ, start_response):
            route = (environ['REQUEST_METHOD'], environ['PATH_INFO'])
            if route == ('GET', '/v3/auth/tokens'):
                subject = environ.get('HTTP_X_SUBJECT_TOKEN')
                if subject not in self.roles:
                    return answer(start_response, '404 Not Found', {
                        'error': {'code': 404, 'title': 'Not Found',
                                  'message': 'No such token.'}})
                checked = ks_fixture.V3Token(user_name='user-' + subject)
                checked.set_project_scope()
                for role in self.roles[subject]:
                    checked.add_role(name=role)
                return answer(start_response, '200 OK', checked,
                              [('X-Subject-Token', subject)])
            if route != ('POST', '/v3/auth/tokens'):
                start_response('404 Not Found', [('Content-Length', '0')])
                return [b'']
            self.issued += 1
            start_response('201 Created', [
                ('Content-Type', 'application/json'),
                ('Content-Length', str(len(body))),
                ('X-Subject-Token', 'admin')])
            return [body]
        self.url = self.useFixture(base.Server(app, 'keystone')).url


def configure_authtoken(test, keystone_url):
    """``[keystone_authtoken]`` of a service checking tokens with the
    Keystone at ``keystone_url`` (a :class:`CatalogKeystone`)."""
    from keystonemiddleware import auth_token
    for group, opts in auth_token.list_opts():
        test.config_fixture.register_opts(opts, group=group)
    group = 'keystone_authtoken'
    test.config_fixture.register_opts(
        ks_loading.get_auth_plugin_conf_options('admin_token'), group=group)
    test.config(www_authenticate_uri=keystone_url + '/v3',
                auth_type='admin_token', endpoint=keystone_url + '/v3',
                token='service', group=group)


def configure_catalog(test, keystone_url):
    """Find Placement in the catalog of a v3 password token."""
    group = 'placement'
    # Through the test's config fixture: they go with the test. auth_url
    # is required, and left registered it would fail the parsing of the
    # configuration of every later test of the process.
    test.config_fixture.register_opts(
        ks_loading.get_auth_plugin_conf_options('v3password'), group=group)
    test.config(auth_type='v3password', auth_url=keystone_url + '/v3',
                username='alloc', password='secret',
                user_domain_name='Default', project_name='service',
                project_domain_name='Default', group=group)


def configure_http(test, url):
    """Reach the Placement at ``url`` as a service would (admin token)."""
    group = 'placement'
    test.conf.register_opts(
        ks_loading.get_auth_plugin_conf_options('admin_token'), group=group)
    test.config(auth_type='admin_token', endpoint=url, token='admin',
                endpoint_override=url, group=group)


class PlacementBackendFixture(fixtures.Fixture):
    """``[allocation]backend = placement`` against one kind of Placement.

    :param test: the running ``tests.base.TestCase`` (configuration).
    :param mode: one of :data:`ALL_MODES`.
    """

    def __init__(self, test, mode):
        super().__init__()
        self.test = test
        self.mode = mode

    def _setUp(self):
        test = self.test
        test.config(backend='placement', group='allocation')
        if self.mode in ('http', 'catalog'):
            from oslo_policy import opts as policy_opts

            from alloc_framework.api.placement import deploy
            # The admin token has the admin role only; a reshape asks for
            # the service role under the secure-RBAC defaults (see
            # placement_upstream_server.py): the legacy defaults let the
            # admin reshape. Set before the application reads them.
            policy_opts.set_defaults(test.conf)
            test.config(enforce_new_defaults=False, group='oslo_policy')
            app = deploy.loadapp(test.conf, auth_strategy='noauth')
            server = self.useFixture(base.Server(app, 'placement'))
            if self.mode == 'http':
                configure_http(test, server.url)
            else:
                self.keystone = self.useFixture(CatalogKeystone(server.url))
                configure_catalog(test, self.keystone.url)
        elif self.mode == 'upstream':
            configure_http(test, self.useFixture(UpstreamPlacement()).url)
        elif self.mode != 'in-process':
            raise ValueError(self.mode)
        # What alloc-conductor and alloc-server do: hand the in-process
        # Placement client to every conductor (hence its backend) that
        # the test starts, whatever base class starts it.
        in_process = direct.InProcessPlacement(test.conf)
        self.in_process = in_process
        real_manager = manager_mod.ConductorManager

        def conductor_manager(host, conf, **kw):
            if kw.get('in_process_placement') is None:
                kw['in_process_placement'] = in_process
            return real_manager(host, conf, **kw)
        self.useFixture(fixtures.MonkeyPatch(
            'alloc_framework.conductor.manager.ConductorManager',
            conductor_manager))
        # A backend of the test's own, to mirror and to look at Placement.
        self.backend = placement_backend.PlacementBackend(test.conf)
        self.backend.in_process_placement = in_process
        self.client = self.backend.client
        real_create = factories.create_node

        def create_node(context=None, **kw):
            node = real_create(context, **kw)
            self.sync(node.uuid)
            return node
        self.useFixture(fixtures.MonkeyPatch(
            'tests.functional.objects.baremetal.factories.create_node',
            create_node))

    def sync(self, node_uuid):
        """Mirror a node written straight to the database."""
        from alloc_framework.common import context as af_context
        self.backend.sync_node(af_context.get_admin_context(), node_uuid)

    def claims(self):
        """{consumer UUID: provider UUID} of every mirrored provider."""
        found = {}
        for rp in self.client.list_providers(
                required=placement_backend.NODE_TRAIT):
            for consumer in self.client.provider_allocations(rp['uuid']):
                found[consumer] = rp['uuid']
        return found
