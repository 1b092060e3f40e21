"""The bare metal API's WSGI entry point, ``alloc_framework.wsgi.baremetal``.
"""

import logging
from unittest import mock

import fixtures
import requests

from alloc_framework.common import exception
from alloc_framework import wsgi
from alloc_framework.wsgi import baremetal as wsgi_baremetal
from tests.functional.api.baremetal import base
from tests.functional.api import wsgi_entry

PREPARE = wsgi_entry.PREPARE


class WsgiEntryPointTestCase(wsgi_entry.WsgiEntryPointTests,
                             base.BaremetalTestCase):
    wsgi_module = wsgi_baremetal
    with_conductor = False

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
