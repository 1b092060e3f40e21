"""The in-process client (``direct.PlacementDirect``, ``direct.adapter``)."""

from unittest import mock

from oslo_utils import uuidutils

from alloc_framework.api.placement import direct
from tests.functional.api.placement import base


class PlacementDirectTestCase(base.PlacementAppTestCase):

    def test_latest_microversion(self):
        with direct.PlacementDirect(self.conf,
                                    latest_microversion=True) as client:
            resp = client.get('/resource_classes')
            self.assertEqual(200, resp.status_code)
            self.assertEqual('placement 1.39',
                             resp.headers['openstack-api-version'])
            names = [rc['name'] for rc in resp.json()['resource_classes']]
            self.assertIn('VCPU', names)
            resp = client.put('/traits/CUSTOM_DIRECT')
            self.assertEqual(201, resp.status_code)
            resp = client.get('/traits?name=startswith:CUSTOM_')
            self.assertEqual(['CUSTOM_DIRECT'], resp.json()['traits'])
            resp = client.delete('/traits/CUSTOM_DIRECT')
            self.assertEqual(204, resp.status_code)

    def test_default_microversion_and_per_call_version(self):
        with direct.PlacementDirect(self.conf) as client:
            resp = client.get('/traits')
            # Traits need 1.6; without a version the minimum applies.
            self.assertEqual(404, resp.status_code)
            resp = client.get('/traits', microversion='1.6')
            self.assertEqual(200, resp.status_code)
            resp = client.post('/resource_classes',
                               json={'name': 'CUSTOM_X'},
                               microversion='1.2')
            self.assertEqual(201, resp.status_code)
            self.assertTrue(resp.headers['location'].endswith(
                '/resource_classes/CUSTOM_X'))

    def test_noauth_whatever_the_configuration(self):
        self.config(auth_strategy='keystone', group='placement_api')
        with direct.PlacementDirect(self.conf,
                                    latest_microversion=True) as client:
            self.assertEqual(200, client.get('/traits').status_code)

    def test_errors_do_not_raise(self):
        with direct.PlacementDirect(self.conf,
                                    latest_microversion=True) as client:
            resp = client.get('/resource_classes/CUSTOM_NONE')
            self.assertEqual(404, resp.status_code)
            self.assertEqual('placement.undefined_code',
                             resp.json()['errors'][0]['code'])


class InProcessAdapterTestCase(base.PlacementAppTestCase):
    """Plain requests skip the session and reach the application alike."""

    def setUp(self):
        super().setUp()
        self.adapter = direct.adapter(
            self.conf, {'OpenStack-API-Version': 'placement 1.36'})
        self.transport = self.adapter.session.session.get_adapter(direct.URL)
        app = self.transport._get_app()
        self.environs = []

        def spy(environ, start_response):
            self.environs.append(
                {k: v for k, v in environ.items() if k.isupper()})
            return app(environ, start_response)
        self.transport._app = spy

    def _both(self, url, method, **kwargs):
        """The answers of the short cut and of the session, and environs."""
        with mock.patch.object(self.adapter.session, 'request',
                               wraps=self.adapter.session.request) as sess:
            short = self.adapter.request(url, method, **kwargs)
            self.assertFalse(sess.called)
            # Any other argument goes through the session.
            full = self.adapter.request(url, method, connect_retries=0,
                                        **kwargs)
            self.assertTrue(sess.called)
        for environ in self.environs:
            # Transport matters of requests, meaningless in process.
            environ.pop('HTTP_ACCEPT_ENCODING', None)
            environ.pop('HTTP_CONNECTION', None)
        return short, full

    def test_same_request_as_the_session(self):
        short, full = self._both(
            '/resource_providers', 'POST',
            json={'name': 'direct rp'},
            headers={'OpenStack-API-Version': 'placement 1.20'})
        self.assertEqual(200, short.status_code)
        self.assertEqual(409, full.status_code)
        self.assertEqual('direct rp', short.json()['name'])
        self.assertEqual('placement 1.20',
                         short.headers['openstack-api-version'])
        self.assertEqual(self.environs[1], self.environs[0])
        self.assertEqual('application/json',
                         self.environs[0]['CONTENT_TYPE'])
        self.assertEqual('admin', self.environs[0]['HTTP_X_AUTH_TOKEN'])

    def test_query_parameters(self):
        short, full = self._both(
            '/resource_providers', 'GET',
            params={'name': 'a b,c', 'member_of': None})
        self.assertEqual(200, short.status_code)
        self.assertEqual(full.json(), short.json())
        self.assertEqual('name=a+b%2Cc', self.environs[0]['QUERY_STRING'])
        self.assertEqual(self.environs[1], self.environs[0])
        self.assertEqual(full.url, short.url)

    def test_errors_do_not_raise(self):
        short, full = self._both('/resource_providers/%s' % uuidutils
                                 .generate_uuid(), 'GET')
        self.assertEqual(404, short.status_code)
        self.assertEqual(full.json()['errors'][0]['code'],
                         short.json()['errors'][0]['code'])
        self.assertEqual(self.environs[1], self.environs[0])
