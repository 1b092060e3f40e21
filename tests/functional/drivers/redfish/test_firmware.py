"""Redfish firmware updates run as deferred actions against a real BMC.

The BMC is :mod:`.firmware_bmc` in its own process: SimpleUpdate with a
task monitor that answers 202 and ``Retry-After`` for a few polls, a BMC
that answers 503 for a while after its own update, versions that change.
The test drives the conductor's deferred action launcher as its periodic
would, and looks at the action after each run.
"""

import datetime
import json

from alloc_framework.conductor import task_manager
from alloc_framework.drivers import deferred
from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import base as obj_base
from alloc_framework.objects.baremetal import deferred_action as da
from tests import base as tests_base
from tests.functional.conductor import base
from tests.functional.drivers import redfish
from tests.functional.drivers.redfish import emulators

CALL = deferred.call_name('firmware', 'update')
BMC_IMAGE = 'http://images.example.org/bmc-2.1.0.bin'
BIOS_IMAGE = 'http://images.example.org/bios-2.00.bin'


class FirmwareUpdateTestCase(base.ConductorTestCase):
    # An emulated BMC: nothing here depends on the database.
    dialect_neutral = True

    bmc_options = {}
    redfish_options = {}

    def start_conductor(self, host):
        # The test runs the launcher itself.
        self.config(launcher_interval=0, group='deferred_actions')
        # Timeouts generous for a loaded machine: a BMC that stops
        # answering is a 503 here, not a silence.
        options = {'firmware_update_status_interval': 0,
                   'read_timeout': 10, 'connection_timeout': 10}
        options.update(self.redfish_options)
        redfish.enable_redfish(self, **options)
        return super().start_conductor(host)

    def setUp(self):
        super().setUp()
        self.bmc = self.useFixture(emulators.FirmwareBMC(**self.bmc_options))
        self.node = self.make_node(driver='redfish',
                                   driver_info=self.bmc.driver_info())
        self.launcher = self.manager.deferred_actions

    def update(self, settings):
        action = objects.DeferredAction.new(
            self.ctx, self.node.id, CALL, arguments={'settings': settings})
        action.create()
        return action

    def run_to_end(self, action, timeout=60):
        """Launch until the action ends; the action and what it went
        through (one row per run that changed it)."""
        seen = []

        def ended():
            self.launcher.launch(self.ctx)
            tests_base.wait_for(lambda: self.launcher.busy == 0,
                                'idle launcher')
            got = objects.DeferredAction.get_by_uuid(self.ctx, action.uuid)
            row = (got.state, json.dumps(got.arguments, sort_keys=True))
            if not seen or seen[-1] != row:
                seen.append(row)
            return got if got.state in (da.COMPLETED, da.FAILED) else None
        got = tests_base.wait_for(ended, 'action %s to end' % action.uuid,
                                  timeout=timeout, interval=0.1)
        return got, seen

    def components(self):
        with task_manager.acquire(
                self.ctx, self.node.id, shared=True,
                driver_factory=self.manager.driver_factory) as task:
            return {c['component']: c['current_version']
                    for c in task.driver.firmware.get_components(task)}

    def node_now(self):
        return objects.Node.get_by_id(self.ctx, self.node.id)


class TestFirmwareUpdate(FirmwareUpdateTestCase):

    bmc_options = {'task_polls': 1, 'bmc_reset': 1.0}

    def test_components_tell_their_device(self):
        with task_manager.acquire(
                self.ctx, self.node.id, shared=True,
                driver_factory=self.manager.driver_factory) as task:
            task.driver.firmware.cache_firmware_components(task)
        stored = {c.component: (c.vendor, c.model, c.serial_number)
                  for c in objects.FirmwareComponent.list_by_node_id(
                      self.ctx, self.node.id)}
        # The inventory member's Manufacturer; the Model and
        # SerialNumber of the Manager (BMC) and of the system (BIOS).
        self.assertEqual(
            {'bmc': ('Emulated BMC Vendor', 'Emulated BMC', 'SN-bmc'),
             'bios': ('Emulated BIOS Vendor', 'Emulated System',
                      'SN-fw-system')}, stored)

    def test_bmc_then_bios(self):
        self.assertEqual({'bmc': '1.0.0', 'bios': 'U30 v1.00'},
                         self.components())
        action = self.update([{'component': 'bmc', 'url': BMC_IMAGE},
                              {'component': 'bios', 'url': BIOS_IMAGE}])
        before = obj_base.utcnow()
        self.launcher.launch(self.ctx)
        tests_base.wait_for(lambda: self.launcher.busy == 0, 'idle launcher')
        first = objects.DeferredAction.get_by_uuid(self.ctx, action.uuid)
        self.assertEqual(da.RESCHEDULE, first.state, first.result)
        self.assertEqual('task', first.arguments['state']['step'])
        # The BMC's Retry-After (1 s), not the status interval (0), set
        # the next call (MariaDB keeps whole seconds).
        self.assertGreaterEqual(
            obj_base.to_db_value(first.start_after),
            before.replace(microsecond=0) + datetime.timedelta(seconds=1))
        got, seen = self.run_to_end(action)
        self.assertEqual(da.COMPLETED, got.state, got.result)

        steps = [json.loads(args).get('state', {}).get('step')
                 for state, args in seen if state == da.RESCHEDULE]
        # Each component: the task monitor is polled, then the BMC is
        # awaited after its reset, the node after its reboot.
        self.assertIn('bmc', steps)
        self.assertIn('reboot', steps)
        self.assertLess(steps.index('bmc'), steps.index('reboot'))
        self.assertGreaterEqual(got.reschedule_count, 4)
        for _state, args in seen:
            self.assertNotIn(emulators.PASSWORD, args)
            self.assertNotIn('redfish_username', args)

        expected = {'bmc': '2.1.0', 'bios': '2.00'}
        self.assertEqual(expected, self.components())
        result = json.loads(got.result)
        self.assertEqual(['bmc', 'bios'], result['updated'])
        self.assertEqual(expected, {c['component']: c['current_version']
                                    for c in result['components']})
        node = self.node_now()
        self.assertEqual('power on', node.power_state)
        counters = self.bmc.counters()
        self.assertEqual(2, counters['simple_updates'])
        # The BMC reset was seen (503), and waited for by reschedules.
        self.assertGreater(counters['answered_503'], 0)
        self.assertEqual(['On'], counters['resets'])
        # A poll answered 202 per task, then the finished task.
        self.assertGreaterEqual(counters['monitor_polls'], 4)

    def test_failing_image(self):
        action = self.update([{'component': 'bios',
                               'url': 'http://images.example.org/'
                                      'bios-corrupt-3.0.bin'}])
        got, _seen = self.run_to_end(action)
        self.assertEqual(da.FAILED, got.state)
        node = self.node_now()
        self.assertIn('firmware update of bios on node %s (image http://'
                      'images.example.org/bios-corrupt-3.0.bin) failed: the '
                      'BMC\'s task ended in state Exception, status '
                      'Critical: The image' % self.node.uuid,
                      node.last_error)
        self.assertIn('signature check failed', node.last_error)
        self.assertIn(action.uuid, node.last_error)
        self.assertEqual('U30 v1.00', self.components()['bios'])
        self.assertEqual([], self.bmc.counters()['resets'])

    def test_bad_settings_fail_at_once(self):
        action = self.update([{'component': 'nic', 'url': BMC_IMAGE}])
        got, seen = self.run_to_end(action)
        self.assertEqual(da.FAILED, got.state)
        self.assertEqual([da.FAILED], [s for s, _a in seen])
        self.assertIn('settings[0].component must be one of bmc, bios',
                      self.node_now().last_error)
        self.assertEqual(0, self.bmc.counters()['simple_updates'])


class TestBMCNeverBack(FirmwareUpdateTestCase):

    bmc_options = {'task_polls': 0}
    redfish_options = {'firmware_update_bmc_timeout': 2}

    def test_bmc_that_never_answers_again(self):
        action = self.update([{'component': 'bmc',
                               'url': 'http://images.example.org/'
                                      'bmc-never-back-2.2.0.bin'}])
        got, seen = self.run_to_end(action)
        self.assertEqual(da.FAILED, got.state)
        self.assertIn('The BMC did not answer again within 2s during the '
                      'firmware update of bmc on node %s' % self.node.uuid,
                      self.node_now().last_error)
        # It was waited for (rescheduled) while it answered 503.
        waits = [json.loads(args)['state'] for state, args in seen
                 if state == da.RESCHEDULE]
        self.assertTrue(any(w.get('unreachable_since') for w in waits),
                        waits)
        self.assertGreater(self.bmc.counters()['answered_503'], 1)


class TestNodeNotBackOn(FirmwareUpdateTestCase):

    bmc_options = {'task_polls': 0, 'power_delay': 60}
    redfish_options = {'firmware_update_reboot_timeout': 1}

    def test_bios_update_whose_reboot_does_not_end(self):
        action = self.update([{'component': 'bios', 'url': BIOS_IMAGE}])
        got, seen = self.run_to_end(action)
        self.assertEqual(da.FAILED, got.state)
        self.assertIn('Node %s was not powered on again within 1s of its '
                      'reboot for the firmware update of bios'
                      % self.node.uuid, self.node_now().last_error)
        steps = [json.loads(args)['state']['step'] for state, args in seen
                 if state == da.RESCHEDULE]
        self.assertIn('reboot', steps)
        self.assertEqual(['On'], self.bmc.counters()['resets'])
