"""The in-process client (``direct.PlacementDirect``)."""

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
