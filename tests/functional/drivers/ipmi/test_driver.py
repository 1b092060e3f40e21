"""The ipmi interfaces called directly, from several threads, against
emulated BMCs: power changes awaited, retries and concurrency."""

import concurrent.futures
import threading
import time

import fixtures

from alloc_framework.common import exception
from alloc_framework.common import states
from alloc_framework.conf import hardware as hardware_conf
from alloc_framework.drivers.modules.ipmi import common
from alloc_framework.drivers.modules.ipmi import management
from alloc_framework.drivers.modules.ipmi import power
from alloc_framework.objects import baremetal as objects
from tests import base
from tests.functional.drivers.ipmi import base as ipmi_base
from tests.functional.drivers.ipmi import fixture


class _Task:
    def __init__(self, driver_info):
        self.node = objects.Node(uuid='0c9f6c8e-0b9f-4f0c-9a55-8f0e41f0a1d2',
                                 driver='ipmi', driver_info=driver_info,
                                 driver_internal_info={})
        self.stop_event = threading.Event()


class IPMIDriverTestCase(base.TestCase):
    dialect_neutral = True

    def setUp(self):
        super().setUp()
        hardware_conf.register_plugin_opts(self.conf)
        self.config(group='ipmi', **ipmi_base.IPMI_OPTIONS)
        self.power = power.IPMIPower()
        self.power.conf = self.conf
        self.management = management.IPMIManagement()
        self.management.conf = self.conf

    def test_reboot_ends_powered_on(self):
        bmc = self.useFixture(fixture.BMC())
        task = _Task(bmc.driver_info())
        for start in (states.POWER_OFF, states.POWER_ON):
            self.power.set_power_state(task, start)
            self.assertEqual(start, self.power.get_power_state(task))
            self.power.reboot(task)
            self.assertEqual(states.POWER_ON,
                             self.power.get_power_state(task))
            self.assertEqual('on', bmc.state()['power'])

    def test_power_change_the_bmc_does_not_make_fails(self):
        self.config(power_state_change_timeout=1, group='conductor')
        bmc = self.useFixture(fixture.BMC(stuck_power=True))
        task = _Task(bmc.driver_info())
        started = time.monotonic()
        exc = self.assertRaises(exception.PowerStateFailure,
                                self.power.set_power_state, task,
                                states.POWER_ON)
        elapsed = time.monotonic() - started
        self.assertEqual(
            'Node %s did not reach "power on" within 1s: its BMC '
            '127.0.0.1:%d still reports "power off".'
            % (task.node.uuid, bmc.port), str(exc))
        self.assertGreaterEqual(elapsed, 1)
        self.assertLess(elapsed, 5)

    def test_power_changes_that_show_after_seconds(self):
        # A BMC that reports each change 1.5 s after the command, as
        # real ones do: every change waits for it and succeeds.
        self.config(power_state_change_timeout=10, group='conductor')
        bmc = self.useFixture(fixture.BMC(power_delay=1.5))
        task = _Task(bmc.driver_info())
        for target, shown in ((states.POWER_ON, 'on'),
                              (states.POWER_OFF, 'off')):
            started = time.monotonic()
            self.power.set_power_state(task, target)
            self.assertGreaterEqual(time.monotonic() - started, 1.4)
            self.assertEqual(target, self.power.get_power_state(task))
            # The emulator writes its state file after it answers.
            base.wait_for(lambda: bmc.state()['power'] == shown
                          and bmc.state()['pending_power'] is None,
                          'the emulator to record power %s' % shown,
                          timeout=10, interval=0.05)

    def test_reboot_waits_for_off_then_on(self):
        self.config(power_state_change_timeout=10, group='conductor')
        bmc = self.useFixture(fixture.BMC(power_delay=1.0))
        task = _Task(bmc.driver_info())
        self.power.set_power_state(task, states.POWER_ON)
        started = time.monotonic()
        self.power.reboot(task)
        # Two changes of a second each: the power on was sent only once
        # the BMC reported the node off.
        self.assertGreaterEqual(time.monotonic() - started, 1.9)
        self.assertEqual(states.POWER_ON, self.power.get_power_state(task))
        base.wait_for(lambda: bmc.state()['power'] == 'on',
                      'the emulator to record power on', timeout=10,
                      interval=0.05)

    def test_the_call_timeout_bounds_the_wait(self):
        self.config(power_state_change_timeout=60, group='conductor')
        bmc = self.useFixture(fixture.BMC(power_delay=30))
        task = _Task(bmc.driver_info())
        started = time.monotonic()
        exc = self.assertRaises(exception.PowerStateFailure,
                                self.power.set_power_state, task,
                                states.POWER_ON, timeout=1)
        self.assertLess(time.monotonic() - started, 5)
        self.assertIn('did not reach "power on" within 1s', str(exc))
        self.assertEqual('on', bmc.state()['pending_power'])

    def test_a_stopping_conductor_ends_the_wait(self):
        self.config(power_state_change_timeout=60, group='conductor')
        bmc = self.useFixture(fixture.BMC(power_delay=30))
        task = _Task(bmc.driver_info())
        task.stop_event.set()
        started = time.monotonic()
        exc = self.assertRaises(exception.PowerStateFailure,
                                self.power.set_power_state, task,
                                states.POWER_ON)
        self.assertLess(time.monotonic() - started, 5)
        self.assertEqual(
            'Waiting for node %s to reach "power on" was interrupted: the '
            'conductor is stopping.' % task.node.uuid, str(exc))
        # The command itself went out.
        self.assertEqual('on', bmc.state()['pending_power'])

    def test_retries_a_silent_bmc_at_once(self):
        self.config(command_deadline=1.0, command_retries=1, group='ipmi')
        bmc = self.useFixture(fixture.BMC(silent=True))
        task = _Task(bmc.driver_info())
        started = time.monotonic()
        exc = self.assertRaises(exception.IPMIFailure,
                                self.power.get_power_state, task)
        elapsed = time.monotonic() - started
        self.assertIn('no answer within 1.0 seconds', str(exc))
        # Two attempts of one second, no pause between them.
        self.assertGreater(elapsed, 1.9)
        self.assertLess(elapsed, 5)

    def test_wrong_password_is_not_retried(self):
        self.config(command_retries=3, group='ipmi')
        bmc = self.useFixture(fixture.BMC())
        task = _Task(bmc.driver_info(ipmi_password='wrong'))
        logins = []
        real_open = common._open

        def counting_open(info):
            logins.append(str(info))
            return real_open(info)

        self.useFixture(fixtures.MonkeyPatch(
            'alloc_framework.drivers.modules.ipmi.common._open',
            counting_open))
        exc = self.assertRaises(exception.IPMIFailure,
                                self.power.get_power_state, task)
        self.assertIn('refused the credentials', str(exc))
        self.assertEqual(['127.0.0.1:%d' % bmc.port], logins)

    def test_concurrent_conversations_with_several_bmcs(self):
        bmcs = [self.useFixture(fixture.BMC()) for _ in range(3)]
        tasks = [_Task(bmc.driver_info()) for bmc in bmcs]
        self.power.set_power_state(tasks[1], states.POWER_ON)
        self.management.set_boot_device(tasks[2], 'cdrom', persistent=True)

        def work(i):
            task = tasks[i % 3]
            return (i % 3, self.power.get_power_state(task),
                    self.management.get_boot_device(task)['boot_device'])

        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            results = list(pool.map(work, range(24)))
        expected = {0: (states.POWER_OFF, None), 1: (states.POWER_ON, None),
                    2: (states.POWER_OFF, 'cdrom')}
        for index, power_state, device in results:
            self.assertEqual(expected[index], (power_state, device))


class PollSelectTestCase(base.TestCase):
    """pyghmi's IO thread waits with what the driver gives it: a select()
    that works on descriptors above select()'s own limit of 1023."""
    dialect_neutral = True

    def test_sockets_with_high_descriptors(self):
        import os
        import resource
        import select
        import socket
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft < 1200:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096),
                                                        hard))
            self.addCleanup(resource.setrlimit, resource.RLIMIT_NOFILE,
                            (soft, hard))
        fds = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
        for fd in fds:
            self.addCleanup(os.close, fd)
        receiver = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.addCleanup(receiver.close)
        receiver.bind(('127.0.0.1', 0))
        self.assertGreater(receiver.fileno(), 1023)
        self.assertRaises(ValueError, select.select, [receiver], [], [], 0)
        self.assertEqual(([], [], []), common._PollSelect.select(
            [receiver], (), (), 0.01))
        sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.addCleanup(sender.close)
        sender.sendto(b'x', receiver.getsockname())
        self.assertEqual(([receiver], [], []), common._PollSelect.select(
            [receiver], (), (), 5))

    def test_given_to_pyghmi(self):
        bmc = self.useFixture(fixture.BMC())
        ipmi_base.enable_ipmi(self)
        task = _Task(bmc.driver_info())
        from pyghmi.ipmi.private import session
        drv = power.IPMIPower()
        drv.conf = self.conf
        drv.get_power_state(task)
        self.assertIs(common._PollSelect, session.select)
        self.assertIs(session.KEEPALIVE_SESSIONS, session.WAITING_SESSIONS)
