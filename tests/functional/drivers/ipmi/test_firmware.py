"""The ipmi firmware update (PICMG HPM.1) run by the deferred-action
engine of a real conductor against the emulated BMC."""

import hashlib
import os

from alloc_framework.conductor import task_manager
from alloc_framework.drivers import base as drivers_base
from alloc_framework.drivers import deferred
from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import deferred_action as da
from tests import base as test_base
from tests.functional.conductor import base
from tests.functional.drivers.ipmi import base as ipmi_base
from tests.functional.drivers.ipmi import emulator
from tests.functional.drivers.ipmi import fixture

CALL = deferred.call_name('firmware', 'update')


class FirmwareUpdateTestCase(base.ConductorTestCase):
    # An emulated BMC: nothing here depends on the database.
    dialect_neutral = True

    def setUp(self):
        super().setUp()
        # The conductor started by the base class has no ipmi: restart it
        # with the ipmi hardware type enabled; the test runs the launcher.
        self.manager.del_host()
        ipmi_base.enable_ipmi(self)
        self.config(launcher_interval=0, group='deferred_actions')
        self.manager = self.start_conductor(self.host)
        self.bmc = self.useFixture(fixture.BMC())
        # 600 bytes: 19 blocks of 32 bytes, 8 blocks per call.
        self.good = emulator.make_image(2, 0x05, bytes(range(256)) * 2
                                        + b'x' * 78)
        self.assertEqual(600, len(self.good))
        self.bad = self.good[:-1] + bytes([(self.good[-1] + 1) % 256])
        self.images = self.useFixture(fixture.ImageServer(
            {'/good.hpm': self.good, '/bad.hpm': self.bad,
             '/slow.hpm': self.good}, trickle={'/slow.hpm': 0.15}))
        self.node = self.make_node(driver='ipmi',
                                   driver_info=self.bmc.driver_info())

    def _action(self, image, **kw):
        action = objects.DeferredAction.new(
            self.ctx, self.node.id, CALL,
            arguments={'settings': [{'component': 'bmc',
                                     'url': self.images.url + image}]},
            **kw)
        action.create()
        return action

    def _run_to_end(self, action, limit=40):
        """Launch until the action ends; the states it went through."""
        launcher = self.manager.deferred_actions
        seen = []
        for _ in range(limit):
            launcher.launch(self.ctx)
            test_base.wait_for(lambda: launcher.busy == 0, 'idle launcher')
            got = objects.DeferredAction.get_by_uuid(self.ctx, action.uuid)
            seen.append((got.state, dict(got.arguments)))
            if got.state in (da.COMPLETED, da.FAILED):
                return got, seen
        self.fail('action still %s after %d launches' % (got.state, limit))

    def _components(self):
        with task_manager.acquire(self.ctx, self.node.id, host=self.host,
                                  driver_factory=self.manager.driver_factory,
                                  shared=True) as task:
            return task.driver.firmware.get_components(task)

    def test_update_reschedules_uploads_in_blocks_and_activates(self):
        self.assertEqual([{'component': 'bmc', 'current_version': '1.00'}],
                         self._components())
        action = self._action('/good.hpm')
        got, seen = self._run_to_end(action)
        self.assertEqual(da.COMPLETED, got.state, got.result)
        stages = [args.get('stage') for state, args in seen
                  if state == da.RESCHEDULE]
        # prepare is long: "in progress", then polled twice (the BMC
        # reports it running once); the 600 bytes take three calls of
        # eight blocks; finish is long like prepare, activation is long
        # but done at the first poll; the self-test answers "in
        # progress" once.
        self.assertEqual(['wait', 'wait', 'upload', 'upload', 'upload',
                          'finish', 'wait', 'wait', 'wait', 'self-test'],
                         stages)
        offsets = [args['offset'] for state, args in seen
                   if args.get('stage') == 'upload']
        self.assertEqual([0, 256, 512], offsets)
        for _, args in seen:
            self.assertNotIn('s3cret', repr(args))
            self.assertNotIn('ipmi_password', args)
        self.assertEqual(10, got.reschedule_count)
        self.assertIn('"current_version": "2.05"', got.result)
        self.assertEqual([{'component': 'bmc', 'current_version': '2.05'}],
                         self._components())
        state = self.bmc.state()
        self.assertEqual('2.05', state['firmware'])
        self.assertEqual(600, state['received'])
        self.assertEqual(19, state['hpm_commands']['0x32'])
        node = objects.Node.get_by_id(self.ctx, self.node.id)
        self.assertIsNone(node.last_error)

    def test_image_downloaded_once_per_update(self):
        # Three upload calls read the image from the conductor's cache.
        got, seen = self._run_to_end(self._action('/good.hpm'))
        self.assertEqual(da.COMPLETED, got.state, got.result)
        self.assertEqual(3, [args.get('stage') for _, args in seen].count(
            'upload'))
        self.assertEqual(1, self.images.requests['/good.hpm'])
        digest = hashlib.sha256(self.good).hexdigest()
        self.assertEqual(digest, got.arguments['digest'])
        cache_dir = self.conf.ipmi.firmware_image_cache_dir
        self.assertTrue(cache_dir.startswith(self.state_path))
        self.assertEqual([digest], os.listdir(cache_dir))

    def test_failed_download_leaves_nothing_in_the_cache(self):
        self.config(firmware_image_timeout=1.0, group='ipmi')
        got, _ = self._run_to_end(self._action('/slow.hpm'))
        self.assertEqual(da.FAILED, got.state)
        self.assertEqual(
            [], os.listdir(self.conf.ipmi.firmware_image_cache_dir))

    def test_failing_image_fails_the_action_with_a_clear_error(self):
        action = self._action('/bad.hpm')
        got, _ = self._run_to_end(action)
        self.assertEqual(da.FAILED, got.state)
        node = objects.Node.get_by_id(self.ctx, self.node.id)
        for part in (action.uuid, 'Finish Firmware Upload',
                     'completion code 0x82', 'integrity check'):
            self.assertIn(part, node.last_error)
        state = self.bmc.state()
        self.assertEqual('1.00', state['firmware'])
        # The driver left the BMC out of the upgrade, and never activated.
        self.assertEqual(1, state['hpm_commands']['0x30'])
        self.assertNotIn('0x35', state['hpm_commands'])
        self.assertEqual([{'component': 'bmc', 'current_version': '1.00'}],
                         self._components())

    def test_bad_settings_and_unreachable_image(self):
        for settings, expected in (
                ([{'component': 'bios', 'url': 'http://x/y'}],
                 'settings[0].component'),
                ([{'component': 'bmc', 'url': 'ftp://x/y'}],
                 'settings[0].url'),
                ([{'component': 'bmc', 'url': 'http://u:p@x/y'}],
                 'must not carry credentials'),
                ([{'component': 'bmc', 'url': self.images.url + '/none'}],
                 'HTTP 404')):
            action = objects.DeferredAction.new(
                self.ctx, self.node.id, CALL,
                arguments={'settings': settings})
            action.create()
            got, seen = self._run_to_end(action)
            self.assertEqual(da.FAILED, got.state)
            self.assertEqual(1, len(seen))
            self.assertIn(expected, got.result)
        self.assertEqual({}, self.bmc.state()['hpm_commands'])

    def test_oversized_image_refused_before_the_bmc_is_asked(self):
        self.config(firmware_image_max_size=599, group='ipmi')
        got, _ = self._run_to_end(self._action('/good.hpm'))
        self.assertEqual(da.FAILED, got.state)
        self.assertIn('firmware_image_max_size', got.result)
        self.assertEqual({}, self.bmc.state()['hpm_commands'])

    def test_slow_image_server_bounded_in_all(self):
        # Each read is quick, the whole download is not.
        self.config(firmware_image_timeout=1.0, group='ipmi')
        got, _ = self._run_to_end(self._action('/slow.hpm'))
        self.assertEqual(da.FAILED, got.state)
        self.assertIn('firmware_image_timeout', got.result)
        self.assertEqual({}, self.bmc.state()['hpm_commands'])

    def test_update_is_a_manual_clean_and_service_step(self):
        with task_manager.acquire(self.ctx, self.node.id, host=self.host,
                                  driver_factory=self.manager.driver_factory,
                                  shared=True) as task:
            firmware = task.driver.firmware
            for flow in ('clean', 'service'):
                steps = firmware.get_steps(task, flow)
                self.assertEqual(['update'], [s['step'] for s in steps])
                self.assertEqual(0, steps[0]['priority'])
                self.assertTrue(steps[0]['argsinfo']['settings']['required'])
            self.assertTrue(deferred.is_deferrable(firmware.update))
            self.assertEqual(firmware.update, deferred.resolve(task, CALL))
        self.assertIsInstance(firmware, drivers_base.FirmwareInterface)
