"""Objects survive the RPC serializer both ways."""

from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import base as obj_base
from tests import base
from tests.functional.objects.baremetal import factories


class SerializerTestCase(base.DBTestCase):

    def test_node_round_trip(self):
        ctx = factories.admin_context()
        node = factories.create_node(ctx, name='n1', traits=['CUSTOM_A'],
                                     driver_info={'ipmi_password': 'x'})
        node.extra = {'changed': True}
        ser = obj_base.AllocObjectSerializer()
        primitive = ser.serialize_entity(ctx, node)
        back = ser.deserialize_entity(ctx, primitive)
        self.assertIsInstance(back, objects.Node)
        self.assertEqual(node.uuid, back.uuid)
        self.assertEqual(['CUSTOM_A'], back.traits)
        self.assertEqual({'changed': True}, back.extra)
        # Pending changes travel with the object: the conductor saves them.
        self.assertEqual({'extra'}, back.obj_what_changed())
