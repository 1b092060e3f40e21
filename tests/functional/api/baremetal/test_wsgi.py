"""The bare metal API's WSGI entry point, ``alloc_framework.wsgi.baremetal``.
"""

import logging
import os
from unittest import mock

import fixtures
import requests

from alloc_framework.common import exception
from alloc_framework import wsgi
from alloc_framework.wsgi import baremetal as wsgi_baremetal
from tests.functional.api.baremetal import base

PREPARE = 'alloc_framework.cmd.service_setup.prepare_service'


class WsgiEntryPointTestCase(base.BaremetalTestCase):
    dialect_neutral = True
    with_conductor = False

    def setUp(self):
        super().setUp()
        # Each test builds its own application.
        patcher = mock.patch.object(wsgi_baremetal, '_APP', None)
        patcher.start()
        self.addCleanup(patcher.stop)

    def test_config_file_from_environment(self):
        path = os.path.join(self.state_path, 'alloc.conf')
        self.useFixture(fixtures.EnvironmentVariable(
            wsgi.CONFIG_FILE_ENV, path))
        with mock.patch(PREPARE, return_value=self.conf) as prep:
            app = wsgi_baremetal.init_application()
            self.assertIs(app, wsgi_baremetal.init_application())
        prep.assert_called_once_with([], default_config_files=[path])

    def test_application_serves_requests(self):
        self.useFixture(fixtures.EnvironmentVariable(wsgi.CONFIG_FILE_ENV))
        logger = self.useFixture(fixtures.FakeLogger(level=logging.WARNING))
        with mock.patch(PREPARE, return_value=self.conf):
            server = self.useFixture(
                base.base.Server(wsgi_baremetal.application))
            resp = requests.get(server.url + '/', timeout=30)
            self.assertEqual(200, resp.status_code)
            self.assertEqual('v1', resp.json()['versions'][0]['id'])
            # The database of the configuration.
            resp = requests.get(server.url + '/v1/nodes', timeout=30)
            self.assertEqual(200, resp.status_code, resp.text)
            self.assertEqual([], resp.json()['nodes'])
            self.assertEqual(200, requests.get(server.url + '/healthcheck',
                                               timeout=30).status_code)
        # No conductor runs in a WSGI server.
        self.assertIn('rpc_transport is "local" but no conductor runs in '
                      'a WSGI server', logger.output)

    def test_transport_checked_when_loading(self):
        self.config(rpc_transport='nosuch')
        with mock.patch(PREPARE, return_value=self.conf):
            self.assertRaises(exception.DriverLoadError,
                              wsgi_baremetal.init_application)
        self.config(rpc_transport='oslo', rpc_failover_timeout=60,
                    rpc_response_timeout=30)
        with mock.patch(PREPARE, return_value=self.conf):
            exc = self.assertRaises(ValueError,
                                    wsgi_baremetal.init_application)
        self.assertIn('rpc_failover_timeout', str(exc))
        self.assertIsNone(wsgi_baremetal._APP)
