"""The CLI's authentication options against a server that requires them.
"""

from tests.functional.cli import base


class TestHTTPBasic(base.BaremetalCLITestCase):
    with_conductor = False

    def configure(self):
        self.use_http_basic()

    def test_credentials_accepted(self):
        self.assertEqual([], self.alloc(
            '--os-auth-type', 'http_basic', '--os-username', 'alice',
            '--os-password', 'secret', 'baremetal', 'node', 'list'))

    def test_credentials_from_environment(self):
        self.useFixture(base.fixtures.EnvironmentVariable(
            'OS_AUTH_TYPE', 'http_basic'))
        self.useFixture(base.fixtures.EnvironmentVariable(
            'OS_USERNAME', 'alice'))
        self.useFixture(base.fixtures.EnvironmentVariable(
            'OS_PASSWORD', 'secret'))
        self.assertEqual([], self.alloc('baremetal', 'allocation', 'list'))

    def test_missing_or_wrong_credentials(self):
        err = self.alloc_fails('baremetal', 'node', 'list')
        self.assertIn('(HTTP 401)', err)
        self.assertIn('baremetal.auth_required', err)
        err = self.alloc_fails('--os-auth-type', 'http_basic',
                               '--os-username', 'alice', '--os-password',
                               'wrong', 'baremetal', 'node', 'list')
        self.assertIn('(HTTP 401)', err)
