"""Node object and its SQL on the selected database backend."""

from unittest import mock

from oslo_db import exception as db_exc
from oslo_utils import uuidutils
import sqlalchemy as sa
from sqlalchemy import orm as sa_orm

from alloc_framework.common import exception
from alloc_framework.common import states
from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import trait as trait_obj
from tests import base
from tests.functional.objects.baremetal import factories


class NodeTestCase(base.DBTestCase):

    def setUp(self):
        super().setUp()
        self.ctx = factories.admin_context()

    def test_create_defaults(self):
        node = factories.create_node(self.ctx, name='node-1')
        self.assertIsInstance(node.id, int)
        self.assertEqual(states.ENROLL, node.provision_state)
        self.assertIsNone(node.target_provision_state)
        self.assertFalse(node.maintenance)
        self.assertFalse(node.protected)
        self.assertEqual('', node.conductor_group)
        self.assertEqual({}, node.driver_info)
        self.assertEqual([], node.traits)
        self.assertIsNotNone(node.created_at)
        self.assertEqual(set(), node.obj_what_changed())

    def test_create_generates_uuid(self):
        node = objects.Node(self.ctx, driver='fake-hardware')
        node.create()
        self.assertTrue(uuidutils.is_uuid_like(node.uuid))

    def test_create_requires_driver(self):
        node = objects.Node(self.ctx)
        self.assertRaises(exception.MissingParameterValue, node.create)

    def test_create_with_traits(self):
        node = factories.create_node(self.ctx, traits=['CUSTOM_B', 'CUSTOM_A'])
        self.assertEqual(['CUSTOM_A', 'CUSTOM_B'],
                         objects.Node.get_by_id(self.ctx, node.id).traits)

    def test_duplicate_uuid(self):
        node = factories.create_node(self.ctx)
        self.assertRaises(exception.NodeAlreadyExists, factories.create_node,
                          self.ctx, uuid=node.uuid)

    def test_duplicate_name(self):
        factories.create_node(self.ctx, name='dup')
        exc = self.assertRaises(exception.DuplicateName, factories.create_node,
                                self.ctx, name='dup')
        self.assertIn('dup', str(exc))
        self.assertEqual(409, exc.code)

    def test_duplicate_instance_uuid_on_save(self):
        inst = uuidutils.generate_uuid()
        factories.create_node(self.ctx, instance_uuid=inst)
        other = factories.create_node(self.ctx)
        other.instance_uuid = inst
        self.assertRaises(exception.InstanceAssociated, other.save)

    def test_get_by_ident(self):
        node = factories.create_node(self.ctx, name='by-name')
        for ident in (node.id, node.uuid, 'by-name'):
            self.assertEqual(node.uuid,
                             objects.Node.get(self.ctx, ident).uuid)
        inst = uuidutils.generate_uuid()
        node.instance_uuid = inst
        node.save()
        self.assertEqual(node.id, objects.Node.get_by_instance_uuid(
            self.ctx, inst).id)

    def test_get_not_found(self):
        self.assertRaises(exception.NodeNotFound, objects.Node.get,
                          self.ctx, uuidutils.generate_uuid())
        self.assertRaises(exception.NodeNotFound, objects.Node.get,
                          self.ctx, 'missing')
        self.assertRaises(exception.InstanceNotFound,
                          objects.Node.get_by_instance_uuid, self.ctx,
                          uuidutils.generate_uuid())

    def test_get_invalid_identity(self):
        self.assertRaises(exception.InvalidIdentity, objects.Node.get,
                          self.ctx, 'not a name!')

    def test_save_changes_only_changed(self):
        node = factories.create_node(self.ctx, extra={'a': 1})
        node.extra = {'b': 2}
        node.provision_state = states.MANAGEABLE
        node.save()
        fresh = objects.Node.get_by_uuid(self.ctx, node.uuid)
        self.assertEqual({'b': 2}, fresh.extra)
        self.assertEqual(states.MANAGEABLE, fresh.provision_state)
        self.assertIsNotNone(fresh.provision_updated_at)
        self.assertIsNotNone(fresh.updated_at)

    def test_save_missing_node(self):
        node = factories.create_node(self.ctx)
        node.destroy()
        node.name = 'gone'
        self.assertRaises(exception.NodeNotFound, node.save)

    def test_refresh(self):
        node = factories.create_node(self.ctx)
        other = objects.Node.get_by_id(self.ctx, node.id)
        other.maintenance = True
        other.save()
        node.refresh()
        self.assertTrue(node.maintenance)

    def test_destroy_removes_traits_and_history(self):
        node = factories.create_node(self.ctx, traits=['CUSTOM_X'])
        objects.NodeHistory.record(self.ctx, node, 'boom')
        node.destroy()
        self.assertRaises(exception.NodeNotFound, objects.Node.get_by_id,
                          self.ctx, node.id)
        self.assertEqual(
            [], objects.NodeHistory.list_by_node_id(self.ctx, node.id))

    def test_reserve_release(self):
        node = factories.create_node(self.ctx)
        self.assertEqual((True, None),
                         objects.Node.reserve(self.ctx, node.id, 'h1'))
        self.assertEqual((False, 'h1'),
                         objects.Node.reserve(self.ctx, node.id, 'h2'))
        self.assertRaises(exception.NodeNotLocked, objects.Node.release,
                          self.ctx, node.id, 'h2')
        objects.Node.release(self.ctx, node.id, 'h1')
        self.assertIsNone(
            objects.Node.get_by_id(self.ctx, node.id).reservation)
        self.assertRaises(exception.NodeNotFound, objects.Node.reserve,
                          self.ctx, node.id + 1000, 'h1')

    def test_release_is_retried_after_a_deadlock(self):
        # A lost release would leave the node locked until the conductor
        # restarts: a deadlock victim must be retried.
        node = factories.create_node(self.ctx)
        objects.Node.reserve(self.ctx, node.id, 'h1')
        real_execute = sa_orm.Session.execute
        calls = []

        def execute(session, statement, *args, **kwargs):
            if isinstance(statement, sa.Update) and not calls:
                calls.append(statement)
                raise db_exc.DBDeadlock()
            return real_execute(session, statement, *args, **kwargs)

        with mock.patch.object(sa_orm.Session, 'execute', execute):
            objects.Node.release(self.ctx, node.id, 'h1')
        self.assertEqual(1, len(calls))
        self.assertIsNone(
            objects.Node.get_by_id(self.ctx, node.id).reservation)

    def test_clear_reservations(self):
        a = factories.create_node(self.ctx)
        b = factories.create_node(self.ctx)
        objects.Node.reserve(self.ctx, a.id, 'h1')
        objects.Node.reserve(self.ctx, b.id, 'h2')
        self.assertEqual(1, objects.Node.clear_reservations(self.ctx, 'h1'))
        self.assertIsNone(objects.Node.get_by_id(self.ctx, a.id).reservation)
        self.assertEqual('h2',
                         objects.Node.get_by_id(self.ctx, b.id).reservation)


class NodeListTestCase(base.DBTestCase):

    def setUp(self):
        super().setUp()
        self.ctx = factories.admin_context()
        self.avail = factories.create_node(
            self.ctx, name='a', provision_state=states.AVAILABLE,
            resource_class='gold', owner='p1',
            traits=['CUSTOM_GPU', 'CUSTOM_SSD'])
        self.maint = factories.create_node(
            self.ctx, name='b', provision_state=states.AVAILABLE,
            resource_class='gold', maintenance=True, lessee='p1',
            traits=['CUSTOM_GPU'])
        self.active = factories.create_node(
            self.ctx, name='c', provision_state=states.ACTIVE,
            resource_class='silver', conductor_group='Group1',
            instance_uuid=uuidutils.generate_uuid())

    def _names(self, **kw):
        return [n.name for n in objects.Node.list(self.ctx, **kw)]

    def test_list_all_sorted(self):
        self.assertEqual(['a', 'b', 'c'], self._names())
        self.assertEqual(['c', 'b', 'a'],
                         self._names(sort_key='name', sort_dir='desc'))

    def test_filters(self):
        cases = [
            ({'provision_state': 'available'}, ['a', 'b']),
            ({'provision_state_in': ['active', 'enroll']}, ['c']),
            ({'maintenance': True}, ['b']),
            ({'resource_class': 'silver'}, ['c']),
            ({'associated': True}, ['c']),
            ({'associated': False}, ['a', 'b']),
            ({'instance_uuid': self.active.instance_uuid}, ['c']),
            ({'conductor_group': 'group1'}, ['c']),
            ({'owner': 'p1'}, ['a']),
            ({'lessee': 'p1'}, ['b']),
            ({'project': 'p1'}, ['a', 'b']),
            ({'uuid_in': [self.avail.uuid, self.active.uuid]}, ['a', 'c']),
            ({'traits': ['CUSTOM_GPU']}, ['a', 'b']),
            ({'traits': ['CUSTOM_GPU', 'CUSTOM_SSD']}, ['a']),
            ({'traits': ['CUSTOM_NONE']}, []),
            ({'reserved': False}, ['a', 'b', 'c']),
            ({'driver': 'fake-hardware'}, ['a', 'b', 'c']),
        ]
        for filters, expected in cases:
            self.assertEqual(expected, self._names(filters=filters),
                             filters)

    def test_shard_and_child_filters(self):
        self.avail.shard = 's1'
        self.avail.save()
        self.maint.shard = 's2'
        self.maint.save()
        child = factories.create_node(self.ctx, name='d',
                                      parent_node=self.avail.uuid)
        cases = [
            ({'shard_in': ['s1']}, ['a']),
            ({'shard_in': ['s1', 's2']}, ['a', 'b']),
            ({'sharded': True}, ['a', 'b']),
            ({'sharded': False}, ['c', 'd']),
            ({'include_children': False}, ['a', 'b', 'c']),
            ({'include_children': True}, ['a', 'b', 'c', 'd']),
            ({'parent_node': self.avail.uuid}, ['d']),
        ]
        for filters, expected in cases:
            self.assertEqual(expected, self._names(filters=filters),
                             filters)
        self.assertEqual(self.avail.uuid,
                         objects.Node.get_by_id(self.ctx,
                                                child.id).parent_node)

    def test_shard_counts(self):
        self.assertEqual([{'name': 'None', 'count': 3}],
                         objects.Node.shard_counts(self.ctx))
        for node, shard in ((self.avail, 'big'), (self.maint, 'big')):
            node.shard = shard
            node.save()
        factories.create_node(self.ctx, shard='small')
        self.assertEqual([{'name': 'big', 'count': 2},
                          {'name': 'None', 'count': 1},
                          {'name': 'small', 'count': 1}],
                         sorted(objects.Node.shard_counts(self.ctx),
                                key=lambda s: (-s['count'], s['name'])))
        self.assertEqual({'name': 'big', 'count': 2},
                         objects.Node.shard_counts(self.ctx)[0])

    def test_unknown_filter(self):
        self.assertRaises(exception.InvalidParameterValue, objects.Node.list,
                          self.ctx, filters={'bogus': 1})

    def test_invalid_sort(self):
        self.assertRaises(exception.InvalidParameterValue, objects.Node.list,
                          self.ctx, sort_key='driver_info')
        self.assertRaises(exception.InvalidParameterValue, objects.Node.list,
                          self.ctx, sort_dir='up')

    def test_pagination(self):
        first = objects.Node.list(self.ctx, limit=2)
        self.assertEqual(['a', 'b'], [n.name for n in first])
        rest = objects.Node.list(self.ctx, limit=2, marker=first[-1].uuid)
        self.assertEqual(['c'], [n.name for n in rest])
        self.assertRaises(exception.InvalidParameterValue, objects.Node.list,
                          self.ctx, marker=uuidutils.generate_uuid())

    def test_list_traits_loaded(self):
        nodes = {n.name: n for n in objects.Node.list(self.ctx)}
        self.assertEqual(['CUSTOM_GPU', 'CUSTOM_SSD'], nodes['a'].traits)
        self.assertEqual([], nodes['c'].traits)


class NodeTraitTestCase(base.DBTestCase):

    def setUp(self):
        super().setUp()
        self.ctx = factories.admin_context()
        self.node = factories.create_node(self.ctx)

    def test_set_and_get(self):
        self.assertEqual(['CUSTOM_A', 'HW_CPU_X86_AVX'], trait_obj.set_traits(
            self.ctx, self.node.id, ['HW_CPU_X86_AVX', 'CUSTOM_A',
                                     'CUSTOM_A']))
        self.assertEqual(['CUSTOM_A', 'HW_CPU_X86_AVX'],
                         trait_obj.get_traits(self.ctx, self.node.id))
        trait_obj.set_traits(self.ctx, self.node.id, [])
        self.assertEqual([], trait_obj.get_traits(self.ctx, self.node.id))

    def test_add_remove(self):
        trait_obj.add_trait(self.ctx, self.node.id, 'CUSTOM_A')
        trait_obj.add_trait(self.ctx, self.node.id, 'CUSTOM_A')
        self.assertEqual(['CUSTOM_A', 'CUSTOM_B'], trait_obj.add_traits(
            self.ctx, self.node.id, ['CUSTOM_B']))
        self.assertTrue(trait_obj.trait_exists(self.ctx, self.node.id,
                                               'CUSTOM_B'))
        trait_obj.remove_trait(self.ctx, self.node.id, 'CUSTOM_A')
        self.assertRaises(exception.NodeTraitNotFound,
                          trait_obj.remove_trait, self.ctx, self.node.id,
                          'CUSTOM_A')
        trait_obj.remove_all_traits(self.ctx, self.node.id)
        self.assertEqual([], objects.Node.get_by_id(
            self.ctx, self.node.id).traits)

    def test_invalid_names(self):
        for bad in ('lower', 'CUSTOM_lower', 'CUSTOM_', 'NOT_A_TRAIT', '',
                    'CUSTOM_' + 'X' * 250, 42):
            exc = self.assertRaises(exception.InvalidTrait,
                                    trait_obj.set_traits, self.ctx,
                                    self.node.id, [bad])
            self.assertEqual(400, exc.code)
        self.assertEqual([], trait_obj.get_traits(self.ctx, self.node.id))

    def test_limit(self):
        traits = ['CUSTOM_T%d' % i for i in range(50)]
        trait_obj.set_traits(self.ctx, self.node.id, traits)
        self.assertRaises(exception.TooManyTraits, trait_obj.add_trait,
                          self.ctx, self.node.id, 'CUSTOM_ONE_MORE')
        self.assertRaises(exception.TooManyTraits, trait_obj.set_traits,
                          self.ctx, self.node.id, traits + ['CUSTOM_X'])
        self.assertEqual(50, len(trait_obj.get_traits(self.ctx,
                                                      self.node.id)))

    def test_missing_node(self):
        self.assertRaises(exception.NodeNotFound, trait_obj.set_traits,
                          self.ctx, self.node.id + 99, ['CUSTOM_A'])
        self.assertRaises(exception.NodeNotFound, trait_obj.get_traits,
                          self.ctx, self.node.id + 99)
