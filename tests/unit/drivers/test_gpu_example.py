"""The plugin guide's hand-written GPU ``update_provider_tree``.

Checked against the contract of the reshaping specification, on a
``ProviderTree`` as the conductor hands it over.
"""

import copy

import testtools

from alloc_framework.drivers import node_tree
from alloc_framework.placement_client import exception as pc_exc
from tests.unit.drivers import gpu_example
from tests.unit.drivers import test_node_tree as t

NODE = t.NODE
GOLD = t.GOLD


class GPUExampleTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.hw = gpu_example.GPUHardware()
        self.gpus = [node_tree.child_uuid(NODE, 'gpu%d' % i)
                     for i in range(2)]

    def earlier_shape(self):
        return t.tree_with_root({GOLD: 1, 'PGPU': 2})

    def assert_new_shape(self, tree):
        self.assertEqual([NODE] + self.gpus, tree.get_provider_uuids(NODE))
        self.assertEqual({GOLD: 1}, t.inventories(tree, NODE))
        for i, gpu in enumerate(self.gpus):
            self.assertEqual({'PGPU': 1}, t.inventories(tree, gpu))
            self.assertEqual('%s_gpu%d' % (NODE, i), tree.data(gpu).name)

    def test_in_use_without_allocations_asks_for_a_reshape(self):
        tree = self.earlier_shape()
        before = copy.deepcopy(tree)
        node = t.FakeNode(properties={'gpus': 2}, allocation_id=7)
        self.assertRaises(pc_exc.ReshapeNeeded, self.hw.update_provider_tree,
                          tree, NODE, node=node)
        self.assertEqual(before.get_provider_uuids(),
                         tree.get_provider_uuids())
        self.assertEqual({GOLD: 1, 'PGPU': 2}, t.inventories(tree, NODE))

    def test_reshape_moves_the_gpus_and_their_allocations(self):
        tree = self.earlier_shape()
        node = t.FakeNode(properties={'gpus': 2}, allocation_id=7)
        allocations = {t.CONSUMER: t.consumer((NODE, {GOLD: 1, 'PGPU': 2}))}
        moves = self.hw.update_provider_tree(tree, NODE, node=node,
                                             allocations=allocations)
        self.assert_new_shape(tree)
        record = allocations[t.CONSUMER]
        self.assertEqual({NODE: {GOLD: 1}, self.gpus[0]: {'PGPU': 1},
                          self.gpus[1]: {'PGPU': 1}}, t.held(record))
        # What the reshaper checks the consumer against is kept.
        self.assertEqual(('p', 'u', 1), (record['project_id'],
                                         record['user_id'],
                                         record['consumer_generation']))
        self.assertIn('consumer %s: 2 PGPU to child providers' % t.CONSUMER,
                      moves)

    def test_two_consumers_get_different_gpus(self):
        tree = t.tree_with_root({'PGPU': 2})
        node = t.FakeNode(properties={'gpus': 2}, allocation_id=7)
        allocations = {t.CONSUMER: t.consumer((NODE, {'PGPU': 1})),
                       t.OTHER: t.consumer((NODE, {'PGPU': 1}))}
        self.hw.update_provider_tree(tree, NODE, node=node,
                                     allocations=allocations)
        held = [set(t.held(allocations[c])) for c in (t.CONSUMER, t.OTHER)]
        self.assertEqual(set(self.gpus), held[0] | held[1])
        self.assertEqual(set(), held[0] & held[1])

    def test_more_gpus_held_than_the_node_has_is_impossible(self):
        tree = self.earlier_shape()
        node = t.FakeNode(properties={'gpus': 1}, allocation_id=7)
        allocations = {t.CONSUMER: t.consumer((NODE, {GOLD: 1, 'PGPU': 2}))}
        self.assertRaises(node_tree.ReshapeImpossible,
                          self.hw.update_provider_tree, tree, NODE,
                          node=node, allocations=allocations)

    def test_unused_node_is_rewritten_without_a_reshape(self):
        tree = self.earlier_shape()
        node = t.FakeNode(properties={'gpus': 2})
        self.hw.update_provider_tree(tree, NODE, node=node)
        self.assert_new_shape(tree)

    def test_new_shape_is_left_as_it_is(self):
        tree = t.tree_with_root({GOLD: 1})
        node = t.FakeNode(properties={'gpus': 2}, allocation_id=7)
        self.hw.update_provider_tree(tree, NODE, node=node)
        self.assert_new_shape(tree)
        again = copy.deepcopy(tree)
        self.assertEqual([], self.hw.update_provider_tree(again, NODE,
                                                          node=node))
        for uuid in tree.get_provider_uuids():
            self.assertFalse(again.has_inventory_changed(
                uuid, tree.data(uuid).inventory))
