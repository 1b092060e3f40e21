"""``alloc-placement-api`` and the WSGI entry point."""

from unittest import mock

import fixtures
import requests

from alloc_framework.cmd import placement_api
from alloc_framework.db import migration
from alloc_framework import wsgi
from alloc_framework.wsgi import placement as wsgi_placement
from tests.functional.api.placement import base
from tests.functional.api import wsgi_entry


class PlacementApiCommandTestCase(base.PlacementAppTestCase):
    dialect_neutral = True

    def test_serves_over_http(self):
        self.config(host_ip='127.0.0.1', port=0, group='placement_api')
        server = placement_api.build_service(self.conf)
        server.start()
        self.addCleanup(server.stop)
        url = 'http://127.0.0.1:%d' % server.bound_port
        resp = requests.get(url + '/', timeout=30)
        self.assertEqual(200, resp.status_code)
        self.assertEqual('1.39', resp.json()['versions'][0]['max_version'])
        resp = requests.get(url + '/traits', timeout=30, headers={
            'x-auth-token': 'admin',
            'openstack-api-version': 'placement 1.6'})
        self.assertEqual(200, resp.status_code)
        self.assertIn('HW_CPU_X86_AVX', resp.json()['traits'])

    def test_embedded_database_is_migrated(self):
        self.config(port=0, group='placement_api')
        self.config(connection='sqlite:///%s/p.sqlite' % self.state_path,
                    group='database')
        with mock.patch.object(migration, 'upgrade') as upgrade:
            placement_api.build_service(self.conf)
        upgrade.assert_called_once_with('head')

    def test_server_database_is_not_migrated(self):
        self.config(port=0, group='placement_api')
        self.config(connection='postgresql://u@127.0.0.1/x',
                    group='database')
        with mock.patch.object(migration, 'upgrade') as upgrade:
            placement_api.build_service(self.conf)
        upgrade.assert_not_called()


class WsgiEntryPointTestCase(wsgi_entry.WsgiEntryPointTests,
                             base.PlacementAppTestCase):
    wsgi_module = wsgi_placement

    def test_application_serves_requests(self):
        self.useFixture(fixtures.EnvironmentVariable(wsgi.CONFIG_FILE_ENV))
        self.assertIsNone(wsgi.config_files())
        with mock.patch('alloc_framework.cmd.service_setup.'
                        'prepare_service', return_value=self.conf):
            server = self.useFixture(
                base.base.Server(wsgi_placement.application))
            resp = requests.get(server.url + '/', timeout=30)
        self.assertEqual(200, resp.status_code)
        self.assertEqual('v1.0', resp.json()['versions'][0]['id'])
