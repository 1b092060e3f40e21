"""The ``placement`` allocation backend, against each kind of Placement.

Every test runs three times: our Placement in process (the default),
our Placement over HTTP, and upstream openstack-placement over HTTP.
In process, a node is claimed in the transaction that reserves it
(``[allocation]placement_claim_in_database``, the default); the
allocation tests also run in process with that option off, through
Placement's API. What Placement holds is read back through its HTTP API.
"""

import threading
from unittest import mock

import fixtures
from oslo_utils import uuidutils
import sqlalchemy as sa

from alloc_framework.api.placement import direct
from alloc_framework.common import exception
from alloc_framework.drivers.allocation import base as backend_base
from alloc_framework.drivers.allocation import placement
from alloc_framework.drivers.allocation import placement_client
from alloc_framework.drivers.allocation import placement_groups
from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import allocation as alloc_obj
from alloc_framework.objects.baremetal import allocation_group as group_obj
from alloc_framework.objects.baremetal import group_reservation
from alloc_framework.objects.baremetal import node_reservation
from alloc_framework.objects.baremetal import trait as trait_obj
from alloc_framework.objects.placement import exception as placement_exc
from alloc_framework.objects.placement import tree_claim
from alloc_framework.placement_client import exception as pc_exc
from tests import base
from tests.functional.drivers.allocation import \
    placement_fixtures as pb_fixtures
from tests.functional.objects.baremetal import factories as f

RC = 'CUSTOM_BAREMETAL'


class BackendTestCase(base.DBTestCase):

    mode = 'in-process'

    def setUp(self):
        super().setUp()
        # oslo.policy (our Placement's) looks its file up through the
        # parsed configuration.
        self.conf([], project='alloc_framework', default_config_files=[],
                  default_config_dirs=[])
        self.ctx = f.admin_context()
        self.placement = self.useFixture(
            pb_fixtures.PlacementBackendFixture(self, self.mode))
        self.client = self.placement.client
        self.backend = backend_base.load_backend(
            self.conf, in_process_placement=self.placement.in_process)

    def inventory(self, node_uuid):
        return self.client.get_inventories(node_uuid)[0]

    def allocate(self, **kw):
        allocation = f.make_allocation(self.ctx, **kw)
        return allocation, self.backend.allocate(self.ctx, allocation)

    def claim_for(self, consumer, node):
        """Claim ``node`` for ``consumer`` through Placement's API."""
        project = self.conf.placement.incomplete_consumer_project_id
        self.assertTrue(self.client.claim(consumer, node.uuid, RC, project,
                                          project))


class MirrorTests:

    def test_loaded_by_name(self):
        self.assertIsInstance(self.backend, placement.PlacementBackend)

    def test_node_mirrored_as_provider(self):
        node = f.make_node(self.ctx, name='node-1',
                           traits=['CUSTOM_GPU', 'HW_CPU_X86_AVX2'])
        provider = self.client.get_provider(node.uuid)
        self.assertEqual('node-1', provider['name'])
        self.assertIsNone(provider['parent_provider_uuid'])
        inv = self.inventory(node.uuid)
        self.assertEqual([RC], list(inv))
        self.assertEqual(1, inv[RC]['total'])
        self.assertEqual(1, inv[RC]['max_unit'])
        self.assertEqual(0, inv[RC]['reserved'])
        self.assertEqual(
            {'CUSTOM_GPU', 'HW_CPU_X86_AVX2', placement.NODE_TRAIT},
            set(self.client.get_traits(node.uuid)[0]))

    def test_resource_class_is_normalized(self):
        node = f.make_node(self.ctx, resource_class='bare-metal.large')
        self.assertEqual(['CUSTOM_BARE_METAL_LARGE'],
                         list(self.inventory(node.uuid)))

    def test_unavailable_node_is_reserved(self):
        for kw in ({'maintenance': True}, {'provision_state': 'manageable'},
                   {'power_state': None},
                   {'provision_state': 'active',
                    'instance_uuid': uuidutils.generate_uuid()}):
            node = f.make_node(self.ctx, **kw)
            self.assertEqual(1, self.inventory(node.uuid)[RC]['reserved'],
                             kw)

    def test_changes_follow_the_node(self):
        node = f.make_node(self.ctx, name='old')
        node.name = 'new'
        node.maintenance = True
        node.resource_class = 'gold'
        node.owner = 'project-a'
        node.save()
        objects.Node.get_by_uuid(self.ctx, node.uuid)
        self.assertEqual(['aggregates', 'inventory', 'name'],
                         sorted(self.backend.sync_node(self.ctx,
                                                       node.uuid)))
        self.assertEqual('new', self.client.get_provider(node.uuid)['name'])
        inv = self.inventory(node.uuid)
        self.assertEqual(['CUSTOM_GOLD'], list(inv))
        self.assertEqual(1, inv['CUSTOM_GOLD']['reserved'])
        self.assertEqual([placement.project_aggregate('project-a')],
                         self.client.get_aggregates(node.uuid)[0])
        self.assertEqual([], self.backend.sync_node(self.ctx, node.uuid))

    def test_race_lost_to_a_newer_state_of_the_node(self):
        # The sync of a node's earlier state loses the race to the sync
        # of its newer state (which made it usable): trying again with
        # what it read first would reserve the node again.
        node = f.make_node(self.ctx)
        node.maintenance = True
        node.save()
        self.assertEqual(0, self.inventory(node.uuid)[RC]['reserved'])
        real = self.backend._sync_tree
        lost = []

        def sync_tree(tree_node, *args):
            if not lost:
                lost.append(tree_node.maintenance)
                newer = objects.Node.get_by_uuid(self.ctx, node.uuid)
                newer.maintenance = False
                newer.save()
                real(newer, *args)
                raise pc_exc.ProviderUpdateConflict('lost')
            return real(tree_node, *args)

        self.useFixture(fixtures.MockPatchObject(
            self.backend, '_sync_tree', sync_tree))
        self.backend.sync_node(self.ctx, node.uuid)
        self.assertEqual([True], lost)
        self.assertEqual(0, self.inventory(node.uuid)[RC]['reserved'])

    def test_node_deleted_while_its_sync_lost_a_race(self):
        node = f.make_node(self.ctx)
        node.maintenance = True
        node.save()

        def sync_tree(tree_node, *args):
            objects.Node.get_by_uuid(self.ctx, node.uuid).destroy()
            raise pc_exc.ProviderUpdateConflict('lost')

        self.useFixture(fixtures.MockPatchObject(
            self.backend, '_sync_tree', sync_tree))
        self.assertEqual(['deleted'],
                         self.backend.sync_node(self.ctx, node.uuid))
        self.assertIsNone(self.client.get_provider(node.uuid))

    def test_deleted_node_loses_its_provider(self):
        node = f.make_node(self.ctx)
        node.destroy()
        self.assertEqual(['deleted'],
                         self.backend.sync_node(self.ctx, node.uuid))
        self.assertIsNone(self.client.get_provider(node.uuid))


class AllocateTests:

    # Whether single allocations claim through Placement's API.
    claims_through_api = True

    def test_allocate_claims_then_reserves(self):
        node = f.make_node(self.ctx, traits=['CUSTOM_GPU'])
        f.make_node(self.ctx)
        f.make_node(self.ctx, resource_class='other', traits=['CUSTOM_GPU'])
        allocation, got = self.allocate(traits=['CUSTOM_GPU'])
        self.assertEqual(node.uuid, got)
        self.assertEqual(alloc_obj.ACTIVE, allocation.state)
        self.assertEqual({node.uuid: {RC: 1}},
                         self.client.get_claim(allocation.uuid))
        node.refresh()
        self.assertEqual(allocation.uuid, node.instance_uuid)
        self.assertEqual({allocation.uuid: node.uuid},
                         self.placement.claims())

    def test_every_node_once(self):
        nodes = {f.make_node(self.ctx).uuid for _ in range(3)}
        got = {self.allocate()[1] for _ in range(3)}
        self.assertEqual(nodes, got)
        allocation = f.make_allocation(self.ctx)
        exc = self.assertRaises(exception.AllocationFailed,
                                self.backend.allocate, self.ctx, allocation)
        self.assertEqual('no available nodes match the resource class '
                         'baremetal', exc.kwargs['error'])
        self.assertEqual(3, len(self.placement.claims()))

    def test_stale_claim_of_the_allocation_is_replaced(self):
        # An earlier attempt of the allocation claimed a node and died
        # before reserving it: the node went to another allocation in the
        # database. Through the API, Placement refuses the new claim as
        # the consumer exists (409 placement.concurrent_update) and the
        # old claim is deleted; in the reservation's transaction, the
        # claim is replaced there.
        node = f.make_node(self.ctx)
        elsewhere = f.make_node(self.ctx)
        allocation = f.make_allocation(self.ctx)
        self.assertTrue(self.client.claim(allocation.uuid, elsewhere.uuid,
                                          RC, 'p', 'u'))
        elsewhere.instance_uuid = uuidutils.generate_uuid()
        elsewhere.save()
        client = self.backend.client
        with mock.patch.object(client, 'delete_claim',
                               wraps=client.delete_claim) as delete:
            self.assertEqual(node.uuid,
                             self.backend.allocate(self.ctx, allocation))
        if self.claims_through_api:
            delete.assert_called_once_with(allocation.uuid)
        else:
            self.assertFalse(delete.called)
        self.assertEqual({allocation.uuid: node.uuid},
                         self.placement.claims())

    def test_claim_of_a_used_up_node_removes_nothing(self):
        node = f.make_node(self.ctx)
        first = f.make_allocation(self.ctx)
        self.assertEqual(node.uuid, self.backend.allocate(self.ctx, first))
        second = f.make_allocation(self.ctx)
        # Another allocation claimed the node first: Placement refuses
        # for capacity, the consumer has no claim to look for.
        claimed, code = self.client.try_claim(second.uuid, node.uuid, RC,
                                              'p', 'u')
        self.assertFalse(claimed)
        self.assertNotEqual(placement_client.CONCURRENT_UPDATE, code)
        with mock.patch.object(self.backend.client,
                               'delete_claim') as delete:
            self.assertFalse(self.backend._claim(second, node.uuid, RC,
                                                 context=self.ctx))
        self.assertFalse(delete.called)
        self.assertEqual({first.uuid: node.uuid}, self.placement.claims())

    def test_owner_and_candidate_nodes(self):
        f.make_node(self.ctx, owner='other')
        owned = f.make_node(self.ctx, lessee='project-a')
        f.make_node(self.ctx)
        self.assertEqual(owned.uuid, self.allocate(owner='project-a')[1])
        second = f.make_node(self.ctx)
        third = f.make_node(self.ctx)
        self.assertEqual(third.uuid,
                         self.allocate(candidate_nodes=[third.uuid])[1])
        self.assertNotIn(second.uuid, self.placement.claims().values())

    def test_error_names_the_filter(self):
        f.make_node(self.ctx, traits=['CUSTOM_A'])
        for kw, expected in (
                ({'resource_class': 'gpu'},
                 'no available nodes match the resource class gpu'),
                ({'traits': ['CUSTOM_B']},
                 'no available nodes of resource class baremetal have the '
                 'requested traits CUSTOM_B'),
                ({'owner': 'nobody'},
                 'no available nodes match the resource class baremetal '
                 'owned by or leased to project nobody')):
            allocation = f.make_allocation(self.ctx, **kw)
            exc = self.assertRaises(exception.AllocationFailed,
                                    self.backend.allocate, self.ctx,
                                    allocation)
            self.assertEqual(expected, exc.kwargs['error'])
        self.assertEqual({}, self.placement.claims())

    def test_node_without_provider_is_mirrored_when_needed(self):
        node = f.make_node(self.ctx, traits=['CUSTOM_GPU'])
        self.client.delete_provider(node.uuid)
        allocation, got = self.allocate(traits=['CUSTOM_GPU'])
        self.assertEqual(node.uuid, got)
        self.assertEqual({allocation.uuid: node.uuid},
                         self.placement.claims())

    def test_claim_without_allocation_is_dropped_when_needed(self):
        node = f.make_node(self.ctx)
        self.claim_for(uuidutils.generate_uuid(), node)
        allocation, got = self.allocate()
        self.assertEqual(node.uuid, got)
        self.assertEqual({allocation.uuid: node.uuid},
                         self.placement.claims())

    def test_claim_of_an_allocation_in_progress_is_kept(self):
        node = f.make_node(self.ctx)
        other = f.make_allocation(self.ctx)
        self.claim_for(other.uuid, node)
        allocation = f.make_allocation(self.ctx)
        exc = self.assertRaises(exception.AllocationFailed,
                                self.backend.allocate, self.ctx, allocation)
        self.assertTrue(exc.kwargs['error'].startswith(
            node_reservation.BUSY_ERROR + ' of resource class baremetal'))
        self.assertEqual({other.uuid: node.uuid}, self.placement.claims())

    def test_stale_provider_is_skipped_and_refreshed(self):
        stale = f.make_node(self.ctx)
        # Changed behind the conductor's back: Placement still offers it.
        stale.maintenance = True
        stale.save()
        node = f.make_node(self.ctx)
        self.assertEqual(node.uuid, self.allocate()[1])
        self.assertEqual(1, self.inventory(stale.uuid)[RC]['reserved'])

    def test_failed_reservation_leaves_no_claim(self):
        nodes = {f.make_node(self.ctx).uuid for _ in range(2)}
        real = node_reservation.reserve_node
        calls = []

        def first_fails(context, allocation, **kw):
            calls.append(kw['node_uuid'])
            # The claimed node is really claimed while it is reserved.
            self.assertEqual({kw['node_uuid']: {RC: 1}},
                             self.client.get_claim(allocation.uuid))
            if len(calls) == 1:
                return None
            return real(context, allocation, **kw)
        with mock.patch.object(node_reservation, 'reserve_node',
                               first_fails):
            allocation, got = self.allocate()
        self.assertEqual(nodes, set(calls))
        self.assertEqual(calls[1], got)
        self.assertEqual({allocation.uuid: got}, self.placement.claims())

    def test_error_in_reservation_leaves_no_claim(self):
        f.make_node(self.ctx)
        allocation = f.make_allocation(self.ctx)
        with mock.patch.object(
                node_reservation, 'reserve_node',
                side_effect=exception.AllocationTakenOver(
                    allocation=allocation.uuid, conductor=7)):
            self.assertRaises(exception.AllocationTakenOver,
                              self.backend.allocate, self.ctx, allocation)
        self.assertEqual({}, self.placement.claims())

    def test_claim_left_by_a_dead_conductor_is_replaced(self):
        first, second = f.make_node(self.ctx), f.make_node(self.ctx)
        allocation = f.make_allocation(self.ctx)
        project = self.conf.placement.incomplete_consumer_project_id
        self.assertTrue(self.client.claim(allocation.uuid, first.uuid, RC,
                                          project, project))
        got = self.backend.allocate(self.ctx, allocation)
        self.assertEqual(second.uuid, got)
        self.assertEqual({allocation.uuid: second.uuid},
                         self.placement.claims())

    def test_retried_allocation_claims_once(self):
        allocation = f.make_allocation(self.ctx)
        self.assertRaises(exception.AllocationFailed, self.backend.allocate,
                          self.ctx, allocation)
        self.assertTrue(allocation.fail('no node'))
        self.assertEqual({}, self.placement.claims())
        node = f.make_node(self.ctx)
        retried = objects.Allocation.retry(self.ctx, allocation.id, None)
        self.assertEqual(node.uuid, self.backend.allocate(self.ctx, retried))
        self.assertEqual({allocation.uuid: node.uuid},
                         self.placement.claims())

    def test_deallocate_deletes_the_claim(self):
        node = f.make_node(self.ctx)
        allocation, _ = self.allocate()
        self.backend.deallocate(self.ctx, allocation)
        self.assertEqual({}, self.placement.claims())
        node.refresh()
        self.assertIsNone(node.instance_uuid)
        self.assertEqual(node.uuid, self.allocate()[1])

    def test_deallocate_refused_keeps_the_claim(self):
        node = f.make_node(self.ctx)
        allocation, _ = self.allocate()
        node.refresh()
        node.provision_state = 'active'
        node.save()
        self.assertRaises(exception.NodeIsAllocated,
                          self.backend.deallocate, self.ctx, allocation)
        self.assertEqual({allocation.uuid: node.uuid},
                         self.placement.claims())

    def test_backfill_claims(self):
        node = f.make_node(self.ctx, provision_state='active',
                           instance_uuid=uuidutils.generate_uuid())
        allocation = objects.Allocation(self.ctx)
        created = self.backend.backfill(self.ctx, allocation, node.id)
        self.assertEqual(node.instance_uuid, created.uuid)
        self.assertEqual({created.uuid: node.uuid}, self.placement.claims())

    def test_backfill_mismatch_leaves_no_claim(self):
        node = f.make_node(self.ctx, provision_state='active')
        for kw in ({'traits': ['CUSTOM_MISSING']},
                   {'resource_class': 'other'}):
            allocation = objects.Allocation(self.ctx, **kw)
            self.assertRaises(exception.InvalidParameterValue,
                              self.backend.backfill, self.ctx, allocation,
                              node.id)
            self.assertEqual({}, self.placement.claims())
            self.assertEqual(1, self.inventory(node.uuid)[RC]['reserved'])


class _Killed(BaseException):
    """Stands for the death of the conductor's process."""


class GroupTests:

    def make_group(self, *members, **kw):
        group = objects.AllocationGroup(
            self.ctx, members=[dict({'traits': [], 'candidate_nodes': None,
                                     'resource_class': 'baremetal'}, **m)
                               for m in members], **kw)
        group.conductor_affinity = 1
        group.create(self.ctx)
        return group

    def reserved(self):
        """{allocation UUID: node UUID} as the database has them."""
        return {n.instance_uuid: n.uuid for n in objects.Node.list(self.ctx)
                if n.instance_uuid}

    def kill_after_claim(self):
        """The next reservation of a group dies after the claim."""
        patches = [
            fixtures.MonkeyPatch(
                'alloc_framework.objects.baremetal.group_reservation.'
                'reserve_group', mock.Mock(side_effect=_Killed())),
            # A dead process cleans nothing up.
            fixtures.MonkeyPatch(
                'alloc_framework.drivers.allocation.placement_groups._drop',
                lambda backend, consumers: None)]
        for patch in patches:
            patch.setUp()
        return patches

    def test_group_is_claimed_at_once_and_reserved(self):
        gpus = {f.make_node(self.ctx, traits=['CUSTOM_GPU']).uuid
                for _ in range(2)}
        plain = {f.make_node(self.ctx).uuid for _ in range(2)}
        group = self.make_group({'count': 2, 'traits': ['CUSTOM_GPU']},
                                {'count': 1})
        with mock.patch.object(self.backend.client, 'claim_many',
                               wraps=self.backend.client.claim_many) as many:
            uuids = self.backend.allocate_group(self.ctx, group)
        # One multi-consumer claim for the three nodes.
        self.assertEqual(1, many.call_count)
        self.assertEqual(3, len(many.call_args[0][0]))
        self.assertEqual(group_obj.ACTIVE, group.state)
        claims = self.placement.claims()
        self.assertEqual(self.reserved(), claims)
        self.assertEqual(sorted(uuids), sorted(claims))
        by_alloc = {a.uuid: a for a in objects.Allocation.list(self.ctx)}
        self.assertEqual(gpus, {claims[u] for u in uuids
                                if by_alloc[u].traits == ['CUSTOM_GPU']})
        self.assertEqual(1, len(plain & set(claims.values())))
        for consumer, node_uuid in claims.items():
            self.assertEqual({node_uuid: {RC: 1}},
                             self.client.get_claim(consumer))

    def test_group_that_cannot_fit_leaves_nothing(self):
        f.make_node(self.ctx, traits=['CUSTOM_GPU'])
        f.make_node(self.ctx)
        group = self.make_group({'count': 1}, {'count': 2,
                                               'traits': ['CUSTOM_GPU']})
        exc = self.assertRaises(exception.AllocationFailed,
                                self.backend.allocate_group, self.ctx, group)
        self.assertIn('member 1 (2 nodes of resource class baremetal, '
                      'traits CUSTOM_GPU): only 1 available nodes match',
                      exc.kwargs['error'])
        self.assertEqual({}, self.placement.claims())
        self.assertEqual({}, self.reserved())
        self.assertEqual([], objects.Allocation.list(self.ctx))

    def test_spread_and_candidate_nodes(self):
        nodes = [f.make_node(self.ctx, conductor_group=g)
                 for g in ('a', 'a', 'b', 'b')]
        group = self.make_group(
            {'count': 2, 'candidate_nodes': [n.uuid for n in nodes[:3]]},
            spread={'field': 'conductor_group'})
        self.backend.allocate_group(self.ctx, group)
        claimed = set(self.placement.claims().values())
        self.assertEqual(2, len(claimed))
        self.assertIn(nodes[2].uuid, claimed)
        self.assertEqual(self.reserved(), self.placement.claims())

    def test_failed_reservation_leaves_no_claim(self):
        for _ in range(2):
            f.make_node(self.ctx)
        group = self.make_group({'count': 2})
        with mock.patch.object(group_reservation, 'reserve_group',
                               side_effect=RuntimeError('db gone')):
            self.assertRaises(RuntimeError, self.backend.allocate_group,
                              self.ctx, group)
        self.assertEqual({}, self.placement.claims())
        with mock.patch.object(group_reservation, 'reserve_group',
                               return_value=(None, 'no')):
            self.assertRaises(exception.AllocationFailed,
                              self.backend.allocate_group, self.ctx, group)
        self.assertEqual({}, self.placement.claims())
        self.assertEqual({}, self.reserved())

    def test_deleted_or_taken_over_meanwhile_leaves_no_claim(self):
        f.make_node(self.ctx)
        group = self.make_group({'count': 1})
        objects.AllocationGroup.take_over(self.ctx, group.id, 1, 2)
        self.assertRaises(exception.AllocationTakenOver,
                          self.backend.allocate_group, self.ctx, group)
        self.assertEqual({}, self.placement.claims())
        group_reservation.release_group(self.ctx, group)
        self.assertRaises(exception.AllocationGroupNotFound,
                          self.backend.allocate_group, self.ctx, group)
        self.assertEqual({}, self.placement.claims())

    def test_killed_after_claim_then_resumed(self):
        for _ in range(3):
            f.make_node(self.ctx)
        group = self.make_group({'count': 3})
        patches = self.kill_after_claim()
        self.assertRaises(_Killed, self.backend.allocate_group, self.ctx,
                          group)
        for patch in patches:
            patch.cleanUp()
        # Claimed but not reserved; the heal keeps the claims of a group
        # its conductor still processes.
        stale = self.placement.claims()
        self.assertEqual(3, len(stale))
        self.assertEqual({}, self.reserved())
        for node_uuid in set(stale.values()):
            self.placement.sync(node_uuid)
        self.assertEqual(stale, self.placement.claims())
        # The same conductor resumes it: its own claims are replaced.
        self.backend.allocate_group(self.ctx, group)
        self.assertEqual(group_obj.ACTIVE, group.state)
        self.assertEqual(self.reserved(), self.placement.claims())
        self.assertEqual(sorted(group.allocations),
                         sorted(self.placement.claims()))

    def test_killed_after_claim_then_taken_over(self):
        for _ in range(2):
            f.make_node(self.ctx)
        group = self.make_group({'count': 2})
        patches = self.kill_after_claim()
        self.assertRaises(_Killed, self.backend.allocate_group, self.ctx,
                          group)
        for patch in patches:
            patch.cleanUp()
        stale = set(self.placement.claims())
        self.assertEqual(2, len(stale))
        # Another conductor takes it over: the dead one's claims, which
        # nothing stands behind any more, give way.
        self.assertTrue(objects.AllocationGroup.take_over(
            self.ctx, group.id, 1, 2))
        group.refresh(self.ctx)
        uuids = self.backend.allocate_group(self.ctx, group)
        claims = self.placement.claims()
        self.assertEqual(self.reserved(), claims)
        self.assertEqual(sorted(uuids), sorted(claims))
        self.assertFalse(stale & set(claims))

    def test_release_deletes_every_claim(self):
        nodes = [f.make_node(self.ctx) for _ in range(2)]
        group = self.make_group({'count': 2})
        self.backend.allocate_group(self.ctx, group)
        self.backend.release_group(self.ctx, group)
        self.assertEqual({}, self.placement.claims())
        self.assertEqual({}, self.reserved())
        self.assertEqual([], objects.Allocation.list(self.ctx))
        # The nodes serve again.
        again = self.make_group({'count': 2})
        self.backend.allocate_group(self.ctx, again)
        self.assertEqual({n.uuid for n in nodes},
                         set(self.placement.claims().values()))

    def test_release_refused_keeps_every_claim(self):
        for _ in range(2):
            f.make_node(self.ctx)
        group = self.make_group({'count': 2})
        self.backend.allocate_group(self.ctx, group)
        node = objects.Node.get_by_uuid(
            self.ctx, self.reserved()[group.allocations[0]])
        node.provision_state = 'active'
        node.save()
        before = self.placement.claims()
        self.assertRaises(exception.NodeIsAllocated,
                          self.backend.release_group, self.ctx, group)
        self.assertEqual(before, self.placement.claims())
        self.assertEqual(before, self.reserved())

    def test_release_of_an_unprocessed_group_deletes_its_claims(self):
        f.make_node(self.ctx)
        group = self.make_group({'count': 1})
        patches = self.kill_after_claim()
        self.assertRaises(_Killed, self.backend.allocate_group, self.ctx,
                          group)
        for patch in patches:
            patch.cleanUp()
        self.assertEqual(1, len(self.placement.claims()))
        self.backend.release_group(self.ctx, group)
        self.assertEqual({}, self.placement.claims())
        self.assertEqual([], objects.AllocationGroup.list(self.ctx))

    def test_consumers_differ_per_conductor(self):
        group = self.make_group({'count': 2}, {'count': 1})
        mine = placement_groups.group_consumers(group)
        self.assertEqual(mine, placement_groups.group_consumers(group))
        theirs = placement_groups.group_consumers(group, affinity=2)
        self.assertEqual([2, 1], [len(mine[0]), len(mine[1])])
        self.assertFalse(set(mine[0] + mine[1])
                         & set(theirs[0] + theirs[1]))


class InDatabaseTests:
    """Claims written in the reservation's own transaction."""

    claims_through_api = False

    def no_api_claim(self):
        """Fail the test if the backend claims through Placement's API."""
        client = self.backend.client
        for name in ('candidate_claims', 'try_claim'):
            self.useFixture(fixtures.MockPatchObject(
                client, name, side_effect=AssertionError(name)))

    def test_claims_in_database_by_default(self):
        self.assertTrue(self.backend.claims_in_database())
        self.conf.set_override('placement_claim_in_database', False,
                               group='allocation')
        self.assertFalse(self.backend.claims_in_database())

    def test_claim_and_reservation_without_api_requests(self):
        node = f.make_node(self.ctx, traits=['CUSTOM_GPU'],
                           owner='project-a')
        f.make_node(self.ctx, owner='project-a')
        f.make_node(self.ctx, traits=['CUSTOM_GPU'])
        with fixtures.MockPatchObject(
                self.backend.client, 'candidate_claims',
                side_effect=AssertionError('candidates asked')):
            allocation, got = self.allocate(traits=['CUSTOM_GPU'],
                                            owner='project-a')
        self.assertEqual(node.uuid, got)
        claim = self.client.get_claim(allocation.uuid)
        self.assertEqual({node.uuid: {RC: 1}}, claim)
        consumer = self.placement.in_process(
            {'OpenStack-API-Version': 'placement 1.36'}).get(
                '/allocations/%s' % allocation.uuid).json()
        self.assertEqual('project-a', consumer['project_id'])
        self.assertEqual(1, consumer['consumer_generation'])

    def test_whole_tree_is_claimed(self):
        # What the API path claims (everything the tree has free), for a
        # node whose GPUs are children of its provider.
        node = f.make_node(self.ctx, properties={'gpus': 2})
        self.no_api_claim()
        allocation, got = self.allocate()
        self.assertEqual(node.uuid, got)
        claim = self.client.get_claim(allocation.uuid)
        self.assertEqual(3, len(claim))
        self.assertEqual({RC: 1}, claim.pop(node.uuid))
        self.assertEqual([{'PGPU': 1}] * 2, list(claim.values()))

    def test_stale_provider_is_skipped_and_refreshed(self):
        # Freed behind the conductor's back: the database says free,
        # Placement still reserves the node's unit.
        stale = f.make_node(self.ctx, maintenance=True)
        self.assertEqual(1, self.inventory(stale.uuid)[RC]['reserved'])
        stale.maintenance = False
        stale.save()
        allocation, got = self.allocate(candidate_nodes=[stale.uuid])
        # Passed over in the database, refreshed, then served through
        # the API.
        self.assertEqual(stale.uuid, got)
        self.assertEqual({allocation.uuid: stale.uuid},
                         self.placement.claims())
        self.assertEqual(0, self.inventory(stale.uuid)[RC]['reserved'])

    def test_provider_missing_a_trait_is_refreshed_then_served(self):
        node = f.make_node(self.ctx)
        # Added behind the conductor's back.
        trait_obj.add_trait(self.ctx, node.id, 'CUSTOM_NEW')
        self.assertNotIn('CUSTOM_NEW', self.client.get_traits(node.uuid)[0])
        allocation, got = self.allocate(traits=['CUSTOM_NEW'])
        self.assertEqual(node.uuid, got)
        self.assertIn('CUSTOM_NEW', self.client.get_traits(node.uuid)[0])
        self.assertEqual({allocation.uuid: node.uuid},
                         self.placement.claims())

    def test_provider_missing_the_owners_aggregate_is_refreshed(self):
        node = f.make_node(self.ctx)
        # Leased behind the conductor's back.
        node.lessee = 'project-a'
        node.save()
        self.assertEqual([], self.client.get_aggregates(node.uuid)[0])
        allocation, got = self.allocate(owner='project-a')
        self.assertEqual(node.uuid, got)
        self.assertEqual([placement.project_aggregate('project-a')],
                         self.client.get_aggregates(node.uuid)[0])
        self.assertEqual({allocation.uuid: node.uuid},
                         self.placement.claims())

    def _tree_generations(self, root_uuid):
        providers = self.placement.in_process(
            {'OpenStack-API-Version': 'placement 1.14'}).get(
                '/resource_providers', params={'in_tree': root_uuid}).json()
        return {rp['uuid']: rp['generation']
                for rp in providers['resource_providers']}

    def test_claim_moves_each_generation_once(self):
        # As PUT /allocations: every provider that receives allocations.
        node = f.make_node(self.ctx, properties={'gpus': 2})
        other = f.make_node(self.ctx, provision_state='manageable')
        before = self._tree_generations(node.uuid)
        others = self._tree_generations(other.uuid)
        self.assertEqual(3, len(before))
        self.no_api_claim()
        allocation, got = self.allocate()
        self.assertEqual(node.uuid, got)
        self.assertEqual({rp: gen + 1 for rp, gen in before.items()},
                         self._tree_generations(node.uuid))
        self.assertEqual(others, self._tree_generations(other.uuid))

    def test_claim_statements(self):
        # What a claim of a new consumer sends, on a node of one provider,
        # for an owner seen before: the tree locked (SQLite's writers hold
        # the database from BEGIN), one read, the consumer, the
        # allocations, the generations.
        nodes = {f.make_node(self.ctx).uuid for _ in range(2)}
        nodes.discard(self.allocate()[1])
        (left,) = nodes
        sent, recording = [], []

        def record(conn, cursor, statement, *args):
            if recording:
                sent.append(' '.join(statement.split(None, 3)[:3]).upper())

        def recorded(real):
            def call(*args, **kw):
                recording.append(True)
                try:
                    return real(*args, **kw)
                finally:
                    recording.pop()
            return call

        engine = self.db.engine
        sa.event.listen(engine, 'before_cursor_execute', record)
        self.addCleanup(sa.event.remove, engine, 'before_cursor_execute',
                        record)
        self.no_api_claim()
        with mock.patch.object(tree_claim, 'check',
                               recorded(tree_claim.check)), \
                mock.patch.object(tree_claim, 'write',
                                  recorded(tree_claim.write)):
            allocation, got = self.allocate()
        self.assertEqual(left, got)
        lock = ([] if engine.dialect.name == 'sqlite'
                else ['SELECT RESOURCE_PROVIDERS.ID FROM'])
        self.assertEqual(lock + ['SELECT ROOT.ID AS',
                                 'INSERT INTO CONSUMERS',
                                 'INSERT INTO ALLOCATIONS',
                                 'UPDATE RESOURCE_PROVIDERS SET'], sent)
        self.assertEqual({left: {RC: 1}},
                         self.client.get_claim(allocation.uuid))

    def test_claim_for_a_new_owner(self):
        # The project and user of the claim's consumer are created with it.
        node = f.make_node(self.ctx, owner='project-new')
        self.no_api_claim()
        allocation, got = self.allocate(owner='project-new')
        self.assertEqual(node.uuid, got)
        consumer = self.placement.in_process(
            {'OpenStack-API-Version': 'placement 1.36'}).get(
                '/allocations/%s' % allocation.uuid).json()
        self.assertEqual('project-new', consumer['project_id'])
        self.assertEqual(1, consumer['consumer_generation'])
        self.assertEqual({node.uuid: {RC: 1}},
                         self.client.get_claim(allocation.uuid))

    def test_claim_read_for_another_owner_is_written_the_general_way(self):
        node = f.make_node(self.ctx)
        consumer = uuidutils.generate_uuid()
        ctx = f.admin_context()
        claim, reason = tree_claim.check(ctx, node.uuid, RC,
                                         consumer_uuid=consumer,
                                         project_id='project-a',
                                         user_id='user-a')
        self.assertIsNone(reason)
        with mock.patch.object(tree_claim.alloc_obj, 'write_allocations',
                               wraps=tree_claim.alloc_obj.write_allocations
                               ) as general:
            tree_claim.write(ctx, consumer, claim, 'project-b', 'user-a')
        self.assertEqual(1, general.call_count)
        written = self.placement.in_process(
            {'OpenStack-API-Version': 'placement 1.36'}).get(
                '/allocations/%s' % consumer).json()
        self.assertEqual('project-b', written['project_id'])
        self.assertEqual({node.uuid: {RC: 1}},
                         {rp: value['resources'] for rp, value
                          in written['allocations'].items()})

    def test_check_refuses_what_the_inventory_forbids(self):
        # Everything free is claimed, as through the API: a provider whose
        # free amount breaks its inventory's constraints fails the claim,
        # as PUT /allocations would.
        node = f.make_node(self.ctx, properties={'gpus': 1})
        child = [rp for rp in self._tree_generations(node.uuid)
                 if rp != node.uuid][0]
        api = self.placement.in_process(
            {'OpenStack-API-Version': 'placement 1.36'})
        gen = self._tree_generations(node.uuid)[child]
        resp = api.put('/resource_providers/%s/inventories' % child, json={
            'resource_provider_generation': gen,
            'inventories': {'PGPU': {'total': 3, 'max_unit': 2}}})
        self.assertEqual(200, resp.status_code, resp.text)
        ctx = f.admin_context()
        self.assertRaises(placement_exc.InvalidAllocationConstraintsViolated,
                          tree_claim.check, ctx, node.uuid, RC)

    def test_concurrent_claims_take_each_node_once(self):
        # Allocations racing for fewer nodes than they are: each node is
        # reserved and claimed once, and no provider holds more than its
        # inventory.
        nodes = {f.make_node(self.ctx, properties={'gpus': i % 2}).uuid
                 for i in range(6)}
        clients = 12
        barrier = threading.Barrier(clients)
        got, failed, errors = {}, [], []

        def allocate(i):
            ctx = f.admin_context()
            allocation = f.make_allocation(ctx)
            try:
                barrier.wait()
                got[allocation.uuid] = self.backend.allocate(ctx, allocation)
            except exception.AllocationFailed as exc:
                failed.append(exc.kwargs['error'])
            except Exception as exc:
                errors.append(exc)

        base.run_threads(allocate, clients)
        self.assertEqual([], errors)
        self.assertEqual(nodes, set(got.values()))
        self.assertEqual(len(nodes), len(got))
        self.assertEqual(clients - len(nodes), len(failed))
        self.assertEqual(got, self.placement.claims())
        api = self.placement.in_process(
            {'OpenStack-API-Version': 'placement 1.36'})
        for node_uuid in nodes:
            for rp in self._tree_generations(node_uuid):
                usages = api.get('/resource_providers/%s/usages'
                                 % rp).json()['usages']
                inventories = api.get('/resource_providers/%s/inventories'
                                      % rp).json()['inventories']
                for rc, used in usages.items():
                    self.assertLessEqual(used, inventories[rc]['total'])
            node = objects.Node.get_by_uuid(self.ctx, node_uuid)
            self.assertEqual(node_uuid, got[node.instance_uuid])

    def test_check_answers_why_a_tree_is_not_offered(self):
        node = f.make_node(self.ctx, traits=['CUSTOM_A'], owner='project-a')
        aggregate = placement.project_aggregate('project-a')
        ctx = f.admin_context()

        def check(uuid=node.uuid, rc=RC, traits=(), agg=None):
            return tree_claim.check(ctx, uuid, rc, traits, agg)
        self.assertEqual(({node.uuid: {RC: 1}}, None),
                         check(traits=['CUSTOM_A'], agg=aggregate))
        self.assertEqual((None, tree_claim.MISSING),
                         check(uuid=uuidutils.generate_uuid()))
        self.assertEqual((None, tree_claim.NO_CLASS),
                         check(rc='CUSTOM_NOBODY_HAS_IT'))
        self.assertEqual((None, tree_claim.TRAITS),
                         check(traits=['CUSTOM_A', 'CUSTOM_UNKNOWN']))
        self.assertEqual((None, tree_claim.TRAITS),
                         check(traits=['CUSTOM_A', 'HW_CPU_X86_AVX']))
        self.assertEqual((None, tree_claim.AGGREGATE),
                         check(agg=uuidutils.generate_uuid()))
        self.assertTrue(self.client.claim(uuidutils.generate_uuid(),
                                          node.uuid, RC, 'p', 'u'))
        self.assertEqual((None, tree_claim.USED), check())

    def test_provider_held_by_another_consumer_is_passed_over(self):
        held = f.make_node(self.ctx)
        free = f.make_node(self.ctx)
        other = uuidutils.generate_uuid()
        self.assertTrue(self.client.claim(other, held.uuid, RC, 'p', 'u'))
        self.no_api_claim()
        for _ in range(3):
            allocation, got = self.allocate()
            self.assertEqual(free.uuid, got)
            self.backend.deallocate(self.ctx, allocation)
        self.assertEqual({other: held.uuid}, self.placement.claims())

    def test_failed_reservation_leaves_no_claim(self):
        # Taken over after the claim was written: the claim goes with
        # the reservation's transaction.
        node = f.make_node(self.ctx)
        allocation = f.make_allocation(self.ctx)
        real_write = tree_claim.write

        def write_then_take_over(context, *args):
            real_write(context, *args)
            context.connection.execute(
                alloc_obj.ALLOCATIONS.update()
                .where(alloc_obj.ALLOCATIONS.c.id == allocation.id)
                .values(conductor_affinity=7))
        with mock.patch.object(tree_claim, 'write', write_then_take_over):
            self.assertRaises(exception.AllocationTakenOver,
                              self.backend.allocate, self.ctx, allocation)
        self.assertEqual({}, self.placement.claims())
        node.refresh()
        self.assertIsNone(node.instance_uuid)
        self.assertIsNone(node.allocation_id)

    def test_error_in_reservation_leaves_no_claim(self):
        node = f.make_node(self.ctx)
        allocation = f.make_allocation(self.ctx)
        with mock.patch.object(node_reservation, '_activate',
                               side_effect=RuntimeError('db gone')):
            self.assertRaises(RuntimeError, self.backend.allocate,
                              self.ctx, allocation)
        self.assertEqual({}, self.placement.claims())
        node.refresh()
        self.assertIsNone(node.instance_uuid)

    def test_no_matching_node_fails_without_api_requests(self):
        f.make_node(self.ctx, traits=['CUSTOM_A'])
        self.no_api_claim()
        exc = self.assertRaises(exception.AllocationFailed, self.allocate,
                                traits=['CUSTOM_B'])
        self.assertEqual('no available nodes of resource class baremetal '
                         'have the requested traits CUSTOM_B',
                         exc.kwargs['error'])

    def test_deallocate_deletes_the_claim_in_one_transaction(self):
        node = f.make_node(self.ctx)
        allocation, _ = self.allocate()
        with mock.patch.object(self.backend.client, 'delete_claim',
                               side_effect=AssertionError('API')):
            self.backend.deallocate(self.ctx, allocation)
        self.assertEqual({}, self.placement.claims())
        node.refresh()
        self.assertIsNone(node.instance_uuid)
        self.assertRaises(exception.AllocationNotFound,
                          objects.Allocation.get_by_uuid, self.ctx,
                          allocation.uuid)

    def test_failed_claim_deletion_keeps_the_allocation(self):
        node = f.make_node(self.ctx)
        allocation, _ = self.allocate()
        with mock.patch.object(tree_claim, 'release',
                               side_effect=RuntimeError('db gone')):
            self.assertRaises(RuntimeError, self.backend.deallocate,
                              self.ctx, allocation)
        self.assertEqual({allocation.uuid: node.uuid},
                         self.placement.claims())
        node.refresh()
        self.assertEqual(allocation.uuid, node.instance_uuid)
        objects.Allocation.get_by_uuid(self.ctx, allocation.uuid)

    def test_lost_race_is_tried_again(self):
        node = f.make_node(self.ctx)
        real_write = tree_claim.write
        calls = []

        def first_loses(context, *args):
            calls.append(args)
            real_write(context, *args)
            if len(calls) == 1:
                raise placement_exc.InvalidAllocationCapacityExceeded(
                    resource_class=RC, resource_provider=node.uuid)
        self.no_api_claim()
        with mock.patch.object(tree_claim, 'write', first_loses):
            allocation, got = self.allocate()
        self.assertEqual(2, len(calls))
        self.assertEqual(node.uuid, got)
        self.assertEqual({allocation.uuid: node.uuid},
                         self.placement.claims())

    def test_races_lost_every_time_go_through_the_api(self):
        node = f.make_node(self.ctx)
        allocation = f.make_allocation(self.ctx)
        with mock.patch.object(
                tree_claim, 'write',
                side_effect=placement_exc.
                ResourceProviderConcurrentUpdateDetected()) as write:
            self.assertEqual(node.uuid,
                             self.backend.allocate(self.ctx, allocation))
        self.assertEqual(3, write.call_count)
        self.assertEqual({allocation.uuid: node.uuid},
                         self.placement.claims())

    def test_tree_serving_the_class_from_a_child_goes_through_the_api(self):
        node = f.make_node(self.ctx)
        allocation = f.make_allocation(self.ctx)
        with mock.patch.object(tree_claim, 'check',
                               return_value=(None, tree_claim.NO_CLASS)):
            with mock.patch.object(
                    self.backend.client, 'candidate_claims',
                    wraps=self.backend.client.candidate_claims) as asked:
                self.assertEqual(
                    node.uuid, self.backend.allocate(self.ctx, allocation))
        self.assertTrue(asked.called)
        self.assertEqual({allocation.uuid: node.uuid},
                         self.placement.claims())


class InDatabaseSyncTests:
    """A sync that has nothing to do, found out in the database."""

    def requests(self):
        """The (method, path) of every request our Placement answers in
        this process from now on."""
        sent = []
        real = direct.InProcessTransport.call

        def call(transport, method, path, *args, **kw):
            sent.append((method, path))
            return real(transport, method, path, *args, **kw)
        self.useFixture(fixtures.MockPatchObject(
            direct.InProcessTransport, 'call', call))
        return sent

    def test_unchanged_node_is_synced_without_requests(self):
        node = f.make_node(self.ctx, name='node-1', owner='project-a',
                           traits=['CUSTOM_GPU'], properties={'gpus': 2})
        sent = self.requests()
        self.assertEqual([], self.backend.sync_node(self.ctx, node.uuid))
        self.assertEqual([], sent)

    def test_node_serving_its_allocation_is_synced_without_requests(self):
        node = f.make_node(self.ctx)
        allocation, got = self.allocate()
        self.assertEqual(node.uuid, got)
        sent = self.requests()
        self.assertEqual([], self.backend.sync_node(self.ctx, node.uuid))
        self.assertEqual([], sent)
        self.assertEqual({allocation.uuid: node.uuid},
                         self.placement.claims())

    def test_release_syncs_without_requests(self):
        node = f.make_node(self.ctx)
        allocation, _got = self.allocate()
        allocation = objects.Allocation.get_by_uuid(self.ctx,
                                                    allocation.uuid)
        sent = self.requests()
        self.backend.deallocate(self.ctx, allocation)
        self.assertEqual([], sent)
        self.assertEqual({}, self.placement.claims())
        self.assertEqual(0, self.inventory(node.uuid)[RC]['reserved'])

    def test_each_difference_is_synced_through_the_api(self):
        node = f.make_node(self.ctx, name='old')
        changes = [('name', 'new', ['name']),
                   ('maintenance', True, ['inventory']),
                   ('owner', 'project-a', ['aggregates']),
                   ('resource_class', 'gold', ['inventory'])]
        for field, value, words in changes:
            setattr(node, field, value)
            node.save()
            sent = self.requests()
            self.assertEqual(words,
                             self.backend.sync_node(self.ctx, node.uuid),
                             field)
            self.assertNotEqual([], sent, field)
        self.assertEqual('new', self.client.get_provider(node.uuid)['name'])
        self.assertEqual({'CUSTOM_GOLD'}, set(self.inventory(node.uuid)))

    def test_traits_changed_are_synced_through_the_api(self):
        node = f.make_node(self.ctx, traits=['CUSTOM_GPU'])
        trait_obj.set_traits(self.ctx, node.id, ['CUSTOM_FPGA'])
        self.assertEqual(['traits'],
                         self.backend.sync_node(self.ctx, node.uuid))
        self.assertEqual({'CUSTOM_FPGA', placement.NODE_TRAIT},
                         set(self.client.get_traits(node.uuid)[0]))

    def test_missing_provider_is_created_through_the_api(self):
        node = f.make_node(self.ctx)
        self.assertTrue(self.client.delete_provider(node.uuid))
        self.assertIn('inventory',
                      self.backend.sync_node(self.ctx, node.uuid))
        self.assertEqual(1, self.inventory(node.uuid)[RC]['total'])

    def test_stray_claim_is_dropped_through_the_api(self):
        node = f.make_node(self.ctx)
        self.claim_for(uuidutils.generate_uuid(), node)
        self.assertEqual(['claims'],
                         self.backend.sync_node(self.ctx, node.uuid))
        self.assertEqual({}, self.placement.claims())

    def test_sync_keeps_the_claim_of_an_allocation_in_progress(self):
        node = f.make_node(self.ctx)
        other = f.make_allocation(self.ctx)
        self.claim_for(other.uuid, node)
        self.assertEqual([], self.backend.sync_node(self.ctx, node.uuid))
        self.assertEqual({other.uuid: node.uuid}, self.placement.claims())

    def test_remote_placement_is_never_read_in_the_database(self):
        self.assertTrue(self.backend.reads_placement_database())
        self.config(endpoint_override='http://127.0.0.1:1/placement',
                    group='placement')
        self.assertFalse(self.backend.reads_placement_database())


class TestInProcess(MirrorTests, InDatabaseTests, InDatabaseSyncTests,
                    AllocateTests, GroupTests, BackendTestCase):
    mode = 'in-process'


class TestInProcessAPI(AllocateTests, BackendTestCase):
    """In process, through Placement's API (the option off)."""

    mode = 'in-process'

    def setUp(self):
        super().setUp()
        self.conf.set_override('placement_claim_in_database', False,
                               group='allocation')
        self.assertFalse(self.backend.claims_in_database())


class TestHTTP(MirrorTests, AllocateTests, GroupTests, BackendTestCase):
    # The same SQL as TestInProcess; only the way to Placement differs.
    dialect_neutral = True
    mode = 'http'


class TestUpstream(MirrorTests, AllocateTests, GroupTests,
                   BackendTestCase):
    # The same SQL as TestInProcess; upstream keeps its own SQLite.
    dialect_neutral = True
    mode = 'upstream'
