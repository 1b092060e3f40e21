"""The power state sync periodic, against fake-hardware nodes.

The fake power interface stands for the BMC: ``driver_internal_info``
``fake_bmc_power_state`` is the state it reports instead of the record
(someone pressed the power button), ``driver_info``
``fake_fail_power_read`` makes it stop answering and ``fake_fail_power``
makes power actions fail.
"""

import threading

import fixtures

from alloc_framework.common import states
from alloc_framework.conductor import power_sync
from alloc_framework.drivers import driver_factory
from alloc_framework.drivers.modules import fake
from alloc_framework.objects import baremetal as objects
from alloc_framework import periodics
from tests.functional.conductor import base

ON, OFF = states.POWER_ON, states.POWER_OFF


class PowerSyncTestCase(base.ConductorTestCase):

    def setUp(self):
        super().setUp()
        self.config(power_state_sync_max_retries=2, group='conductor')

    def node(self, power_state=OFF, bmc=None, **kw):
        """An available node recorded in ``power_state``; its BMC reports
        ``bmc`` (default: the same)."""
        kw.setdefault('provision_state', states.AVAILABLE)
        if bmc is not None:
            kw['driver_internal_info'] = {fake.BMC_POWER_STATE: bmc}
        return self.make_node(power_state=power_state, **kw)

    def sync(self, manager=None):
        return (manager or self.manager)._sync_power_states(self.ctx)

    def get(self, node):
        return objects.Node.get_by_id(self.ctx, node.id)

    def history(self, node):
        return objects.NodeHistory.list_by_node_id(self.ctx, node.id)

    def restart_with_power(self, power):
        self.manager.del_host()
        factory = driver_factory.DriverFactory(self.conf)
        factory.interfaces['power']['fake'] = power
        self.manager.driver_factory = factory
        self.manager.init_host()

    def set_driver_info(self, node, **info):
        node = self.get(node)
        node.driver_info = dict(node.driver_info or {}, **info)
        node.save(self.ctx)


class TestPeriodic(PowerSyncTestCase):

    def _spacing(self):
        return {t.__qualname__: t._periodic_spacing for t, _a, _k in
                periodics.collect_for_conductor(self.manager, self.ctx)}

    def test_interval_from_config(self):
        self.config(sync_power_state_interval=17, group='conductor')
        self.assertEqual(
            17, self._spacing()['ConductorManager._sync_power_states'])

    def test_zero_disables(self):
        self.config(sync_power_state_interval=0, group='conductor')
        self.assertNotIn('ConductorManager._sync_power_states',
                         self._spacing())


class TestRecordedStateFollowsBMC(PowerSyncTestCase):
    """``force_power_state_during_sync = False``."""

    def setUp(self):
        super().setUp()
        self.config(force_power_state_during_sync=False, group='conductor')

    def test_in_sync_changes_nothing(self):
        node = self.node(ON)
        self.sync()
        self.assertEqual(ON, self.get(node).power_state)
        self.assertEqual([], self.history(node))

    def test_other_state_is_recorded_with_history(self):
        node = self.node(OFF, bmc=ON)
        self.sync()
        synced = self.get(node)
        self.assertEqual(ON, synced.power_state)
        self.assertFalse(synced.maintenance)
        self.assertIsNone(synced.reservation)
        # Nothing was powered: the record followed the BMC.
        self.assertNotIn('fake_power_actions', synced.driver_internal_info)
        [entry] = self.history(node)
        self.assertEqual('monitoring', entry.event_type)
        self.assertEqual('WARNING', entry.severity)
        self.assertEqual('test-host', entry.conductor)
        self.assertIn('"power on"', entry.event)
        self.assertIn('"power off" was recorded', entry.event)

    def test_unknown_state_is_recorded(self):
        node = self.node(None, bmc=ON)
        self.sync()
        self.assertEqual(ON, self.get(node).power_state)
        [entry] = self.history(node)
        self.assertEqual('INFO', entry.severity)


class TestForcedBackToRecord(PowerSyncTestCase):
    """``force_power_state_during_sync = True`` (the default)."""

    def test_default_is_force(self):
        self.assertTrue(self.conf.conductor.force_power_state_during_sync)

    def test_node_powered_back(self):
        node = self.node(OFF, bmc=ON)
        self.sync()
        synced = self.get(node)
        self.assertEqual(OFF, synced.power_state)
        self.assertEqual([OFF],
                         synced.driver_internal_info['fake_power_actions'])
        # The fake BMC is off again.
        self.assertNotIn(fake.BMC_POWER_STATE, synced.driver_internal_info)
        self.assertFalse(synced.maintenance)
        [entry] = self.history(node)
        self.assertEqual('WARNING', entry.severity)
        self.assertIn('powering the node back to "power off"', entry.event)
        # In sync now: the next run does nothing.
        self.sync()
        self.assertEqual([OFF], self.get(node).driver_internal_info[
            'fake_power_actions'])
        self.assertEqual(0, self.manager.power_sync.failures(node.id))

    def test_node_never_powered_off_is_not_forced_off(self):
        # disable_power_off (API 1.95): the BMC's "power on" is recorded
        # instead of powering the node off.
        node = self.node(OFF, bmc=ON, disable_power_off=True)
        self.sync()
        synced = self.get(node)
        self.assertEqual(ON, synced.power_state)
        self.assertNotIn('fake_power_actions', synced.driver_internal_info)
        [entry] = self.history(node)
        self.assertEqual('WARNING', entry.severity)
        self.assertIn('recording "power on"', entry.event)
        # A node recorded on is still powered back on.
        node = self.node(ON, bmc=OFF, disable_power_off=True)
        self.sync()
        synced = self.get(node)
        self.assertEqual(ON, synced.power_state)
        self.assertEqual([ON],
                         synced.driver_internal_info['fake_power_actions'])

    def test_node_that_cannot_be_forced_goes_to_maintenance(self):
        # max retries 2: two attempts to force it, the third run gives up.
        node = self.node(OFF, bmc=ON, driver_info={'fake_fail_power': True})
        for attempt in (1, 2):
            self.sync()
            synced = self.get(node)
            self.assertFalse(synced.maintenance, attempt)
            self.assertEqual(OFF, synced.power_state)
        self.sync()
        synced = self.get(node)
        self.assertTrue(synced.maintenance)
        self.assertEqual(power_sync.POWER_FAILURE, synced.fault)
        # The record now tells the truth.
        self.assertEqual(ON, synced.power_state)
        self.assertIn('still reports "power on"', synced.maintenance_reason)
        severities = [e.severity for e in self.history(node)]
        self.assertEqual(['WARNING', 'ERROR'] * 2 + ['ERROR'], severities)


class TestHealth(PowerSyncTestCase):
    """The sync records the health the BMC reports (API 1.109)."""

    def node_reporting(self, health, **kw):
        node = self.node(ON, **kw)
        if health is not None:
            node.driver_internal_info = {fake.BMC_HEALTH: health}
            node.save(self.ctx)
        return node

    def test_default_is_on(self):
        self.assertTrue(self.conf.conductor.enable_health_monitoring)

    def test_health_recorded_and_followed(self):
        node = self.node_reporting('Warning')
        self.sync()
        self.assertEqual('Warning', self.get(node).health)
        # Nothing else changed, and the power state needs no history.
        self.assertEqual([], self.history(node))
        synced = self.get(node)
        synced.driver_internal_info = {fake.BMC_HEALTH: 'OK'}
        synced.save(self.ctx)
        self.sync()
        self.assertEqual('OK', self.get(node).health)

    def test_recorded_with_a_power_state_change(self):
        node = self.node(OFF, bmc=ON)
        node.driver_internal_info = dict(node.driver_internal_info,
                                         **{fake.BMC_HEALTH: 'Critical'})
        node.save(self.ctx)
        self.config(force_power_state_during_sync=False, group='conductor')
        self.sync()
        synced = self.get(node)
        self.assertEqual((ON, 'Critical'),
                         (synced.power_state, synced.health))

    def test_hardware_without_health_records_none(self):
        node = self.node_reporting('OK')
        self.sync()
        synced = self.get(node)
        synced.driver_internal_info = {}
        synced.save(self.ctx)
        self.sync()
        self.assertIsNone(self.get(node).health)

    def test_unknown_value_is_recorded_as_none(self):
        node = self.make_node(power_state=ON, health='OK',
                              provision_state=states.AVAILABLE,
                              driver_internal_info={
                                  fake.BMC_HEALTH: 'Splendid'})
        self.sync()
        self.assertIsNone(self.get(node).health)

    def test_monitoring_off_leaves_health(self):
        self.config(enable_health_monitoring=False, group='conductor')
        node = self.make_node(power_state=ON, health='Warning',
                              provision_state=states.AVAILABLE,
                              driver_internal_info={fake.BMC_HEALTH: 'OK'})
        self.sync()
        self.assertEqual('Warning', self.get(node).health)

    def test_bmc_not_answering_leaves_health(self):
        node = self.make_node(power_state=ON, health='Warning',
                              provision_state=states.AVAILABLE,
                              driver_info={'fake_fail_power_read': True},
                              driver_internal_info={fake.BMC_HEALTH: 'OK'})
        self.sync()
        self.assertEqual('Warning', self.get(node).health)


class TestBMCNotAnswering(PowerSyncTestCase):

    def test_maintenance_after_retries_then_recovery(self):
        node = self.node(ON, driver_info={'fake_fail_power_read': True})
        self.sync()
        self.sync()
        self.assertFalse(self.get(node).maintenance)
        self.assertEqual(2, self.manager.power_sync.failures(node.id))
        self.sync()
        failed = self.get(node)
        self.assertTrue(failed.maintenance)
        self.assertEqual(power_sync.POWER_FAILURE, failed.fault)
        self.assertIn('could not be read 3 times',
                      failed.maintenance_reason)
        self.assertIn('does not answer', failed.maintenance_reason)
        self.assertEqual(ON, failed.power_state)
        [entry] = self.history(node)
        self.assertEqual('ERROR', entry.severity)
        # Still silent: it stays in maintenance.
        self.sync()
        self.assertTrue(self.get(node).maintenance)
        # It answers again, in another state than before.
        self.set_driver_info(node, fake_fail_power_read=False)
        node = self.get(node)
        node.driver_internal_info = {fake.BMC_POWER_STATE: OFF}
        node.save(self.ctx)
        self.sync()
        recovered = self.get(node)
        self.assertFalse(recovered.maintenance)
        self.assertIsNone(recovered.fault)
        self.assertIsNone(recovered.maintenance_reason)
        self.assertEqual(OFF, recovered.power_state)
        self.assertEqual(['ERROR', 'INFO'],
                         [e.severity for e in self.history(node)])
        self.assertIn('taken out of maintenance',
                      self.history(node)[-1].event)

    def test_an_answer_resets_the_count(self):
        node = self.node(ON, driver_info={'fake_fail_power_read': True})
        self.sync()
        self.sync()
        self.set_driver_info(node, fake_fail_power_read=False)
        self.sync()
        self.assertEqual(0, self.manager.power_sync.failures(node.id))
        self.set_driver_info(node, fake_fail_power_read=True)
        self.sync()
        self.sync()
        self.assertFalse(self.get(node).maintenance)

    def test_count_survives_a_run_where_the_node_is_locked(self):
        node = self.node(ON, driver_info={'fake_fail_power_read': True})
        self.sync()
        self.sync()
        objects.Node.reserve(self.ctx, node.id, 'another-host')
        self.sync()
        self.assertEqual(2, self.manager.power_sync.failures(node.id))
        objects.Node.release(self.ctx, node.id, 'another-host')
        self.sync()
        self.assertTrue(self.get(node).maintenance)

    def test_count_survives_a_state_the_sync_leaves_alone(self):
        node = self.node(ON, driver_info={'fake_fail_power_read': True})
        self.sync()
        self.sync()
        node = self.get(node)
        node.provision_state = states.CLEANWAIT
        node.save(self.ctx)
        self.sync()
        self.assertEqual(2, self.manager.power_sync.failures(node.id))
        node.provision_state = states.AVAILABLE
        node.save(self.ctx)
        self.sync()
        self.assertTrue(self.get(node).maintenance)

    def test_zero_retries_fails_at_once(self):
        self.config(power_state_sync_max_retries=0, group='conductor')
        node = self.node(ON, driver_info={'fake_fail_power_read': True})
        self.sync()
        self.assertTrue(self.get(node).maintenance)

    def test_other_maintenance_is_left_alone(self):
        by_operator = self.node(ON, maintenance=True,
                                maintenance_reason='disk swap')
        cleaning = self.node(ON, maintenance=True, fault='clean failure')
        self.sync()
        for node in (by_operator, cleaning):
            self.assertTrue(self.get(node).maintenance)
        self.assertEqual('disk swap',
                         self.get(by_operator).maintenance_reason)
        self.assertEqual('clean failure', self.get(cleaning).fault)


class TestSkipped(PowerSyncTestCase):
    """Nodes the sync must not touch, whatever their BMC says."""

    def setUp(self):
        super().setUp()
        self.config(force_power_state_during_sync=False, group='conductor')

    def assertUntouched(self, node):
        self.assertEqual(OFF, self.get(node).power_state)
        self.assertEqual([], self.history(node))

    def test_locked(self):
        node = self.node(OFF, bmc=ON, reservation='another-host')
        self.sync()
        self.assertUntouched(node)
        self.assertEqual('another-host', self.get(node).reservation)

    def test_power_action_under_way(self):
        node = self.node(OFF, bmc=ON, target_power_state=ON)
        self.sync()
        self.assertUntouched(node)

    def test_excluded_states(self):
        nodes = [self.node(OFF, bmc=ON, provision_state=state)
                 for state in power_sync.SYNC_EXCLUDED_STATES]
        self.sync()
        for node in nodes:
            self.assertUntouched(node)

    def test_excluded_states_are_not_even_read(self):
        excluded = [self.node(OFF, bmc=ON, provision_state=state)
                    for state in power_sync.SYNC_EXCLUDED_STATES]
        synced = self.node(OFF, bmc=ON)
        read = []
        real_read = power_sync.PowerSync._read

        def spy(sync, context, node, eligible):
            read.append(node.id)
            return real_read(sync, context, node, eligible)

        self.useFixture(fixtures.MockPatchObject(
            power_sync.PowerSync, '_read', spy))
        self.sync()
        self.assertEqual([synced.id], read)
        self.assertEqual(ON, self.get(synced).power_state)
        for node in excluded:
            self.assertUntouched(node)

    def test_maintenance(self):
        node = self.node(OFF, bmc=ON, maintenance=True)
        self.sync()
        self.assertUntouched(node)

    def test_failing_read_of_maintenance_node_is_not_counted(self):
        node = self.node(OFF, maintenance=True,
                         driver_info={'fake_fail_power_read': True})
        self.sync()
        self.assertEqual(0, self.manager.power_sync.failures(node.id))

    def test_other_conductors_nodes(self):
        other = self.start_conductor('other-host')
        self.manager.ring.reset()
        other.ring.reset()
        # Fixed uuids: which conductor owns which node is then the same
        # at each run.
        nodes = [self.node(OFF, bmc=ON,
                           uuid='00000000-0000-4000-8000-%012x' % i)
                 for i in range(12)]
        mine = [n for n in nodes if self.manager.owns(n.uuid)]
        theirs = [n for n in nodes if other.owns(n.uuid)]
        # Twelve nodes on two conductors: both own some.
        self.assertTrue(mine and theirs)
        self.assertEqual(len(nodes), len(mine) + len(theirs))
        self.sync()
        for node in mine:
            self.assertEqual(ON, self.get(node).power_state)
        for node in theirs:
            self.assertUntouched(node)
        self.sync(other)
        for node in theirs:
            self.assertEqual('other-host', self.history(node)[0].conductor)

    def test_node_changed_while_its_bmc_was_read(self):
        test = self

        class RacingPower(fake.FakePower):
            """A power action ends on the node while its BMC is read."""

            def get_power_state(self, task):
                node = test.get(task.node)
                node.power_state = ON
                node.driver_internal_info = {}
                node.save(test.ctx)
                return ON

        self.restart_with_power(RacingPower())
        node = self.node(OFF)
        self.sync()
        # The record moved on: the stale read must not be recorded.
        self.assertEqual(ON, self.get(node).power_state)
        self.assertEqual([], self.history(node))


class TestBoundedWorkers(PowerSyncTestCase):

    def test_nodes_in_flight_bounded(self):
        self.config(sync_power_state_workers=2, group='conductor')
        lock = threading.Lock()
        seen = {'active': 0, 'max': 0, 'calls': 0}
        # Two reads meet here: the sync does run nodes in parallel.
        meeting = threading.Barrier(2, timeout=10)

        class CountingPower(fake.FakePower):
            def get_power_state(self, task):
                with lock:
                    seen['active'] += 1
                    seen['calls'] += 1
                    seen['max'] = max(seen['max'], seen['active'])
                    first_pair = seen['calls'] <= 2
                try:
                    if first_pair:
                        meeting.wait()
                    return super().get_power_state(task)
                finally:
                    with lock:
                        seen['active'] -= 1

        self.manager.del_host()
        factory = driver_factory.DriverFactory(self.conf)
        factory.interfaces['power']['fake'] = CountingPower()
        self.manager.driver_factory = factory
        self.manager.init_host()
        nodes = [self.node(ON) for _ in range(6)]
        self.assertEqual(6, self.sync_count())
        self.assertEqual(6, seen['calls'])
        self.assertEqual(2, seen['max'])
        self.assertEqual([ON] * 6, [self.get(n).power_state for n in nodes])

    def sync_count(self):
        return self.manager.power_sync.run(self.ctx)

    def test_stopping_conductor_reads_no_more(self):
        nodes = [self.node(OFF, bmc=ON) for _ in range(3)]
        self.manager.stop_event.set()
        self.addCleanup(self.manager.stop_event.clear)
        self.manager.power_sync.run(self.ctx)
        for node in nodes:
            self.assertEqual([], self.history(node))


class TestBatchedReads(PowerSyncTestCase):
    """The nodes of a run are read a batch at a time, not one by one."""

    def setUp(self):
        super().setUp()
        # The record follows the BMC: what was read shows in it.
        self.config(force_power_state_during_sync=False, group='conductor')

    def count_reads(self):
        counts = {'list': 0, 'get': 0}
        real_list = objects.Node.list.__func__
        real_get = objects.Node.get_by_id.__func__

        def listing(cls, context, filters=None, **kw):
            counts['list'] += 1
            return real_list(cls, context, filters, **kw)

        def getting(cls, context, node_id):
            counts['get'] += 1
            return real_get(cls, context, node_id)

        self.useFixture(fixtures.MockPatchObject(
            objects.Node, 'list', classmethod(listing)))
        self.useFixture(fixtures.MockPatchObject(
            objects.Node, 'get_by_id', classmethod(getting)))
        return counts

    def test_one_read_per_batch(self):
        # Two threads: batches of four nodes.
        self.config(sync_power_state_workers=2, group='conductor')
        in_sync = [self.node(ON) for _ in range(9)]
        drifted = self.node(OFF, bmc=ON)
        counts = self.count_reads()
        self.assertEqual(10, self.manager.power_sync.run(self.ctx))
        self.assertEqual(3, counts['list'])
        # Only the node to change is read again, under its lock.
        self.assertEqual(1, counts['get'])
        self.assertEqual(ON, self.get(drifted).power_state)
        for node in in_sync:
            self.assertEqual(ON, self.get(node).power_state)
            self.assertEqual([], self.history(node))

    def test_node_deleted_before_its_batch_is_read(self):
        gone = self.node(OFF, bmc=ON)
        kept = self.node(OFF, bmc=ON)
        real_list = objects.Node.list.__func__
        real_get = objects.Node.get_by_id.__func__
        deleted = []

        def listing(cls, context, filters=None, **kw):
            # Deleted after the run listed the ids of its nodes.
            if not deleted:
                deleted.append(gone.id)
                real_get(cls, context, gone.id).destroy(context)
            return real_list(cls, context, filters, **kw)

        self.useFixture(fixtures.MockPatchObject(
            objects.Node, 'list', classmethod(listing)))
        self.sync()
        self.assertEqual(ON, self.get(kept).power_state)
        self.assertEqual(0, self.manager.power_sync.failures(gone.id))

    def test_failed_read_of_a_node_changed_meanwhile_is_not_counted(self):
        test = self

        class LockedMeanwhile(fake.FakePower):
            """Another conductor locks the node while its BMC is read
            (after the sync read the record), and the read fails."""

            def get_power_state(self, task):
                objects.Node.reserve(test.ctx, task.node.id, 'other-host')
                raise RuntimeError('the BMC is busy')

        self.restart_with_power(LockedMeanwhile())
        node = self.node(ON)
        self.sync()
        self.assertEqual(0, self.manager.power_sync.failures(node.id))
        objects.Node.release(self.ctx, node.id, 'other-host')

    def test_failed_read_of_an_unchanged_node_is_counted(self):
        node = self.node(ON, driver_info={'fake_fail_power_read': True})
        counts = self.count_reads()
        self.sync()
        self.assertEqual(1, self.manager.power_sync.failures(node.id))
        # Read again once, to check it is still one to sync.
        self.assertEqual(1, counts['get'])

    def test_failed_batch_read_ends_the_run(self):
        self.node(OFF, bmc=ON)
        self.useFixture(fixtures.MockPatchObject(
            objects.Node, 'list', side_effect=RuntimeError('db gone')))
        logged = self.useFixture(fixtures.FakeLogger(
            name='alloc_framework.conductor.power_sync'))
        # Logged, not raised: the next run tries again.
        self.assertEqual(1, self.manager.power_sync.run(self.ctx))
        self.assertIn('could not read its nodes', logged.output)
        self.assertIn('db gone', logged.output)
