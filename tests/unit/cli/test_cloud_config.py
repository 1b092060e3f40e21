"""How the entries of a cloud map onto the ``alloc`` connection settings."""

import os

import fixtures
from keystoneauth1.identity import v3
import yaml

from alloc_framework.cli import client
from alloc_framework.cli import cloud_config
from alloc_framework.cli import shell
from tests import base


class TestResolve(base.TestCase):
    dialect_neutral = True

    def setUp(self):
        super().setUp()
        for name in list(os.environ):
            if (name.startswith(('OS_', 'ALLOC_')) and
                    not name.startswith(('OS_TEST', 'OS_STD', 'OS_LOG'))):
                self.useFixture(fixtures.EnvironmentVariable(name))
        directory = self.useFixture(fixtures.TempDir()).path
        self.path = os.path.join(directory, 'clouds.yaml')
        self.useFixture(fixtures.EnvironmentVariable(
            'OS_CLIENT_CONFIG_FILE', self.path))
        self.useFixture(fixtures.EnvironmentVariable(
            'OS_CLIENT_SECURE_FILE', os.path.join(directory, 'secure.yaml')))

    def resolve(self, cloud, *argv):
        with open(self.path, 'w') as stream:
            yaml.safe_dump({'clouds': {'c': cloud}}, stream)
        # The parser reads the environment when it is built.
        parser = shell.AllocApp().build_option_parser('', '1')
        options = parser.parse_args(['--os-cloud', 'c'] + list(argv))
        return cloud_config.resolve(options)

    def test_defaults_without_cloud(self):
        parser = shell.AllocApp().build_option_parser('', '1')
        settings = cloud_config.resolve(parser.parse_args([]))
        self.assertEqual('none', settings.auth_type)
        self.assertIsNone(settings.cloud)
        for service in settings.services.values():
            self.assertIsNone(service.endpoint)
            self.assertEqual('latest', service.api_version)
            self.assertEqual('public', service.interface)
            self.assertIsNone(service.region_name)
        self.assertEqual({'insecure': False, 'cacert': None},
                         settings.session_options())

    def test_cloud_without_auth_type_is_a_password_cloud(self):
        settings = self.resolve({'auth': {'auth_url': 'http://ks/v3'}})
        self.assertEqual('password', settings.auth_type)

    def test_auth_section_passes_through(self):
        settings = self.resolve({
            'auth_type': 'v3applicationcredential',
            'auth': {'auth_url': 'http://ks/v3',
                     'application_credential_id': 'ID',
                     'application_credential_secret': 'S'}})
        self.assertEqual('v3applicationcredential', settings.auth_type)
        self.assertEqual('ID', settings.auth['application_credential_id'])
        session = client.make_session(settings.auth_type,
                                      settings.session_options())
        self.assertIsInstance(session.auth, v3.ApplicationCredential)

    def test_token_option_overrides_the_cloud(self):
        settings = self.resolve({'auth_type': 'none',
                                 'auth': {'token': 'alice'}})
        self.assertEqual('alice', settings.auth['token'])
        settings = self.resolve({'auth_type': 'none',
                                 'auth': {'token': 'alice'}},
                                '--os-token', 'bob')
        self.assertEqual('bob', settings.auth['token'])

    def test_per_service_entries(self):
        settings = self.resolve({
            'auth_type': 'none', 'interface': 'internal',
            'region_name': 'R1', 'baremetal_interface': 'admin',
            'baremetal_endpoint_override': 'http://bm',
            'placement_endpoint': 'http://pl',
            'baremetal_api_version': '1.80',
            'placement_api_version': '1.39'})
        baremetal = settings.services['baremetal']
        placement = settings.services['placement']
        self.assertEqual(('http://bm', '1.80', 'admin', 'R1'),
                         (baremetal.endpoint, baremetal.api_version,
                          baremetal.interface, baremetal.region_name))
        self.assertEqual(('http://pl', '1.39', 'internal', 'R1'),
                         (placement.endpoint, placement.api_version,
                          placement.interface, placement.region_name))

    def test_interface_option_wins_over_per_service_entry(self):
        settings = self.resolve({'baremetal_interface': 'admin'},
                                '--os-interface', 'internal')
        self.assertEqual('internal',
                         settings.services['baremetal'].interface)

    def test_tls(self):
        self.assertEqual(
            {'insecure': True, 'cacert': None},
            self.resolve({'verify': False}).session_options())
        self.assertEqual(
            {'insecure': False, 'cacert': '/ca.pem'},
            self.resolve({'cacert': '/ca.pem'}).session_options())
        self.assertEqual(
            {'insecure': False, 'cacert': '/mine.pem'},
            self.resolve({'verify': False},
                         '--os-cacert', '/mine.pem').session_options())
        self.assertEqual(
            {'insecure': True, 'cacert': None},
            self.resolve({'cacert': '/ca.pem'},
                         '--insecure').session_options())

    def test_noauth_endpoint_serves_both_apis(self):
        settings = self.resolve({'auth_type': 'none',
                                 'auth': {'endpoint': 'http://proxy'}})
        self.assertEqual(
            ['http://proxy', 'http://proxy'],
            [s.endpoint for s in settings.services.values()])
