"""The redfish interfaces without a BMC: driver_info, steps, no sleeping."""

import http.server
import os
import subprocess
import sys
import threading
import types

import fixtures
import sushy
from sushy import connector as sushy_connector
from sushy import exceptions as sushy_exc

from alloc_framework.common import exception
from alloc_framework.conf import hardware as hardware_conf
from alloc_framework.drivers import base as drivers_base
from alloc_framework.drivers import deferred
from alloc_framework.drivers import driver_factory
from alloc_framework.drivers.modules.redfish import firmware
from alloc_framework.drivers.modules.redfish import management
from alloc_framework.drivers.modules.redfish import utils
from tests import base


class _Slept(BaseException):
    """Raised instead of sleeping; no ``except Exception`` swallows it."""


ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))


def _node(**info):
    return types.SimpleNamespace(uuid='node-1', driver_info=info)


class DriverInfoTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        hardware_conf.register_plugin_opts(self.conf)

    def parse(self, **info):
        return utils.parse_driver_info(_node(**info), self.conf)

    def test_defaults(self):
        self.assertEqual(
            {'address': 'https://bmc.example.org', 'system_id': None,
             'username': None, 'password': None, 'verify_ca': True,
             'auth_type': 'auto'},
            self.parse(redfish_address='bmc.example.org'))

    def test_all_keys(self):
        got = self.parse(redfish_address='http://10.0.0.1:8000/',
                         redfish_system_id='abc',
                         redfish_username='u', redfish_password='p',
                         redfish_verify_ca='false',
                         redfish_auth_type='basic')
        self.assertEqual('http://10.0.0.1:8000', got['address'])
        self.assertEqual('/redfish/v1/Systems/abc', got['system_id'])
        self.assertIs(False, got['verify_ca'])
        self.assertEqual('basic', got['auth_type'])
        self.assertEqual('/redfish/v1/Systems/1', self.parse(
            redfish_address='bmc',
            redfish_system_id='/redfish/v1/Systems/1/')['system_id'])

    def test_ca_bundle_path(self):
        self.assertEqual(self.state_path, self.parse(
            redfish_address='bmc',
            redfish_verify_ca=self.state_path)['verify_ca'])

    def test_missing_address(self):
        exc = self.assertRaises(exception.MissingParameterValue, self.parse,
                                redfish_username='u')
        self.assertIn('Missing redfish_address in driver_info of node '
                      'node-1', str(exc))

    def test_invalid_values_name_their_key(self):
        cases = [
            ('redfish_address', {'redfish_address': 'ftp://bmc'}),
            ('redfish_address', {'redfish_address': 'https://:80'}),
            ('redfish_address', {'redfish_address': 'https://bmc:99999'}),
            ('redfish_address', {'redfish_address': 'https://bmc/?a=b'}),
            ('redfish_address', {'redfish_address': 12}),
            ('redfish_system_id', {'redfish_address': 'bmc',
                                   'redfish_system_id': 'a/b'}),
            ('redfish_system_id', {'redfish_address': 'bmc',
                                   'redfish_system_id': 5}),
            ('redfish_verify_ca', {'redfish_address': 'bmc',
                                   'redfish_verify_ca': '/no/such/file'}),
            ('redfish_auth_type', {'redfish_address': 'bmc',
                                   'redfish_auth_type': 'digest'}),
            ('redfish_username', {'redfish_address': 'bmc',
                                  'redfish_username': ['u']}),
            ('redfish_password', {'redfish_address': 'bmc',
                                  'redfish_password': 1234}),
        ]
        for key, info in cases:
            exc = self.assertRaises(exception.InvalidParameterValue,
                                    self.parse, **info)
            self.assertIn('Invalid %s in driver_info of node node-1' % key,
                          str(exc))

    def test_credentials_in_the_address_are_refused_unechoed(self):
        exc = self.assertRaises(exception.InvalidParameterValue, self.parse,
                                redfish_address='https://root:S3cr3t@bmc')
        self.assertNotIn('S3cr3t', str(exc))

    def test_properties_describe_every_key(self):
        self.config(enabled_hardware_types=['redfish'],
                    enabled_power_interfaces=['redfish'],
                    enabled_management_interfaces=['redfish'],
                    enabled_deploy_interfaces=['fake'])
        factory = driver_factory.DriverFactory(self.conf)
        props = factory.get_properties('redfish')
        self.assertLessEqual(set(utils.PROPERTIES), set(props))
        self.assertTrue(props['redfish_address'].startswith('Required.'))
        self.assertTrue(all(props[k].startswith('Optional.')
                            for k in utils.OPTIONAL_PROPERTIES))


class FirmwareStepTestCase(base.TestCase):

    def test_update_is_a_deferrable_clean_and_service_step(self):
        iface = firmware.RedfishFirmware()
        self.assertTrue(deferred.is_deferrable(iface.update))
        for step_type in ('clean', 'service'):
            steps = iface.get_steps(None, step_type)
            self.assertEqual(
                [{'interface': 'firmware', 'step': 'update', 'priority': 0,
                  'abortable': False, 'argsinfo': firmware.SETTINGS_ARGSINFO}],
                steps)
        self.assertTrue(
            firmware.SETTINGS_ARGSINFO['settings']['required'])
        self.assertIsInstance(iface, drivers_base.FirmwareInterface)

    def test_settings_checks_name_the_field(self):
        cases = [
            ([], 'settings must be a non-empty list'),
            (['bmc'], 'settings[0] must be an object'),
            ([{'component': 'bmc'}], 'settings[0].url must be an http'),
            ([{'component': 'nic', 'url': 'http://x/a.bin'}],
             'settings[0].component must be one of bmc, bios'),
            ([{'component': 'bmc', 'url': 'http://x/a.bin'},
              {'component': 'bios', 'url': 'file:///a.bin'}],
             'settings[1].url must be an http or https URL'),
            ([{'component': 'bios', 'url': 'https://u:Pw9@x/a.bin'}],
             'settings[0].url must not carry credentials'),
            ([{'component': 'bios', 'url': 'ftp://u:Pw9@x/a.bin'}],
             "settings[0].url must be an http or https URL (scheme 'ftp')"),
            (['https://u:Pw9@x/a.bin'], 'settings[0] must be an object'),
        ]
        for settings, message in cases:
            exc = self.assertRaises(exception.InvalidParameterValue,
                                    firmware.RedfishFirmware.check_settings,
                                    settings, firmware.COMPONENTS)
            self.assertIn(message, str(exc))
            self.assertNotIn('Pw9', str(exc))


class _System:
    """A sushy ComputerSystem as count_gpus sees it."""

    def __init__(self, processors):
        self._processors = processors

    @property
    def processors(self):
        if self._processors is None:
            raise sushy_exc.MissingAttributeError(
                attribute='Processors', resource='/redfish/v1/Systems/1')
        return types.SimpleNamespace(
            get_members=lambda: list(self._processors))


def _processor(kind, state=None):
    status = (None if state is None
              else types.SimpleNamespace(state=state))
    return types.SimpleNamespace(processor_type=kind, status=status)


class GPUCountTestCase(base.TestCase):

    def test_no_processors_collection_tells_nothing(self):
        self.assertIsNone(management.count_gpus(_System(None)))

    def test_gpus_present_or_without_status_count(self):
        self.assertEqual(2, management.count_gpus(_System([
            _processor(sushy.ProcessorType.CPU),
            _processor(sushy.ProcessorType.GPU),
            _processor(sushy.ProcessorType.GPU, sushy.State.ABSENT),
            _processor(sushy.ProcessorType.GPU, sushy.State.DISABLED),
            _processor(sushy.ProcessorType.ACCELERATOR),
            _processor(None)])))
        self.assertEqual(0, management.count_gpus(_System([])))


class _Unavailable(http.server.BaseHTTPRequestHandler):
    """Answers every request 503 and counts them."""

    count = 0

    def do_GET(self):
        type(self).count += 1
        self.send_response(503)
        self.send_header('Content-Length', '0')
        self.end_headers()

    def log_message(self, *args):
        pass


class NoSleepTestCase(base.TestCase):
    """sushy's retries would sleep in a worker: ours never do."""

    def setUp(self):
        super().setUp()

        def no_sleep(seconds):
            raise _Slept('sushy slept %s s' % seconds)
        self.useFixture(fixtures.MonkeyPatch(
            'sushy.connector.time.sleep', no_sleep))

    def test_connection_attempts_follow_at_once(self):
        conn = utils._Connector('http://127.0.0.1:%d' % base.free_port(),
                                attempts=3, default_request_timeout=2,
                                connect_timeout=2)
        calls = []
        real = sushy_connector.Connector._op

        def counting(*args, **kwargs):
            calls.append(1)
            return real(*args, **kwargs)
        self.useFixture(fixtures.MonkeyPatch(
            'sushy.connector.Connector._op', counting))
        self.assertRaises(sushy_exc.ConnectionError, conn.get,
                          '/redfish/v1/')
        self.assertEqual(3, len(calls))

    def test_server_errors_are_not_retried(self):
        _Unavailable.count = 0
        server = http.server.ThreadingHTTPServer(('127.0.0.1', 0),
                                                 _Unavailable)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        conn = utils._Connector(
            'http://127.0.0.1:%d' % server.server_address[1], attempts=1,
            default_request_timeout=2, connect_timeout=2)
        self.assertRaises(sushy_exc.ServerSideError, conn.get,
                          '/redfish/v1/Systems/1')
        self.assertEqual(1, _Unavailable.count)


class SampleConfigTestCase(base.TestCase):

    def test_sample_config_has_the_redfish_group(self):
        out = os.path.join(self.state_path, 'sample.conf')
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [ROOT, os.environ.get('PYTHONPATH', '')]))
        proc = subprocess.run(
            [sys.executable, '-m', 'oslo_config.generator',
             '--namespace', 'alloc_framework', '--output-file', out],
            capture_output=True, text=True, timeout=120, env=env)
        self.assertEqual(0, proc.returncode, proc.stderr)
        with open(out) as f:
            sample = f.read()
        self.assertIn('[redfish]', sample)
        self.assertIn('#power_state_poll_interval = 1.0', sample)
        self.assertIn('#connection_attempts = 1', sample)
