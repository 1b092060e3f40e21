"""The Allocation versioned object on a real database."""

from oslo_utils import uuidutils

from alloc_framework.common import exception
from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import allocation as alloc_obj
from alloc_framework.objects.baremetal import node_reservation
from tests import base
from tests.functional.objects.baremetal import factories as f


class TestAllocationObject(base.DBTestCase):

    def setUp(self):
        super().setUp()
        self.ctx = f.admin_context()

    def _count(self):
        return len(objects.Allocation.list(self.ctx))

    def test_create_defaults(self):
        a = f.make_allocation(self.ctx, traits=['CUSTOM_B', 'CUSTOM_A'],
                              name='alloc-1', extra={'k': 'v'})
        self.assertTrue(uuidutils.is_uuid_like(a.uuid))
        self.assertEqual(alloc_obj.ALLOCATING, a.state)
        self.assertIsNone(a.node_id)
        self.assertIsNotNone(a.created_at)
        got = objects.Allocation.get_by_uuid(self.ctx, a.uuid)
        self.assertEqual(['CUSTOM_A', 'CUSTOM_B'], got.traits)
        self.assertEqual({'k': 'v'}, got.extra)
        self.assertEqual('baremetal', got.resource_class)
        self.assertEqual(a.id, objects.Allocation.get(self.ctx, 'alloc-1').id)
        self.assertEqual(a.id, objects.Allocation.get(self.ctx, a.uuid).id)
        self.assertEqual(a.uuid, objects.Allocation.get(self.ctx, a.id).uuid)
        self.assertEqual(a.uuid,
                         objects.Allocation.get(self.ctx, str(a.id)).uuid)

    def test_get_not_found(self):
        for ident in ('nope', uuidutils.generate_uuid(), 42):
            self.assertRaises(exception.AllocationNotFound,
                              objects.Allocation.get, self.ctx, ident)

    def test_duplicate_uuid_and_name(self):
        a = f.make_allocation(self.ctx, name='dup')
        exc = self.assertRaises(exception.AllocationAlreadyExists,
                                f.make_allocation, self.ctx, uuid=a.uuid)
        self.assertEqual(409, exc.code)
        self.assertRaises(exception.AllocationDuplicateName,
                          f.make_allocation, self.ctx, name='dup')
        self.assertEqual(1, self._count())

    def test_uuid_used_as_instance_uuid(self):
        instance = uuidutils.generate_uuid()
        node = f.make_node(self.ctx, instance_uuid=instance,
                           provision_state='active')
        exc = self.assertRaises(exception.InstanceAssociated,
                                f.make_allocation, self.ctx, uuid=instance)
        self.assertIn(node.uuid, str(exc))
        self.assertEqual(409, exc.code)
        self.assertEqual(0, self._count())

    def test_generated_uuid_is_not_checked(self):
        # A UUID generated for the allocation cannot be a node's
        # instance_uuid: the query that would check it is not made (the
        # node here carries it only to show that no check ran).
        instance = uuidutils.generate_uuid()
        f.make_node(self.ctx, instance_uuid=instance,
                    provision_state='active')
        allocation = objects.Allocation(self.ctx, resource_class='rc',
                                        uuid=instance)
        allocation.create(generated_uuid=True)
        self.assertEqual(instance, objects.Allocation.get_by_uuid(
            self.ctx, instance).uuid)
        # The UUID still identifies one allocation only.
        self.assertRaises(exception.AllocationAlreadyExists,
                          objects.Allocation(
                              self.ctx, resource_class='rc',
                              uuid=instance).create, generated_uuid=True)

    def test_list_filters_and_pages(self):
        made = [f.make_allocation(self.ctx, name='a%d' % i,
                                  resource_class='rc%d' % (i % 2),
                                  owner='p1' if i < 2 else None)
                for i in range(5)]
        listed = objects.Allocation.list(self.ctx)
        self.assertEqual([a.uuid for a in made], [a.uuid for a in listed])
        rc1 = objects.Allocation.list(self.ctx,
                                      filters={'resource_class': 'rc1'})
        self.assertEqual(['a1', 'a3'], [a.name for a in rc1])
        owned = objects.Allocation.list(self.ctx, filters={'owner': 'p1'})
        self.assertEqual(['a0', 'a1'], [a.name for a in owned])
        page = objects.Allocation.list(self.ctx, limit=2,
                                       marker=made[1].uuid)
        self.assertEqual(['a2', 'a3'], [a.name for a in page])
        desc = objects.Allocation.list(self.ctx, sort_key='name',
                                       sort_dir='desc', limit=2)
        self.assertEqual(['a4', 'a3'], [a.name for a in desc])
        self.assertEqual([], objects.Allocation.list(
            self.ctx, filters={'state': alloc_obj.ERROR}))
        self.assertRaises(exception.InvalidParameterValue,
                          objects.Allocation.list, self.ctx,
                          filters={'bogus': 1})
        self.assertRaises(exception.InvalidParameterValue,
                          objects.Allocation.list, self.ctx,
                          sort_key='extra')
        self.assertRaises(exception.AllocationNotFound,
                          objects.Allocation.list, self.ctx,
                          marker=uuidutils.generate_uuid())

    def test_list_affinity_not_in(self):
        a = f.make_allocation(self.ctx, conductor_affinity=1)
        b = f.make_allocation(self.ctx, conductor_affinity=2)
        c = f.make_allocation(self.ctx)
        got = objects.Allocation.list(
            self.ctx, filters={'conductor_affinity_not_in': [1]})
        self.assertEqual({b.uuid, c.uuid}, {x.uuid for x in got})
        got = objects.Allocation.list(
            self.ctx, filters={'conductor_affinity_not_in': []})
        self.assertEqual({a.uuid, b.uuid, c.uuid}, {x.uuid for x in got})

    def test_save(self):
        a = f.make_allocation(self.ctx, traits=['CUSTOM_A'])
        a.name = 'renamed'
        a.extra = {'x': 1}
        a.traits = ['CUSTOM_C']
        a.save()
        got = objects.Allocation.get(self.ctx, 'renamed')
        self.assertEqual({'x': 1}, got.extra)
        self.assertEqual(['CUSTOM_C'], got.traits)
        self.assertIsNotNone(got.updated_at)
        b = f.make_allocation(self.ctx, name='other')
        b.name = 'renamed'
        self.assertRaises(exception.AllocationDuplicateName, b.save)
        self.assertEqual('other', objects.Allocation.get_by_id(
            self.ctx, b.id).name)

    def test_save_is_guarded_by_affinity(self):
        a = f.make_allocation(self.ctx, conductor_affinity=1)
        stale = objects.Allocation.get_by_id(self.ctx, a.id)
        self.assertTrue(objects.Allocation.take_over(self.ctx, a.id, 1, 2))
        stale.state = alloc_obj.ERROR
        exc = self.assertRaises(exception.AllocationTakenOver, stale.save)
        self.assertEqual(409, exc.code)
        fresh = objects.Allocation.get_by_id(self.ctx, a.id)
        self.assertEqual(alloc_obj.ALLOCATING, fresh.state)
        self.assertEqual(2, fresh.conductor_affinity)
        fresh.state = alloc_obj.ERROR
        fresh.save()
        stale.refresh()
        self.assertEqual(alloc_obj.ERROR, stale.state)

    def test_save_deleted(self):
        a = f.make_allocation(self.ctx)
        objects.Allocation.get_by_id(self.ctx, a.id).destroy()
        a.name = 'gone'
        self.assertRaises(exception.AllocationNotFound, a.save)

    def test_take_over_compare_and_swap(self):
        a = f.make_allocation(self.ctx, conductor_affinity=1)
        self.assertTrue(objects.Allocation.take_over(self.ctx, a.id, 1, 2))
        self.assertFalse(objects.Allocation.take_over(self.ctx, a.id, 1, 3))
        self.assertEqual(2, objects.Allocation.get_by_id(
            self.ctx, a.id).conductor_affinity)
        orphan = f.make_allocation(self.ctx)
        self.assertTrue(objects.Allocation.take_over(
            self.ctx, orphan.id, None, 3))

    def test_destroy_releases_node(self):
        a = f.make_allocation(self.ctx)
        node = f.make_node(self.ctx, instance_uuid=a.uuid,
                           allocation_id=a.id)
        a.destroy()
        node.refresh()
        self.assertIsNone(node.instance_uuid)
        self.assertIsNone(node.allocation_id)
        self.assertEqual(0, self._count())
        self.assertRaises(exception.AllocationNotFound, a.destroy)

    def test_node_uuid_is_read_with_the_allocation(self):
        node = f.make_node(self.ctx, traits=['CUSTOM_A', 'CUSTOM_B'])
        a = f.make_allocation(self.ctx, traits=['CUSTOM_A', 'CUSTOM_B'])
        self.assertIsNone(a.node_uuid)
        self.assertIsNotNone(node_reservation.reserve_node(self.ctx, a))
        self.assertEqual(node.uuid, a.node_uuid)
        other = f.make_allocation(self.ctx)
        got = objects.Allocation.get_by_uuid(self.ctx, a.uuid)
        self.assertEqual(node.uuid, got.node_uuid)
        # One row per trait in the joined read: still one allocation.
        self.assertEqual(['CUSTOM_A', 'CUSTOM_B'], got.traits)
        self.assertIsNone(
            objects.Allocation.get_by_id(self.ctx, other.id).node_uuid)
        listed = {x.uuid: x.node_uuid
                  for x in objects.Allocation.list(self.ctx)}
        self.assertEqual({a.uuid: node.uuid, other.uuid: None}, listed)
        # Writing node_id keeps node_uuid in step.
        got.node_id = None
        got.save()
        self.assertIsNone(got.node_uuid)
        got.node_id = node.id
        got.save()
        self.assertEqual(node.uuid, got.node_uuid)
        self.assertNotIn('node_uuid', got.obj_what_changed())

    def test_read_only_some_fields(self):
        node = f.make_node(self.ctx, traits=['CUSTOM_A', 'CUSTOM_B'],
                           owner='p1')
        a = f.make_allocation(self.ctx, traits=['CUSTOM_B', 'CUSTOM_A'],
                              name='part', owner='p1', extra={'k': 'v'})
        node_reservation.reserve_node(self.ctx, a)
        got = objects.Allocation.get_by_uuid(self.ctx, a.uuid,
                                             fields=['state', 'last_error'])
        self.assertEqual((a.id, a.uuid, 'p1', alloc_obj.ACTIVE, None),
                         (got.id, got.uuid, got.owner, got.state,
                          got.last_error))
        self.assertEqual(a.conductor_affinity, got.conductor_affinity)
        for unread in ('name', 'extra', 'traits', 'node_uuid', 'node_id',
                       'resource_class', 'created_at'):
            self.assertFalse(got.obj_attr_is_set(unread), unread)
        self.assertEqual(set(), got.obj_what_changed())

        got = objects.Allocation.get_by_name(
            self.ctx, 'part', fields=('traits', 'node_uuid', 'extra'))
        self.assertEqual(['CUSTOM_A', 'CUSTOM_B'], got.traits)
        self.assertEqual((node.uuid, node.id), (got.node_uuid, got.node_id))
        self.assertEqual({'k': 'v'}, got.extra)
        self.assertFalse(got.obj_attr_is_set('state'))

        # An allocation without a node or traits, asked for both.
        other = f.make_allocation(self.ctx)
        got = objects.Allocation.get_by_uuid(
            self.ctx, other.uuid, fields=['node_uuid', 'traits'])
        self.assertEqual((None, None, []),
                         (got.node_uuid, got.node_id, got.traits))
        self.assertRaises(exception.AllocationNotFound,
                          objects.Allocation.get_by_uuid, self.ctx,
                          uuidutils.generate_uuid(), fields=['state'])

    def test_node_uuid_is_not_sent_to_version_1_0(self):
        node = f.make_node(self.ctx)
        a = f.make_allocation(self.ctx)
        node_reservation.reserve_node(self.ctx, a)
        data = a.obj_to_primitive(target_version='1.0')[
            'alloc_framework_object.data']
        self.assertNotIn('node_uuid', data)
        self.assertEqual(node.id, data['node_id'])
        self.assertEqual(node.uuid, a.obj_to_primitive()[
            'alloc_framework_object.data']['node_uuid'])
