"""The ipmi interfaces' checks that need no BMC: driver_info, settings,
the hardware type, and errors that never carry the password."""

import fixtures
from pyghmi import exceptions as pyghmi_exc

from alloc_framework.common import exception
from alloc_framework.conf import hardware as hardware_conf
from alloc_framework.drivers import driver_factory
from alloc_framework.drivers.modules.ipmi import common
from alloc_framework.drivers.modules.ipmi import firmware
from alloc_framework.drivers.modules.ipmi import management
from alloc_framework.drivers.modules.ipmi import power
from alloc_framework.objects import baremetal as objects
from tests import base


class _Task:
    def __init__(self, **driver_info):
        self.node = objects.Node(uuid='1be26c0b-03f2-4d2e-ae87-c02d7f33c123',
                                 driver='ipmi', driver_info=driver_info,
                                 driver_internal_info={})


class DriverInfoTestCase(base.TestCase):

    def test_defaults(self):
        bmc = common.parse_driver_info(_Task(ipmi_address='10.0.0.9').node)
        self.assertEqual(('10.0.0.9', 623, '', ''),
                         (bmc.address, bmc.port, bmc.username, bmc.password))
        self.assertEqual('10.0.0.9:623', str(bmc))

    def test_all_keys_and_port_as_text(self):
        bmc = common.parse_driver_info(_Task(
            ipmi_address='bmc-1.example', ipmi_port='6230',
            ipmi_username='admin', ipmi_password='pw').node)
        self.assertEqual(('bmc-1.example', 6230, 'admin', 'pw'),
                         (bmc.address, bmc.port, bmc.username, bmc.password))
        self.assertNotIn('pw', repr(bmc))

    def test_errors_name_the_key(self):
        for info, exc_class, key in (
                ({}, exception.MissingParameterValue, 'ipmi_address'),
                ({'ipmi_address': ''}, exception.MissingParameterValue,
                 'ipmi_address'),
                ({'ipmi_address': 'a b'}, exception.InvalidParameterValue,
                 'ipmi_address'),
                ({'ipmi_address': 'h', 'ipmi_port': 0},
                 exception.InvalidParameterValue, 'ipmi_port'),
                ({'ipmi_address': 'h', 'ipmi_port': 70000},
                 exception.InvalidParameterValue, 'ipmi_port'),
                ({'ipmi_address': 'h', 'ipmi_port': [623]},
                 exception.InvalidParameterValue, 'ipmi_port'),
                ({'ipmi_address': 'h', 'ipmi_username': 'u' * 17},
                 exception.InvalidParameterValue, 'ipmi_username'),
                ({'ipmi_address': 'h', 'ipmi_password': 'p' * 21},
                 exception.InvalidParameterValue, 'ipmi_password'),
                ({'ipmi_address': 'h', 'ipmi_password': 1234},
                 exception.InvalidParameterValue, 'ipmi_password')):
            exc = self.assertRaises(exc_class, common.parse_driver_info,
                                    _Task(**info).node)
            self.assertIn(key, str(exc))
            self.assertEqual(400, exc.code)

    def test_validate_needs_no_bmc(self):
        task = _Task(ipmi_address='192.0.2.1')
        for iface in (power.IPMIPower(), management.IPMIManagement(),
                      firmware.IPMIFirmware()):
            iface.validate(task)
            self.assertEqual(set(common.PROPERTIES), set(
                iface.get_properties()))
        self.assertTrue(common.PROPERTIES['ipmi_address'].startswith(
            'Required.'))

    def test_refused_credentials_never_name_the_password(self):
        bmc = common.parse_driver_info(_Task(
            ipmi_address='h', ipmi_username='admin',
            ipmi_password='hunter2').node)
        failure, retry = common._explain(
            bmc, pyghmi_exc.IpmiException('Incorrect password provided'))
        self.assertFalse(retry)
        self.assertIn("refused the credentials of user 'admin'",
                      str(failure))
        self.assertNotIn('hunter2', str(failure))
        failure, retry = common._explain(bmc, pyghmi_exc.IpmiException(None))
        self.assertTrue(retry)
        self.assertIn('no answer from the BMC', str(failure))


class InputBeforeBMCTestCase(base.TestCase):
    """Bad arguments are refused before any packet is sent."""

    def setUp(self):
        super().setUp()
        hardware_conf.register_plugin_opts(self.conf)
        self.task = _Task(ipmi_address='192.0.2.1')

    def test_power_state(self):
        iface = power.IPMIPower()
        iface.conf = self.conf
        exc = self.assertRaises(exception.InvalidParameterValue,
                                iface.set_power_state, self.task, 'sleep')
        self.assertIn('sleep', str(exc))

    def test_boot_device(self):
        iface = management.IPMIManagement()
        iface.conf = self.conf
        self.assertEqual(['bios', 'cdrom', 'disk', 'pxe', 'safe'],
                         iface.get_supported_boot_devices(self.task))
        exc = self.assertRaises(exception.InvalidParameterValue,
                                iface.set_boot_device, self.task, 'floppy')
        self.assertIn('floppy', str(exc))

    def test_firmware_settings(self):
        iface = firmware.IPMIFirmware()
        iface.conf = self.conf
        for settings, expected in (
                ('http://x/y', 'settings must be a non-empty list'),
                ([], 'settings must be a non-empty list'),
                ([{'component': 'bmc', 'url': 'http://x/a'},
                  {'component': 'bmc', 'url': 'http://x/b'}],
                 'settings must be a list of one'),
                ([{'component': 'bmc', 'url': 'http://x/a', 'x': 1}],
                 'unknown key(s) x'),
                ([{'url': 'http://x/a'}], 'settings[0].component'),
                ([{'component': 'bmc'}], 'settings[0].url'),
                ([{'component': 'bmc', 'url': 'file:///etc/passwd'}],
                 'settings[0].url'),
                ([{'component': 'bmc', 'url': 'https://u:p@x/a'}],
                 'must not carry credentials')):
            exc = self.assertRaises(exception.InvalidParameterValue,
                                    iface.update, self.task, settings)
            self.assertIn(expected, str(exc))


class HardwareTypeTestCase(base.TestCase):

    def test_loads_from_entry_points_with_its_options(self):
        self.config(enabled_hardware_types=['ipmi'],
                    enabled_power_interfaces=['ipmi'],
                    enabled_management_interfaces=['ipmi'],
                    enabled_firmware_interfaces=['ipmi'])
        factory = driver_factory.DriverFactory(self.conf)
        node = objects.Node(driver='ipmi', driver_info={})
        factory.check_and_update_node_interfaces(node)
        self.assertEqual(('ipmi', 'ipmi', 'ipmi', 'external', 'no-boot',
                          'no-bios'),
                         (node.power_interface, node.management_interface,
                          node.firmware_interface, node.deploy_interface,
                          node.boot_interface, node.bios_interface))
        driver = factory.build_driver(node)
        self.assertIsInstance(driver.power, power.IPMIPower)
        self.assertIs(self.conf, driver.power.conf)
        self.assertEqual(20.0, self.conf.ipmi.command_deadline)
        self.assertEqual(0, self.conf.ipmi.command_retries)
        self.assertEqual(set(common.PROPERTIES),
                         set(factory.get_properties('ipmi')))


class _FakeSession:
    def logout(self):
        pass


class _FakeClient:
    ipmi_session = _FakeSession()


class ConverseTestCase(base.TestCase):
    """How a conversation's outcomes reach the caller (no BMC needed)."""

    def setUp(self):
        super().setUp()
        hardware_conf.register_plugin_opts(self.conf)
        self.useFixture(fixtures.MonkeyPatch(
            'alloc_framework.drivers.modules.ipmi.common._open',
            lambda bmc: _FakeClient()))
        self.bmc = common.BMCInfo('192.0.2.7', 623, 'admin', 'hunter2')

    def test_answer_returned(self):
        self.assertEqual(42, common.converse(self.conf, self.bmc,
                                             lambda client: 42, 'asking'))

    def test_unexpected_error_becomes_ipmi_failure(self):
        def work(client):
            raise KeyError('data')
        exc = self.assertRaises(exception.IPMIFailure, common.converse,
                                self.conf, self.bmc, work, 'asking')
        self.assertEqual("IPMI BMC 192.0.2.7:623: unexpected error while "
                         "asking: KeyError: 'data'", str(exc))

    def test_domain_errors_pass_through(self):
        def work(client):
            raise exception.PowerStateFailure(pstate='power on')
        self.assertRaises(exception.PowerStateFailure, common.converse,
                          self.conf, self.bmc, work, 'asking')


class ConversationThreadsTestCase(base.TestCase):
    """A conversation stuck in the IPMI library never outlives its use."""

    def test_a_stuck_conversation_does_not_keep_the_process(self):
        # A child process whose only conversation never ends: the caller
        # gets its "no answer" at the deadline and the process then
        # exits at once, instead of waiting for the stuck thread.
        import subprocess
        import sys
        import textwrap
        code = textwrap.dedent('''
            import threading
            from oslo_config import cfg
            from alloc_framework.conf import hardware
            from alloc_framework.drivers.modules.ipmi import common
            from alloc_framework.common import exception

            class Session:
                def logout(self):
                    pass

            class Client:
                ipmi_session = Session()

            common._open = lambda bmc: Client()
            conf = cfg.ConfigOpts()
            hardware.register_plugin_opts(conf)
            conf([], project='alloc_framework')
            conf.set_override('command_deadline', 1.0, 'ipmi')
            conf.set_override('command_retries', 0, 'ipmi')
            forever = threading.Event()
            try:
                common.converse(conf, common.BMCInfo('192.0.2.8', 623,
                                                     '', ''),
                                lambda client: forever.wait(),
                                'waiting forever')
            except exception.IPMIFailure as exc:
                print(exc)
        ''')
        proc = subprocess.run([sys.executable, '-c', code],
                              capture_output=True, text=True, timeout=60)
        self.assertEqual(0, proc.returncode, proc.stderr)
        self.assertIn('no answer within 1.0 seconds while waiting forever',
                      proc.stdout)

    def test_results_and_errors_travel_back(self):
        pool = common._DaemonPool(2, 'test-pool')
        futures = [pool.submit(pow, 2, n) for n in range(5)]
        self.assertEqual([1, 2, 4, 8, 16], [f.result(5) for f in futures])
        failed = pool.submit(int, 'x')
        self.assertRaises(ValueError, failed.result, 5)
        self.assertLessEqual(len(pool._threads), 2)
        self.assertTrue(all(t.daemon for t in pool._threads))


class PyghmiLocksTestCase(base.TestCase):
    """pyghmi's two session registries share one reentrant lock.

    pyghmi 1.6 takes its keep-alive lock then its waiting lock to send,
    and the waiting lock then the keep-alive lock when a wait times out;
    two conversations doing both at once deadlocked every BMC
    conversation of the process.
    """

    def test_one_lock_for_both_registries(self):
        from pyghmi.ipmi.private import session
        common._mend_pyghmi()
        self.assertIs(session.KEEPALIVE_SESSIONS, session.WAITING_SESSIONS)

    def test_a_failed_session_has_its_reason_before_it_is_broken(self):
        # The log out marks the session broken, and the thread waiting
        # for the log in may look at it from then on: the reason must
        # be stored by then.
        from pyghmi.ipmi.private import session
        common._mend_pyghmi()
        common._mend_pyghmi()
        self.assertTrue(session.Session._mark_broken._reason_first)
        self.assertFalse(hasattr(
            session.Session._mark_broken.__closure__[0].cell_contents,
            '_reason_first'))
        failed = object.__new__(session.Session)
        failed.bmc, failed.userid, failed.password = '192.0.2.1', b'u', b'p'
        failed.port, failed.kgo = 623, None
        failed.broken, failed.socket, failed.logonwaiters = False, None, []
        failed.logging = True
        seen = []

        def logout(*args):
            seen.append(getattr(failed, 'errormsg', 'no reason yet'))
            failed.broken = True
        failed.logout = logout
        failed._mark_broken('Unauthorized name')
        self.assertEqual(['Unauthorized name'], seen)
        self.assertTrue(failed.broken)
        self.assertFalse(failed.logging)
        self.assertEqual('Unauthorized name', failed.errormsg)

    def test_the_two_orders_of_taking_cannot_deadlock(self):
        from pyghmi.ipmi.private import session
        from pyghmi.ipmi.private import util
        import threading
        common._mend_pyghmi()
        holding = threading.Event()
        release = threading.Event()
        done = []

        def send():
            # What send_payload does: keep-alive, then waiting.
            with util.protect(session.KEEPALIVE_SESSIONS):
                holding.set()
                release.wait(5)
                with util.protect(session.WAITING_SESSIONS):
                    done.append('send')

        def time_out():
            # What a timed-out wait does: waiting, then keep-alive.
            with util.protect(session.WAITING_SESSIONS):
                with util.protect(session.KEEPALIVE_SESSIONS):
                    done.append('timeout')

        first = threading.Thread(target=send, daemon=True)
        first.start()
        holding.wait(5)
        second = threading.Thread(target=time_out, daemon=True)
        second.start()
        release.set()
        first.join(10)
        second.join(10)
        self.assertEqual(['send', 'timeout'], done)
