"""``alloc --os-cloud``: real clouds.yaml files against real servers.

Both APIs are served over HTTP; each test writes a clouds.yaml in a
temporary directory, points ``OS_CLIENT_CONFIG_FILE`` at it and runs
``alloc`` as a user would. Keystone is a small identity service issuing
a token with a service catalog, so that the endpoints come from the
catalog as they do in a real cloud.
"""

import json
import os

import fixtures
from keystoneauth1 import fixture as ks_fixture
import yaml

from tests import base
from tests.functional.cli import base as cli_base


def clear_environment(test):
    """Unset the variables of the command (OS_*, ALLOC_*) for ``test``.

    The test runner's own (OS_TEST_*, OS_STDOUT_CAPTURE...) stay.
    """
    for name in list(os.environ):
        if (name.startswith(('OS_', 'ALLOC_'))
                and not name.startswith(('OS_TEST', 'OS_STD', 'OS_LOG'))):
            test.useFixture(fixtures.EnvironmentVariable(name))


# Nothing listens there: a request sent to it fails to connect.
DEAD_URL = 'http://127.0.0.1:9'


class CloudsYamlTestCase(cli_base.BaremetalCLITestCase):
    """Both APIs served (noauth unless ``configure`` says otherwise)."""

    with_conductor = False

    def setUp(self):
        super().setUp()
        from alloc_framework.api.placement import deploy
        self.baremetal_url = os.environ['ALLOC_BAREMETAL_ENDPOINT']
        placement_conf = self.make_conf(
            placement_api={'auth_strategy': 'noauth'})
        self.placement_url = self.useFixture(base.Server(
            deploy.loadapp(placement_conf), name='placement-cli')).url
        clear_environment(self)
        self.directory = self.useFixture(fixtures.TempDir()).path
        self.clouds_file = os.path.join(self.directory, 'clouds.yaml')
        self.setenv('OS_CLIENT_CONFIG_FILE', self.clouds_file)
        # A secure.yaml of the user running the tests stays out.
        self.setenv('OS_CLIENT_SECURE_FILE',
                    os.path.join(self.directory, 'secure.yaml'))

    def setenv(self, name, value):
        self.useFixture(fixtures.EnvironmentVariable(name, value))

    def write_clouds(self, clouds, name='clouds.yaml'):
        with open(os.path.join(self.directory, name), 'w') as stream:
            yaml.safe_dump({'clouds': clouds}, stream)

    def local_cloud(self, **entries):
        """A noauth cloud naming both served endpoints."""
        cloud = {'auth_type': 'none',
                 'baremetal_endpoint_override': self.baremetal_url,
                 'placement_endpoint_override': self.placement_url}
        cloud.update(entries)
        return cloud


class TestNoauthCloud(CloudsYamlTestCase):

    with_conductor = True  # to create nodes

    def test_both_apis_through_the_named_cloud(self):
        self.write_clouds({'local': self.local_cloud(),
                           'other': self.local_cloud(
                               baremetal_endpoint_override=DEAD_URL)})
        node = self.alloc('--os-cloud', 'local', 'baremetal', 'node',
                          'create', '--driver', 'fake-hardware',
                          '--name', 'node-0')
        self.assertEqual('node-0', node['name'])
        classes = self.alloc('--os-cloud', 'local', 'resource', 'class',
                             'list')
        self.assertIn('VCPU', [c['name'] for c in classes])
        # The other cloud's endpoint is not served: it was not used above.
        err = self.alloc_fails('--os-cloud', 'other', 'baremetal', 'node',
                               'list')
        self.assertIn('Unable to connect to the baremetal API', err)

    def test_console_script(self):
        """The installed ``alloc``, in its own process, as a user runs it."""
        self.write_clouds({'local': self.local_cloud()})
        proc = self.run_script('--os-cloud', 'local', 'baremetal', 'node',
                               'create', '--driver', 'fake-hardware',
                               '--name', 'script-node', '-f', 'json')
        self.assertEqual(0, proc.returncode, proc.stderr)
        self.assertEqual('script-node', json.loads(proc.stdout)['name'])
        self.setenv('OS_CLOUD', 'local')
        proc = self.run_script('resource', 'class', 'list', '-f', 'json')
        self.assertEqual(0, proc.returncode, proc.stderr)
        self.assertIn('VCPU', [c['name'] for c in json.loads(proc.stdout)])
        proc = self.run_script('--os-cloud', 'nope', 'baremetal', 'node',
                               'list')
        self.assertEqual(1, proc.returncode)
        self.assertEqual('', proc.stdout)
        self.assertIn("Cloud 'nope' is not defined in %s"
                      % self.clouds_file, proc.stderr)
        self.assertNotIn('Traceback', proc.stderr)

    def test_os_cloud_environment_variable(self):
        self.write_clouds({'local': self.local_cloud()})
        self.setenv('OS_CLOUD', 'local')
        self.alloc('baremetal', 'node', 'create', '--driver',
                   'fake-hardware', '--name', 'node-1')
        nodes = self.alloc('baremetal', 'node', 'list')
        self.assertEqual(['node-1'], [n['name'] for n in nodes])

    def test_endpoint_with_version_suffix(self):
        self.write_clouds({'local': self.local_cloud(
            baremetal_endpoint_override=self.baremetal_url + '/v1/')})
        self.assertEqual([], self.alloc('--os-cloud', 'local', 'baremetal',
                                        'node', 'list'))

    def test_no_cloud_named_reads_no_file(self):
        # A clouds.yaml with one cloud is not used unless it is named:
        # without options alloc talks to the local server, here dead.
        self.write_clouds({'local': self.local_cloud()})
        self.setenv('ALLOC_BAREMETAL_ENDPOINT', DEAD_URL)
        err = self.alloc_fails('baremetal', 'node', 'list')
        self.assertIn('Unable to connect', err)


class TestPrecedence(CloudsYamlTestCase):
    """Command line over environment over the cloud's entries."""

    def test_endpoint(self):
        self.write_clouds({
            'dead': self.local_cloud(baremetal_endpoint_override=DEAD_URL),
            'live': self.local_cloud()})
        # The environment beats the cloud, both ways.
        self.setenv('ALLOC_BAREMETAL_ENDPOINT', self.baremetal_url)
        self.assertEqual([], self.alloc('--os-cloud', 'dead', 'baremetal',
                                        'node', 'list'))
        self.setenv('ALLOC_BAREMETAL_ENDPOINT', DEAD_URL)
        err = self.alloc_fails('--os-cloud', 'live', 'baremetal', 'node',
                               'list')
        self.assertIn('Unable to connect to the baremetal API', err)
        # The command line beats the environment.
        self.assertEqual([], self.alloc(
            '--os-cloud', 'live', '--os-baremetal-endpoint',
            self.baremetal_url, 'baremetal', 'node', 'list'))

    def test_microversion(self):
        # Allocations need bare metal API 1.52.
        self.write_clouds({'old': self.local_cloud(
            baremetal_api_version='1.50')})
        err = self.alloc_fails('--os-cloud', 'old', 'baremetal',
                               'allocation', 'list')
        self.assertIn('1.52 or greater (using 1.50)', err)
        self.setenv('OS_BAREMETAL_API_VERSION', '1.52')
        self.assertEqual([], self.alloc('--os-cloud', 'old', 'baremetal',
                                        'allocation', 'list'))
        err = self.alloc_fails('--os-cloud', 'old',
                               '--os-baremetal-api-version', '1.51',
                               'baremetal', 'allocation', 'list')
        self.assertIn('1.52 or greater (using 1.51)', err)

    def test_placement_microversion(self):
        # Traits need Placement 1.6.
        self.write_clouds({'old': self.local_cloud(
            placement_api_version='1.5')})
        err = self.alloc_fails('--os-cloud', 'old', 'trait', 'list')
        self.assertIn('1.6 or greater (using 1.5)', err)
        self.assertNotEqual([], self.alloc(
            '--os-cloud', 'old', '--os-placement-api-version', '1.6',
            'trait', 'list'))


class TestHTTPBasicCloud(CloudsYamlTestCase):

    def configure(self):
        self.use_http_basic()

    def basic_cloud(self, password):
        return self.local_cloud(auth_type='http_basic',
                                auth={'username': 'alice',
                                      'password': password})

    def test_credentials_from_the_cloud(self):
        self.write_clouds({'bm': self.basic_cloud('secret'),
                           'wrong': self.basic_cloud('guess')})
        self.assertEqual([], self.alloc('--os-cloud', 'bm', 'baremetal',
                                        'node', 'list'))
        err = self.alloc_fails('--os-cloud', 'wrong', 'baremetal', 'node',
                               'list')
        self.assertIn('(HTTP 401)', err)

    def test_console_script(self):
        """The installed ``alloc``, in its own process, as a user runs it."""
        self.write_clouds({'bm': self.basic_cloud('secret'),
                           'wrong': self.basic_cloud('guess')})
        proc = self.run_script('--os-cloud', 'bm', 'baremetal', 'node',
                               'list', '-f', 'json')
        self.assertEqual(0, proc.returncode, proc.stderr)
        self.assertEqual([], json.loads(proc.stdout))
        proc = self.run_script('--os-cloud', 'wrong', 'baremetal', 'node',
                               'list')
        self.assertEqual(1, proc.returncode)
        self.assertIn('(HTTP 401)', proc.stderr)
        self.assertNotIn('Traceback', proc.stderr)

    def test_password_in_secure_yaml(self):
        self.write_clouds({'bm': self.local_cloud(
            auth_type='http_basic', auth={'username': 'alice'})})
        self.write_clouds({'bm': {'auth': {'password': 'secret'}}},
                          name='secure.yaml')
        self.assertEqual([], self.alloc('--os-cloud', 'bm', 'baremetal',
                                        'node', 'list'))

    def test_options_and_environment_override_credentials(self):
        self.write_clouds({'wrong': self.basic_cloud('guess')})
        self.setenv('OS_PASSWORD', 'secret')
        self.assertEqual([], self.alloc('--os-cloud', 'wrong', 'baremetal',
                                        'node', 'list'))
        err = self.alloc_fails('--os-cloud', 'wrong', '--os-password',
                               'guess-again', 'baremetal', 'node', 'list')
        self.assertIn('(HTTP 401)', err)
        # The auth type too: none sends no credentials at all.
        self.setenv('OS_AUTH_TYPE', 'none')
        err = self.alloc_fails('--os-cloud', 'wrong', 'baremetal', 'node',
                               'list')
        self.assertIn('baremetal.auth_required', err)

    def test_cloud_without_password(self):
        self.write_clouds({'bm': self.local_cloud(
            auth_type='http_basic', auth={'username': 'alice'})})
        err = self.alloc_fails('--os-cloud', 'bm', 'baremetal', 'node',
                               'list')
        self.assertIn('http_basic needs', err)
        self.assertEqual(1, len(err.strip().splitlines()))


class TestBadConfiguration(CloudsYamlTestCase):
    """One line naming the file or the cloud, exit status 1."""

    def assertOneLine(self, err, *fragments):
        self.assertEqual(1, len(err.strip().splitlines()), err)
        for fragment in fragments:
            self.assertIn(fragment, err)

    def test_unknown_cloud(self):
        self.write_clouds({'local': self.local_cloud(),
                           'lab': self.local_cloud()})
        err = self.alloc_fails('--os-cloud', 'nope', 'baremetal', 'node',
                               'list')
        self.assertOneLine(err, "Cloud 'nope' is not defined in",
                           self.clouds_file, 'lab, local')

    def test_no_clouds_yaml(self):
        self.setenv('OS_CLIENT_CONFIG_FILE',
                    os.path.join(self.directory, 'missing.yaml'))
        # The search path may hold the user's own file; only a missing
        # file is checked when there is none.
        err = self.alloc_fails('--os-cloud', 'nope-%s' % id(self),
                               'baremetal', 'node', 'list')
        self.assertOneLine(err, "Cloud 'nope-")

    def test_malformed_yaml(self):
        with open(self.clouds_file, 'w') as stream:
            stream.write('clouds:\n  local:\n    auth_type: none\n'
                         '   bad: [\n')
        err = self.alloc_fails('--os-cloud', 'local', 'baremetal', 'node',
                               'list')
        self.assertOneLine(err, self.clouds_file, 'is not valid YAML',
                           'line')

    def test_malformed_json(self):
        path = os.path.join(self.directory, 'clouds.json')
        with open(path, 'w') as stream:
            stream.write('{"clouds": {')
        self.setenv('OS_CLIENT_CONFIG_FILE', path)
        err = self.alloc_fails('--os-cloud', 'local', 'baremetal', 'node',
                               'list')
        self.assertOneLine(err, path, 'is not valid JSON')

    def test_wrong_structure(self):
        for content, problem in (
                ('- a\n- b\n', 'not a mapping'),
                ('clouds: [local]\n', "'clouds' is not a mapping"),
                ('clouds:\n  local: none\n', "cloud 'local' is not a"),
                ('clouds:\n  local:\n    auth: secret\n',
                 "'auth' of cloud 'local'")):
            with open(self.clouds_file, 'w') as stream:
                stream.write(content)
            err = self.alloc_fails('--os-cloud', 'local', 'baremetal',
                                   'node', 'list')
            self.assertOneLine(err, self.clouds_file, problem)

    def test_malformed_secure_yaml(self):
        self.write_clouds({'local': self.local_cloud()})
        with open(os.path.join(self.directory, 'secure.yaml'), 'w') as f:
            f.write('clouds: {local: {auth: {password: "x}}}\n')
        err = self.alloc_fails('--os-cloud', 'local', 'baremetal', 'node',
                               'list')
        self.assertOneLine(err, 'secure.yaml', 'is not valid YAML')

    def test_unknown_region(self):
        self.write_clouds({'local': self.local_cloud(
            regions=['one', 'two'])})
        err = self.alloc_fails('--os-cloud', 'local', '--os-region-name',
                               'three', 'baremetal', 'node', 'list')
        self.assertOneLine(err, 'Region three is not a valid region',
                           'one,two')

    def test_help_works_whatever_the_file(self):
        with open(self.clouds_file, 'w') as stream:
            stream.write('clouds: [\n')
        result = self.alloc('--os-cloud', 'local', 'help', 'baremetal',
                            'node', 'list', fmt=None)
        self.assertIn('usage:', result.out)


class _Identity:
    """A minimal identity service: version discovery and password tokens.

    Issues the token ``admin`` (the administrator for Placement's noauth
    middleware, which the Placement server of these tests runs) with a
    catalog of the given services, and records each token request body.
    """

    def __init__(self, catalog):
        self.catalog = catalog
        self.requests = []

    def __call__(self, environ, start_response):
        path = environ.get('PATH_INFO', '').rstrip('/')
        method = environ['REQUEST_METHOD']
        href = 'http://%s/v3/' % environ['HTTP_HOST']
        if method == 'GET' and path == '/v3':
            return self._reply(start_response, '200 OK',
                               ks_fixture.V3Discovery(href))
        if method == 'POST' and path == '/v3/auth/tokens':
            length = int(environ.get('CONTENT_LENGTH') or 0)
            self.requests.append(json.loads(
                environ['wsgi.input'].read(length)))
            token = ks_fixture.V3Token(user_name='alice',
                                       project_name='ops')
            for service_type, endpoints in self.catalog.items():
                service = token.add_service(service_type)
                for interface, region, url in endpoints:
                    service.add_endpoint(interface, url, region=region)
            return self._reply(start_response, '201 Created', token,
                               [('X-Subject-Token', 'admin')])
        return self._reply(start_response, '404 Not Found', {})

    @staticmethod
    def _reply(start_response, status, body, headers=()):
        data = json.dumps(body).encode()
        start_response(status, [('Content-Type', 'application/json'),
                                ('Content-Length', str(len(data)))]
                       + list(headers))
        return [data]


class TestKeystoneCloud(CloudsYamlTestCase):
    """Credentials from the cloud, endpoints from the catalog."""

    def setUp(self):
        super().setUp()
        catalog = {}
        for service_type, url in (('baremetal', self.baremetal_url),
                                  ('placement', self.placement_url)):
            # Only the internal endpoint of RegionTwo is served.
            catalog[service_type] = [
                ('public', 'RegionOne', DEAD_URL),
                ('public', 'RegionTwo', DEAD_URL),
                ('internal', 'RegionOne', DEAD_URL),
                ('internal', 'RegionTwo', url)]
        self.identity = _Identity(catalog)
        self.auth_url = self.useFixture(base.Server(
            self.identity, name='identity', workers=2)).url + '/v3'

    def keystone_cloud(self, **entries):
        cloud = {'auth': {'auth_url': self.auth_url, 'username': 'alice',
                          'password': 'secret', 'project_name': 'ops',
                          'user_domain_name': 'Default',
                          'project_domain_name': 'Default'},
                 'region_name': 'RegionTwo', 'interface': 'internal'}
        cloud.update(entries)
        return cloud

    def test_catalog_endpoints(self):
        # No auth_type: a keystone password cloud, as for every client.
        self.write_clouds({'prod': self.keystone_cloud()})
        self.assertEqual([], self.alloc('--os-cloud', 'prod', 'baremetal',
                                        'node', 'list'))
        classes = self.alloc('--os-cloud', 'prod', 'resource', 'class',
                             'list')
        self.assertIn('VCPU', [c['name'] for c in classes])
        auth = self.identity.requests[0]['auth']
        self.assertEqual(['password'], auth['identity']['methods'])
        user = auth['identity']['password']['user']
        self.assertEqual({'name': 'alice', 'password': 'secret',
                          'domain': {'name': 'Default'}}, user)
        self.assertEqual({'name': 'ops', 'domain': {'name': 'Default'}},
                         auth['scope']['project'])

    def test_interface_option_overrides_the_cloud(self):
        self.write_clouds({'prod': self.keystone_cloud()})
        err = self.alloc_fails('--os-cloud', 'prod', '--os-interface',
                               'public', 'baremetal', 'node', 'list')
        self.assertIn('Unable to connect to the baremetal API', err)

    def test_region_option_picks_among_the_cloud_regions(self):
        # The first of ``regions`` is the default, as for every client.
        cloud = self.keystone_cloud(regions=['RegionTwo', 'RegionOne'])
        del cloud['region_name']
        self.write_clouds({'prod': cloud})
        self.assertEqual([], self.alloc('--os-cloud', 'prod', 'baremetal',
                                        'node', 'list'))
        err = self.alloc_fails('--os-cloud', 'prod', '--os-region-name',
                               'RegionOne', 'baremetal', 'node', 'list')
        self.assertIn('Unable to connect to the baremetal API', err)
        self.setenv('OS_REGION_NAME', 'RegionOne')
        self.alloc_fails('--os-cloud', 'prod', 'baremetal', 'node', 'list')
        self.assertEqual([], self.alloc(
            '--os-cloud', 'prod', '--os-region-name', 'RegionTwo',
            'baremetal', 'node', 'list'))

    def test_endpoint_override_beats_the_catalog(self):
        self.write_clouds({'prod': self.keystone_cloud(
            interface='public', baremetal_endpoint_override=self.baremetal_url
        )})
        self.assertEqual([], self.alloc('--os-cloud', 'prod', 'baremetal',
                                        'node', 'list'))
        err = self.alloc_fails('--os-cloud', 'prod', 'resource', 'class',
                               'list')
        self.assertIn('Unable to connect to the placement API', err)

    def test_project_from_the_environment(self):
        self.write_clouds({'prod': self.keystone_cloud()})
        self.setenv('OS_PROJECT_NAME', 'lab')
        self.alloc('--os-cloud', 'prod', 'baremetal', 'node', 'list')
        self.assertEqual(
            'lab', self.identity.requests[0]['auth']['scope']['project'][
                'name'])
