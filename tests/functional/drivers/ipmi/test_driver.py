"""The ipmi interfaces called directly, from several threads, against
emulated BMCs: read-back, retries and concurrency."""

import concurrent.futures
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
        self.config(power_state_reads=4, group='ipmi')
        bmc = self.useFixture(fixture.BMC(stuck_power=True))
        task = _Task(bmc.driver_info())
        exc = self.assertRaises(exception.PowerStateFailure,
                                self.power.set_power_state, task,
                                states.POWER_ON)
        self.assertIn('accepted the command but still reports "power off" '
                      'after 4 reads', str(exc))

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
