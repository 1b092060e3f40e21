"""Reserving, backfilling and releasing nodes, on a real database."""

from oslo_utils import uuidutils
import sqlalchemy as sa

from alloc_framework.common import exception
from alloc_framework.db import api as db_api
from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import allocation as alloc_obj
from alloc_framework.objects.baremetal import node_reservation
from tests import base
from tests.functional.objects.baremetal import factories as f


class TestReserveNode(base.DBTestCase):

    def setUp(self):
        super().setUp()
        self.ctx = f.admin_context()

    def _reserve(self, allocation, **kw):
        return node_reservation.reserve_node(self.ctx, allocation, **kw)

    def test_reserves_matching_node(self):
        f.make_node(self.ctx, resource_class='other')
        node = f.make_node(self.ctx, instance_info={'image': 'x'},
                           traits=['CUSTOM_GPU', 'CUSTOM_X'])
        a = f.make_allocation(self.ctx, traits=['CUSTOM_GPU'])
        self.assertEqual(node.uuid, self._reserve(a))
        self.assertEqual(alloc_obj.ACTIVE, a.state)
        self.assertEqual(node.id, a.node_id)
        node.refresh()
        self.assertEqual(a.uuid, node.instance_uuid)
        self.assertEqual(a.id, node.allocation_id)
        self.assertEqual({'image': 'x', 'traits': ['CUSTOM_GPU']},
                         node.instance_info)
        stored = objects.Allocation.get_by_id(self.ctx, a.id)
        self.assertEqual(alloc_obj.ACTIVE, stored.state)
        self.assertEqual(node.id, stored.node_id)

    def test_every_filter_excludes(self):
        f.make_node(self.ctx, maintenance=True)
        f.make_node(self.ctx, power_state=None)
        f.make_node(self.ctx, provision_state='manageable')
        f.make_node(self.ctx, instance_uuid=uuidutils.generate_uuid())
        f.make_node(self.ctx, reservation='somebody')
        f.make_node(self.ctx, resource_class='other')
        a = f.make_allocation(self.ctx)
        self.assertIsNone(self._reserve(a))
        self.assertEqual(alloc_obj.ALLOCATING,
                         objects.Allocation.get_by_id(self.ctx, a.id).state)
        good = f.make_node(self.ctx)
        self.assertEqual(good.uuid, self._reserve(a))

    def test_candidate_nodes(self):
        nodes = [f.make_node(self.ctx) for _ in range(4)]
        a = f.make_allocation(self.ctx, candidate_nodes=[nodes[2].uuid])
        self.assertEqual(nodes[2].uuid, self._reserve(a))

    def test_traits_superset(self):
        f.make_node(self.ctx, traits=['CUSTOM_A'])
        both = f.make_node(self.ctx, traits=['CUSTOM_A', 'CUSTOM_B'])
        a = f.make_allocation(self.ctx, traits=['CUSTOM_A', 'CUSTOM_B'])
        self.assertEqual(both.uuid, self._reserve(a))

    def test_owner(self):
        f.make_node(self.ctx, owner='other')
        mine = f.make_node(self.ctx, lessee='me')
        a = f.make_allocation(self.ctx, owner='me')
        self.assertEqual(mine.uuid, self._reserve(a))

    def test_name_goes_first(self):
        for i in range(5):
            f.make_node(self.ctx, name='node-%d' % i)
        a = f.make_allocation(self.ctx, name='node-3')
        self.assertEqual(objects.Node.get(self.ctx, 'node-3').uuid,
                         self._reserve(a))

    def test_not_randomized_is_lowest_id(self):
        nodes = [f.make_node(self.ctx) for _ in range(3)]
        a = f.make_allocation(self.ctx)
        self.assertEqual(nodes[0].uuid, self._reserve(a, randomize=False))

    def test_random_start_covers_every_node(self):
        nodes = [f.make_node(self.ctx) for _ in range(3)]
        got = set()
        for _ in range(3):
            got.add(self._reserve(f.make_allocation(self.ctx)))
        self.assertEqual({n.uuid for n in nodes}, got)
        self.assertIsNone(self._reserve(f.make_allocation(self.ctx)))

    def test_taken_over_reserves_nothing(self):
        node = f.make_node(self.ctx)
        a = f.make_allocation(self.ctx, conductor_affinity=1)
        objects.Allocation.take_over(self.ctx, a.id, 1, 2)
        self.assertRaises(exception.AllocationTakenOver, self._reserve, a)
        node.refresh()
        self.assertIsNone(node.instance_uuid)
        self.assertIsNone(node.allocation_id)

    def test_deleted_reserves_nothing(self):
        node = f.make_node(self.ctx)
        a = f.make_allocation(self.ctx)
        objects.Allocation.get_by_id(self.ctx, a.id).destroy()
        self.assertRaises(exception.AllocationNotFound, self._reserve, a)
        node.refresh()
        self.assertIsNone(node.instance_uuid)


class TestExplain(base.DBTestCase):

    def setUp(self):
        super().setUp()
        self.ctx = f.admin_context()

    def _explain(self, **kw):
        a = f.make_allocation(self.ctx, **kw)
        return node_reservation.explain_no_node(self.ctx, a)

    def test_resource_class(self):
        f.make_node(self.ctx, resource_class='other')
        self.assertEqual(
            'no available nodes match the resource class baremetal',
            self._explain())

    def test_candidates(self):
        f.make_node(self.ctx)
        other = f.make_node(self.ctx, resource_class='other')
        self.assertIn('none of the requested candidate nodes',
                      self._explain(candidate_nodes=[other.uuid]))

    def test_traits(self):
        f.make_node(self.ctx, traits=['CUSTOM_A'])
        msg = self._explain(traits=['CUSTOM_A', 'CUSTOM_B'])
        self.assertIn('have the requested traits CUSTOM_A, CUSTOM_B', msg)

    def test_locked(self):
        f.make_node(self.ctx, reservation='other-host')
        self.assertIn('could not reserve', self._explain())

    def test_owner(self):
        f.make_node(self.ctx, owner='x')
        self.assertIn('owned by or leased to project me',
                      self._explain(owner='me'))


class TestBackfill(base.DBTestCase):

    def setUp(self):
        super().setUp()
        self.ctx = f.admin_context()

    def _new(self, **kw):
        return objects.Allocation(self.ctx, **kw)

    def _count(self):
        return len(objects.Allocation.list(self.ctx))

    def test_backfill_adopts_instance_uuid(self):
        instance = uuidutils.generate_uuid()
        node = f.make_node(self.ctx, provision_state='active',
                           instance_uuid=instance, traits=['CUSTOM_A'])
        a = node_reservation.backfill(self.ctx, self._new(traits=['CUSTOM_A']),
                                      node.id)
        self.assertEqual(instance, a.uuid)
        self.assertEqual(alloc_obj.ACTIVE, a.state)
        self.assertEqual(node.id, a.node_id)
        self.assertEqual('baremetal', a.resource_class)
        node.refresh()
        self.assertEqual(a.id, node.allocation_id)
        self.assertEqual(['CUSTOM_A'], node.instance_info['traits'])

    def test_backfill_node_without_instance(self):
        node = f.make_node(self.ctx, provision_state='active')
        a = node_reservation.backfill(
            self.ctx, self._new(resource_class='baremetal', name='b'),
            node.id)
        node.refresh()
        self.assertEqual(a.uuid, node.instance_uuid)

    def test_invalid_backfill_leaves_nothing(self):
        node = f.make_node(self.ctx)  # available, not active
        exc = self.assertRaises(
            exception.InvalidParameterValue, node_reservation.backfill,
            self.ctx, self._new(resource_class='other',
                                traits=['CUSTOM_A'],
                                candidate_nodes=[uuidutils.generate_uuid()]),
            node.id)
        self.assertEqual(400, exc.code)
        for word in ('"active"', 'resource class', 'CUSTOM_A',
                     'candidate_nodes'):
            self.assertIn(word, str(exc))
        self.assertEqual(0, self._count())
        node.refresh()
        self.assertIsNone(node.instance_uuid)

    def test_backfill_conflicts(self):
        node = f.make_node(self.ctx, provision_state='active',
                           instance_uuid=uuidutils.generate_uuid())
        exc = self.assertRaises(
            exception.NodeAssociated, node_reservation.backfill, self.ctx,
            self._new(uuid=uuidutils.generate_uuid()), node.id)
        self.assertEqual(409, exc.code)
        node_reservation.backfill(self.ctx, self._new(), node.id)
        self.assertRaises(exception.NodeAssociated,
                          node_reservation.backfill, self.ctx, self._new(),
                          node.id)
        self.assertEqual(1, self._count())
        locked = f.make_node(self.ctx, provision_state='active',
                             reservation='h')
        self.assertRaises(exception.NodeLocked, node_reservation.backfill,
                          self.ctx, self._new(), locked.id)
        self.assertRaises(exception.NodeNotFound, node_reservation.backfill,
                          self.ctx, self._new(), 123456)
        self.assertEqual(1, self._count())

    def test_backfill_duplicate_name(self):
        f.make_allocation(self.ctx, name='taken')
        node = f.make_node(self.ctx, provision_state='active')
        self.assertRaises(exception.AllocationDuplicateName,
                          node_reservation.backfill, self.ctx,
                          self._new(name='taken'), node.id)
        node.refresh()
        self.assertIsNone(node.instance_uuid)


class TestRelease(base.DBTestCase):

    def setUp(self):
        super().setUp()
        self.ctx = f.admin_context()
        self.node = f.make_node(self.ctx, traits=['CUSTOM_A'])
        self.allocation = f.make_allocation(self.ctx)
        node_reservation.reserve_node(self.ctx, self.allocation)

    def test_release_available_node(self):
        node_reservation.release_node(self.ctx, self.allocation)
        self.node.refresh()
        self.assertIsNone(self.node.instance_uuid)
        self.assertIsNone(self.node.allocation_id)
        self.assertRaises(exception.AllocationNotFound,
                          objects.Allocation.get_by_id, self.ctx,
                          self.allocation.id)

    def test_active_node_refused_unless_maintenance(self):
        self.node.provision_state = 'active'
        self.node.save()
        exc = self.assertRaises(exception.NodeIsAllocated,
                                node_reservation.release_node, self.ctx,
                                self.allocation)
        self.assertEqual(409, exc.code)
        self.node.refresh()
        self.assertEqual(self.allocation.uuid, self.node.instance_uuid)
        self.node.maintenance = True
        self.node.save()
        node_reservation.release_node(self.ctx, self.allocation)
        self.node.refresh()
        self.assertIsNone(self.node.allocation_id)

    def test_transient_state_refused(self):
        self.node.provision_state = 'deploying'
        self.node.target_provision_state = 'active'
        self.node.save()
        self.assertRaises(exception.NodeIsAllocated,
                          node_reservation.release_node, self.ctx,
                          self.allocation)

    def test_locked_node_refused(self):
        self.node.reservation = 'other'
        self.node.save()
        self.assertRaises(exception.NodeLocked,
                          node_reservation.release_node, self.ctx,
                          self.allocation)

    def test_release_error_allocation(self):
        a = f.make_allocation(self.ctx, state=alloc_obj.ERROR)
        node_reservation.release_node(self.ctx, a)
        self.assertRaises(exception.AllocationNotFound,
                          node_reservation.release_node, self.ctx, a)


@db_api.reader.connection
def _rows(context, where=()):
    return context.connection.execute(
        sa.select(node_reservation.NODES).where(*where)).all()


class TestFreeNodeRule(base.DBTestCase):
    """The SQL and the Python form of the free-node rule agree."""

    def setUp(self):
        super().setUp()
        self.ctx = f.admin_context()

    def test_both_forms_agree(self):
        instance = uuidutils.generate_uuid
        free = {f.make_node(self.ctx).uuid,
                # Neither the lock, the resource class nor the owner is
                # part of the rule.
                f.make_node(self.ctx, reservation='conductor-1').uuid,
                f.make_node(self.ctx, resource_class='other',
                            owner='p1').uuid}
        busy = {f.make_node(self.ctx, **kw).uuid for kw in (
            {'provision_state': 'active'},
            {'provision_state': 'manageable'},
            {'provision_state': 'deploying',
             'target_provision_state': 'active'},
            {'provision_state': None},
            {'maintenance': True},
            {'power_state': None},
            {'instance_uuid': instance()},
            {'provision_state': 'active', 'instance_uuid': instance()},
            {'maintenance': True, 'power_state': None},
        )}
        in_sql = {row.uuid for row in _rows(
            self.ctx, node_reservation.free_node_conditions())}
        self.assertEqual(free, in_sql)
        by_object = {n.uuid for n in objects.Node.list(self.ctx)
                     if node_reservation.node_is_free(n)}
        self.assertEqual(free, by_object)
        by_row = {row.uuid for row in _rows(self.ctx)
                  if node_reservation.node_is_free(row)}
        self.assertEqual(free, by_row)
        self.assertEqual(len(free) + len(busy), len(_rows(self.ctx)))


class TestDeallocationRule(base.DBTestCase):
    """Releasing the node follows verify_node_for_deallocation."""

    def setUp(self):
        super().setUp()
        self.ctx = f.admin_context()
        self.node = f.make_node(self.ctx)
        self.allocation = f.make_allocation(self.ctx)
        node_reservation.reserve_node(self.ctx, self.allocation)

    def test_state_outside_update_allowed_refused_without_target(self):
        self.node.provision_state = 'deploying'
        self.node.target_provision_state = None
        self.node.save()
        self.assertRaises(exception.NodeIsAllocated,
                          node_reservation.release_node, self.ctx,
                          self.allocation)
        self.node.maintenance = True
        self.node.save()
        node_reservation.release_node(self.ctx, self.allocation)

    def test_failure_state_released(self):
        self.node.provision_state = 'deploy failed'
        self.node.target_provision_state = 'active'
        self.node.save()
        node_reservation.release_node(self.ctx, self.allocation)
        self.node.refresh()
        self.assertIsNone(self.node.allocation_id)
