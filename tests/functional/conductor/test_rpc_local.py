"""The local transport hands over what the wire would carry."""

from unittest import mock

from alloc_framework.common import context as af_context
from alloc_framework.conductor import rpc_local
from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import base as obj_base
from tests import base
from tests.functional.objects.baremetal import factories


def _over_the_wire(context, value):
    ser = obj_base.AllocObjectSerializer()
    return ser.deserialize_entity(context, ser.serialize_entity(context,
                                                                value))


def _state(obj):
    return ({name: getattr(obj, name) for name in obj.fields
             if obj.obj_attr_is_set(name)},
            obj.obj_what_changed(), obj.VERSION, type(obj))


class CopyEntityTestCase(base.DBTestCase):

    def setUp(self):
        super().setUp()
        self.ctx = factories.admin_context()
        node = factories.create_node(self.ctx, name='n1', traits=['CUSTOM_A'],
                                     driver_info={'ipmi_address': '1.2.3.4'})
        self.node = objects.Node.get_by_uuid(self.ctx, node.uuid)
        self.allocation = objects.Allocation(
            self.ctx, resource_class='baremetal', traits=['CUSTOM_A'],
            candidate_nodes=[node.uuid], extra={'k': ['v']},
            conductor_affinity=None)
        self.allocation.create()
        self.other = af_context.RequestContext(project_id='p2')

    def test_same_as_the_serializer(self):
        self.node.extra = {'changed': True}
        self.allocation.name = 'renamed'
        for obj in (self.node, self.allocation):
            copied = rpc_local.copy_entity(self.other, obj)
            self.assertEqual(_state(_over_the_wire(self.other, obj)),
                             _state(copied))
            self.assertIs(self.other, copied._context)
            self.assertIsNot(obj, copied)

    def test_partly_set_object(self):
        allocation = objects.Allocation(resource_class='rc')
        copied = rpc_local.copy_entity(self.other, allocation)
        self.assertEqual(_state(_over_the_wire(self.other, allocation)),
                         _state(copied))
        self.assertFalse(copied.obj_attr_is_set('uuid'))

    def test_mutable_fields_are_not_shared(self):
        copied = rpc_local.copy_entity(self.other, self.allocation)
        copied.extra['k'].append('w')
        copied.traits.append('CUSTOM_B')
        copied.candidate_nodes.clear()
        self.assertEqual({'k': ['v']}, self.allocation.extra)
        self.assertEqual(['CUSTOM_A'], self.allocation.traits)
        self.assertEqual(1, len(self.allocation.candidate_nodes))
        copied.obj_reset_changes()
        copied.name = 'x'
        self.assertNotIn('name', self.allocation.obj_what_changed())

    def test_attributes_that_are_not_fields_stay_behind(self):
        # As over the wire: the affinity guard of a loaded allocation is
        # not a field, so a received object has none.
        self.assertIsNot(objects.allocation._NO_GUARD,
                         self.allocation._guard_affinity)
        copied = rpc_local.copy_entity(self.other, self.allocation)
        self.assertNotIn('_guard_affinity', vars(copied))
        self.assertIs(objects.allocation._NO_GUARD, copied._guard_affinity)

    def test_containers(self):
        value = {'nodes': [self.node], 'pair': ('a', 1), 'set': {1, 2},
                 'none': None}
        copied = rpc_local.copy_entity(self.other, value)
        self.assertEqual(value.keys(), copied.keys())
        self.assertIsNot(self.node, copied['nodes'][0])
        self.assertEqual(self.node.uuid, copied['nodes'][0].uuid)
        self.assertIs(self.other, copied['nodes'][0]._context)
        self.assertEqual(('a', 1), copied['pair'])
        self.assertEqual({1, 2}, copied['set'])
        self.assertIsNot(value['set'], copied['set'])
        self.assertIsNone(copied['none'])


class LocalTransportTestCase(base.DBTestCase):

    def test_call_copies_arguments_and_result(self):
        ctx = factories.admin_context()
        allocation = objects.Allocation(ctx, resource_class='rc',
                                        extra={'a': 1})
        seen = {}

        def create_allocation(context, allocation):
            seen['context'] = context
            seen['allocation'] = allocation
            allocation.extra['conductor'] = True
            return allocation

        manager = mock.Mock(host='local-test',
                            create_allocation=create_allocation)
        transport = rpc_local.LocalTransport(self.conf)
        transport.start_server(manager)
        self.addCleanup(transport.stop_server, manager)

        result = transport.call(ctx, 'local-test', 'create_allocation',
                                allocation=allocation)

        # The conductor got its own context and its own copy ...
        self.assertIsNot(ctx, seen['context'])
        self.assertEqual(ctx.to_dict(), seen['context'].to_dict())
        self.assertIsNot(allocation, seen['allocation'])
        self.assertIs(seen['context'], seen['allocation']._context)
        self.assertEqual({'a': 1}, allocation.extra)
        # ... and the caller gets a copy of the result, in its context.
        self.assertIsNot(seen['allocation'], result)
        self.assertIs(ctx, result._context)
        self.assertEqual({'a': 1, 'conductor': True}, result.extra)
