"""The conductor's periodic task healing drift between nodes and Placement.

The drift is made as in ``test_drift`` (straight in the database or
through the Placement API); the task is the one the conductor collects
(``periodics.collect_for_conductor``), called once as the periodic
worker would call it.
"""

import logging
from unittest import mock

import fixtures
from oslo_utils import uuidutils

from alloc_framework.conductor import manager as manager_mod
from alloc_framework.drivers.allocation import placement
from alloc_framework.drivers.allocation import placement_drift
from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import allocation as alloc_obj
from alloc_framework.objects.baremetal import node_reservation
from alloc_framework import periodics
from tests.functional.drivers.allocation import \
    test_placement_drift as test_drift
from tests.functional.objects.baremetal import factories as f

RC = test_drift.RC
TASK = 'PlacementBackend._heal_drift'


class PeriodicTestCase(test_drift.DriftTestCase):

    def setUp(self):
        super().setUp()
        self.config(rpc_transport='local')
        self.config(check_allocations_interval=0,
                    check_provision_state_interval=0, group='conductor')
        self.logger = self.useFixture(fixtures.FakeLogger(level=logging.INFO))

    def start_conductor(self, host='test-host'):
        manager = manager_mod.ConductorManager(host, self.conf)
        manager.init_host()
        self.addCleanup(manager.del_host)
        return manager

    def tasks(self, manager):
        return {t.__qualname__: (t, args, kwargs) for t, args, kwargs
                in periodics.collect_for_conductor(manager, self.ctx)}

    def run_periodic(self, manager):
        task, args, kwargs = self.tasks(manager)[TASK]
        return task(*args, **kwargs)

    def found(self):
        return {(d.kind, d.provider)
                for d in placement_drift.find(self.ctx, self.backend)}


class PeriodicTests:

    def test_declared_with_the_configured_spacing(self):
        self.config(drift_heal_interval=42, group='placement')
        manager = self.start_conductor()
        task, args, _kwargs = self.tasks(manager)[TASK]
        self.assertEqual(42, task._periodic_spacing)
        self.assertEqual((manager, self.ctx), args)
        self.assertIn(TASK, manager._periodics.names)

    def test_disabled_when_zero(self):
        self.config(drift_heal_interval=0, group='placement')
        manager = self.start_conductor()
        self.assertNotIn(TASK, self.tasks(manager))
        self.assertNotIn(TASK, manager._periodics.names)

    def test_start_heals_what_differs(self):
        expected, allocation, stray = self.make_drift()
        self.assertEqual(expected, self.found())
        self.start_conductor()
        self.assertEqual(set(), self.found())
        claims = self.placement.claims()
        self.assertNotIn(stray, claims)
        self.assertIn(allocation.uuid, claims)

    def test_each_kind_healed(self):
        manager = self.start_conductor()
        expected, allocation, stray = self.make_drift()
        self.assertEqual(expected, self.found())
        self.run_periodic(manager)
        self.assertEqual(set(), self.found())
        claims = self.placement.claims()
        self.assertNotIn(stray, claims)
        self.assertIn(allocation.uuid, claims)
        for kind, uuid in expected:
            self.assertIn(uuid, self.logger.output)
            if kind != placement_drift.OVER_CAPACITY:
                # Over capacity went with the stale inventory healed.
                self.assertIn('Healed %s: ' % kind, self.logger.output)

    def test_metrics(self):
        # After the start: a conductor heals its nodes as it starts.
        manager = self.start_conductor()
        self.make_drift()
        emitter = mock.Mock()
        with mock.patch('alloc_framework.common.metrics.get_emitter',
                        return_value=emitter):
            self.run_periodic(manager)
        gauges = {c.args[0]: c.args[1]
                  for c in emitter.send_gauge.call_args_list}
        self.assertEqual({'PlacementDriftFoundCount': 7,
                          'PlacementDriftHealedCount': 7,
                          'PlacementDriftFailedCount': 0}, gauges)
        self.assertEqual('PlacementDrift.heal',
                         emitter.send_timer.call_args.args[0])

    def test_locked_node_left_to_its_conductor(self):
        node = f.make_node(self.ctx)
        manager = self.start_conductor()
        self.client.delete_provider(node.uuid)
        locked, _holder = objects.Node.reserve(self.ctx, node.id, 'other')
        self.assertTrue(locked)
        self.run_periodic(manager)
        self.assertIsNone(self.client.get_provider(node.uuid))
        objects.Node.release(self.ctx, node.id, 'other')
        self.run_periodic(manager)
        self.assertIsNotNone(self.client.get_provider(node.uuid))

    def test_claim_of_an_allocation_being_made_is_kept(self):
        # The allocation is created and claims its node after the task
        # read the allocations, before it reads the node's claims: the
        # claim looks stray, and must survive anyway.
        node = f.make_node(self.ctx)
        manager = self.start_conductor()
        made = []
        real_list = objects.Allocation.list

        def list_then_allocate(context, *args, **kwargs):
            listed = real_list(context, *args, **kwargs)
            if not made:
                allocation = f.make_allocation(self.ctx)
                self.assertEqual(alloc_obj.ALLOCATING, allocation.state)
                self.assertTrue(self.backend.claim_node(allocation, node))
                made.append(allocation)
            return listed

        with mock.patch.object(objects.Allocation, 'list',
                               side_effect=list_then_allocate):
            self.run_periodic(manager)
        self.assertEqual({made[0].uuid: node.uuid}, self.placement.claims())
        self.assertNotIn('Healed %s' % placement_drift.ORPHAN_CLAIM,
                         self.logger.output)
        # The allocation goes on: reserved, it is active without drift.
        self.assertEqual(node.uuid, node_reservation.reserve_node(
            self.ctx, made[0], node_uuid=node.uuid))
        self.run_periodic(manager)
        self.assertEqual(set(), self.found())
        self.assertEqual({made[0].uuid: node.uuid}, self.placement.claims())

    def test_claim_of_a_failed_allocation_is_deleted(self):
        node = f.make_node(self.ctx)
        allocation = f.make_allocation(self.ctx)
        self.assertTrue(self.backend.claim_node(allocation, node))
        allocation.state = alloc_obj.ERROR
        allocation.last_error = 'failed'
        allocation.save()
        self.assertEqual({(placement_drift.ORPHAN_CLAIM, node.uuid)},
                         self.found())
        self.run_periodic(self.start_conductor())
        self.assertEqual({}, self.placement.claims())

    def test_claim_left_on_another_node_moves_to_the_allocation_node(self):
        # The allocation is active on "served" but its claim is on
        # "other": the claim moves, it is not simply deleted.
        other = f.make_node(self.ctx, name='other')
        served = f.make_node(self.ctx, name='served')
        allocation = f.make_allocation(self.ctx)
        self.assertTrue(self.backend.claim_node(allocation, other))
        self.assertEqual(served.uuid, node_reservation.reserve_node(
            self.ctx, allocation, node_uuid=served.uuid))
        self.assertEqual({(placement_drift.ORPHAN_CLAIM, other.uuid),
                          (placement_drift.MISSING_CLAIM, served.uuid)},
                         self.found())
        self.run_periodic(self.start_conductor())
        self.assertEqual({allocation.uuid: served.uuid},
                         self.placement.claims())
        self.assertEqual(set(), self.found())

    def test_node_deleted_after_the_check_gets_no_provider(self):
        node = f.make_node(self.ctx)
        manager = self.start_conductor()
        self.client.delete_provider(node.uuid)
        real_find = placement_drift.find

        def find_then_delete(*args, **kwargs):
            drifts = real_find(*args, **kwargs)
            objects.Node.get_by_uuid(self.ctx, node.uuid).destroy()
            return drifts

        with mock.patch.object(placement_drift, 'find',
                               side_effect=find_then_delete):
            self.run_periodic(manager)
        self.assertIsNone(self.client.get_provider(node.uuid))

    def test_each_conductor_heals_its_own_nodes(self):
        first = self.start_conductor('c-1')
        second = self.start_conductor('c-2')
        # Rings built before both registered would give one all nodes.
        first.ring.reset()
        second.ring.reset()
        nodes = [f.make_node(self.ctx) for _ in range(8)]
        orphans = [uuidutils.generate_uuid() for _ in range(8)]
        self.client.ensure_trait(placement.NODE_TRAIT)
        for uuid in orphans:
            self.client.create_provider(uuid, 'gone-' + uuid)
            self.client.set_traits(uuid, 0, [placement.NODE_TRAIT])
        for node in nodes:
            self.client.delete_provider(node.uuid)
        owned = {u for u in [n.uuid for n in nodes] + orphans
                 if first.owns(u)}
        # Eight of each: both conductors own some (seen: the ring
        # spreads them; the test would prove nothing otherwise).
        self.assertTrue(owned)
        self.assertNotEqual(set([n.uuid for n in nodes] + orphans), owned)
        self.run_periodic(first)
        left = {uuid for _kind, uuid in self.found()}
        self.assertEqual(set([n.uuid for n in nodes] + orphans) - owned,
                         left)
        self.run_periodic(second)
        self.assertEqual(set(), self.found())

    def test_placement_down_is_logged(self):
        manager = self.start_conductor()
        # The conductor's backend (not the test's) has the client used.
        with mock.patch.object(
                manager.allocation_backend.client, 'list_providers',
                side_effect=placement.placement_client.PlacementError(
                    'GET', '/resource_providers', 503)):
            self.run_periodic(manager)
        self.assertIn('Could not check the drift between nodes and '
                      'Placement', self.logger.output)


class TestInProcess(PeriodicTests, PeriodicTestCase):
    mode = 'in-process'


class TestUpstream(PeriodicTests, PeriodicTestCase):
    # The same SQL as TestInProcess; upstream keeps its own SQLite.
    dialect_neutral = True
    mode = 'upstream'


class TestDatabaseBackend(PeriodicTestCase):
    """The task belongs to the ``placement`` backend only."""

    def test_not_run_with_the_database_backend(self):
        self.config(backend='database', group='allocation')
        manager = self.start_conductor()
        self.assertNotIn(TASK, self.tasks(manager))
        self.assertNotIn(TASK, manager._periodics.names)
        self.assertFalse([name for name in manager._periodics.names
                          if 'drift' in name.lower()])
