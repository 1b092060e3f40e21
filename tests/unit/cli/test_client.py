"""The CLI's HTTP client: sessions per auth type, errors, versions."""

from keystoneauth1 import http_basic

from alloc_framework.cli import client
from tests import base
from tests.unit.cli import fakes


class TestSessions(base.TestCase):

    def test_none_has_no_auth(self):
        self.assertIsNone(client.make_session('none', {}).auth)

    def test_http_basic(self):
        session = client.make_session('http_basic', {'username': 'u',
                                                     'password': 'p'})
        self.assertIsInstance(session.auth, http_basic.HTTPBasicAuth)
        self.assertEqual({'Authorization': 'Basic dTpw'},
                         session.auth.get_headers(session))

    def test_http_basic_needs_credentials(self):
        exc = self.assertRaises(client.CommandError, client.make_session,
                                'http_basic', {'username': 'u'})
        self.assertIn('--os-username and --os-password', str(exc))

    def test_keystone_password_names_missing_options(self):
        exc = self.assertRaises(client.CommandError, client.make_session,
                                'password', {'username': 'u'})
        self.assertIn('--os-auth-url', str(exc))

    def test_keystone_password(self):
        session = client.make_session('password', {
            'auth_url': 'http://ks/v3', 'username': 'u', 'password': 'p',
            'project_name': 'p', 'user_domain_name': 'Default',
            'project_domain_name': 'Default', 'insecure': True})
        self.assertEqual('http://ks/v3', session.auth.auth_url)
        self.assertFalse(session.verify)

    def test_unknown_auth_type(self):
        exc = self.assertRaises(client.CommandError, client.make_session,
                                'magic', {})
        self.assertIn("Unknown --os-auth-type 'magic'", str(exc))


class TestErrors(base.TestCase):

    def test_placement_error_body(self):
        resp = fakes.FakeResponse(409, {'errors': [{
            'status': 409, 'title': 'Conflict', 'detail': 'busy',
            'code': 'placement.concurrent_update'}]},
            {'x-openstack-request-id': 'req-9'})
        err = client.error_from_response(resp)
        self.assertEqual((409, 'busy', 'placement.concurrent_update'),
                         (err.status, err.message, err.code))
        self.assertEqual('busy (HTTP 409) (code: placement.concurrent_update)'
                         ' (Request-ID: req-9)', str(err))

    def test_baremetal_error_as_dict(self):
        resp = fakes.FakeResponse(400, {'error_message': {
            'faultstring': 'bad', 'code': 'x.y'}})
        err = client.error_from_response(resp)
        self.assertEqual(('bad', 'x.y'), (err.message, err.code))

    def test_plain_text_error(self):
        err = client.error_from_response(fakes.FakeResponse(502,
                                                            'gateway down'))
        self.assertEqual('gateway down (HTTP 502)', str(err))


class TestShell(base.TestCase):

    def setUp(self):
        super().setUp()
        self.http = self.useFixture(fakes.FakeHTTP())

    def test_unknown_command(self):
        code, _out, _err = fakes.run(['baremetal', 'nonsense'])
        self.assertNotEqual(0, code)

    def test_command_help(self):
        code, out, _err = fakes.run(['help', 'baremetal', 'allocation',
                                     'create'])
        self.assertEqual(0, code)
        self.assertIn('--candidate-node', out)
        self.assertIn('--wait', out)

    def test_value_format(self):
        self.http.placement.add('GET', '/traits', 200,
                                {'traits': ['B', 'A']})
        code, out, err = fakes.run(['trait', 'list', '-f', 'value'])
        self.assertEqual(0, code, err)
        self.assertEqual('A\nB\n', out)

    def test_columns_option(self):
        self.http.baremetal.add('GET', '/v1/allocations/a', 200, {
            'uuid': 'a', 'state': 'active', 'name': 'n'})
        code, out, err = fakes.run(['baremetal', 'allocation', 'show', 'a',
                                    '-c', 'state', '-f', 'value'])
        self.assertEqual(0, code, err)
        self.assertEqual('active\n', out)
