"""The shapes of a node's providers, and the moves of a reshape."""

import copy

import testtools

from alloc_framework.drivers import base as hw_base
from alloc_framework.drivers import fake_hardware
from alloc_framework.drivers import node_tree
from alloc_framework.placement_client import exception as pc_exc
from alloc_framework.placement_client import provider_tree

NODE = '1c0de000-0000-4000-8000-000000000001'
SHARING = '1c0de000-0000-4000-8000-000000000009'
CONSUMER = '5e1f0000-0000-4000-8000-00000000000c'
OTHER = '5e1f0000-0000-4000-8000-00000000000d'
GOLD = 'CUSTOM_GOLD'
SILVER = 'CUSTOM_SILVER'


class FakeNode:
    """What the shapes read of a node."""

    def __init__(self, resource_class='gold', properties=None,
                 allocation_id=None):
        self.uuid = NODE
        self.resource_class = resource_class
        self.properties = properties or {}
        self.allocation_id = allocation_id


def tree_with_root(inventories):
    tree = provider_tree.ProviderTree()
    tree.new_root('node-1', NODE, generation=4)
    tree.update_inventory(NODE, {rc: node_tree.inventory(total)
                                 for rc, total in inventories.items()})
    return tree


def consumer(*by_provider):
    """An allocations record as GET /allocations/{consumer} answers."""
    return {'allocations': {rp: {'generation': 4, 'resources': dict(r)}
                            for rp, r in by_provider},
            'project_id': 'p', 'user_id': 'u', 'consumer_generation': 1}


def held(record):
    return {rp: v['resources'] for rp, v in record['allocations'].items()}


def inventories(tree, rp_uuid):
    return {rc: r['total'] for rc, r in tree.data(rp_uuid).inventory.items()}


class GPUShapeTestCase(testtools.TestCase):
    """Worked reshape 1: GPUs move from the root to one child each."""

    def setUp(self):
        super().setUp()
        self.hw = hw_base.HardwareType()
        self.gpu0 = node_tree.child_uuid(NODE, 'gpu0')
        self.gpu1 = node_tree.child_uuid(NODE, 'gpu1')

    def test_new_node_gets_the_new_shape_directly(self):
        tree = tree_with_root({})
        node = FakeNode(properties={'gpus': 2})
        moves = self.hw.update_provider_tree(tree, NODE, node=node)
        self.assertEqual([], moves)
        self.assertEqual({GOLD: 1}, inventories(tree, NODE))
        self.assertEqual([NODE, self.gpu0, self.gpu1],
                         tree.get_provider_uuids(NODE))
        self.assertEqual('%s_gpu0' % NODE, tree.data(self.gpu0).name)
        self.assertEqual(NODE, tree.data(self.gpu1).parent_uuid)
        self.assertEqual({'PGPU': 1}, inventories(tree, self.gpu1))

    def test_child_uuids_are_stable(self):
        self.assertEqual(node_tree.child_uuid(NODE, 'gpu0'), self.gpu0)
        self.assertNotEqual(self.gpu0, self.gpu1)
        self.assertNotEqual(self.gpu0, node_tree.child_uuid(OTHER, 'gpu0'))

    def test_old_shape_in_use_needs_a_reshape(self):
        tree = tree_with_root({GOLD: 1, 'PGPU': 2})
        before = copy.deepcopy(tree)
        node = FakeNode(properties={'gpus': 2}, allocation_id=7)
        error = self.assertRaises(pc_exc.ReshapeNeeded,
                                  self.hw.update_provider_tree, tree, NODE,
                                  node=node)
        self.assertIn('PGPU', str(error))
        # Nothing changed.
        self.assertEqual(before.get_provider_uuids(),
                         tree.get_provider_uuids())
        self.assertEqual({GOLD: 1, 'PGPU': 2}, inventories(tree, NODE))

    def test_reshape_moves_each_consumers_gpus_to_the_children(self):
        tree = tree_with_root({GOLD: 1, 'PGPU': 2})
        node = FakeNode(properties={'gpus': 2}, allocation_id=7)
        allocations = {CONSUMER: consumer((NODE, {GOLD: 1, 'PGPU': 2}),
                                          (SHARING, {'DISK_GB': 10}))}
        moves = self.hw.update_provider_tree(tree, NODE, node=node,
                                             allocations=allocations)
        self.assertEqual({NODE: {GOLD: 1}, self.gpu0: {'PGPU': 1},
                          self.gpu1: {'PGPU': 1}, SHARING: {'DISK_GB': 10}},
                         held(allocations[CONSUMER]))
        # What is not the node's is left as it was; the rest unchanged.
        self.assertEqual(4, allocations[CONSUMER]['allocations'][SHARING][
            'generation'])
        self.assertEqual(1, allocations[CONSUMER]['consumer_generation'])
        self.assertEqual({GOLD: 1}, inventories(tree, NODE))
        self.assertEqual({'PGPU': 1}, inventories(tree, self.gpu0))
        self.assertTrue(any(CONSUMER in m for m in moves))

    def test_free_node_is_rewritten_without_a_reshape(self):
        tree = tree_with_root({GOLD: 1, 'PGPU': 2})
        node = FakeNode(properties={'gpus': 2})
        self.assertEqual([], self.hw.update_provider_tree(tree, NODE,
                                                          node=node))
        self.assertEqual({GOLD: 1}, inventories(tree, NODE))
        self.assertEqual(3, len(tree.get_provider_uuids(NODE)))

    def test_fewer_gpus_removes_children(self):
        tree = tree_with_root({})
        self.hw.update_provider_tree(tree, NODE, node=FakeNode(
            properties={'gpus': 2}))
        self.hw.update_provider_tree(tree, NODE, node=FakeNode(
            properties={'gpus': 1}))
        self.assertEqual([NODE, self.gpu0], tree.get_provider_uuids(NODE))

    def test_fewer_gpus_in_use_cuts_the_consumer(self):
        tree = tree_with_root({})
        self.hw.update_provider_tree(tree, NODE, node=FakeNode(
            properties={'gpus': 2}))
        node = FakeNode(properties={'gpus': 1}, allocation_id=7)
        self.assertRaises(pc_exc.ReshapeNeeded, self.hw.update_provider_tree,
                          tree, NODE, node=node)
        allocations = {CONSUMER: consumer((NODE, {GOLD: 1}),
                                          (self.gpu0, {'PGPU': 1}),
                                          (self.gpu1, {'PGPU': 1}))}
        moves = self.hw.update_provider_tree(tree, NODE, node=node,
                                             allocations=allocations)
        self.assertEqual({NODE: {GOLD: 1}, self.gpu0: {'PGPU': 1}},
                         held(allocations[CONSUMER]))
        self.assertTrue(any('cut' in m for m in moves))

    def test_gpu_counts(self):
        for value, count in ((2, 2), ('3', 3), (' 1 ', 1), (0, 0),
                             (-1, 0), ('x', 0), (None, 0), (True, 0),
                             (2.5, 0), ([2], 0)):
            node = FakeNode(properties={'gpus': value})
            self.assertEqual(count, len(self.hw.gpu_children(node)), value)


class NUMAShapeTestCase(testtools.TestCase):
    """Worked reshape 2: VCPU and MEMORY_MB split over two NUMA cells."""

    def setUp(self):
        super().setUp()
        self.hw = fake_hardware.FakeHardware()
        self.numa0 = node_tree.child_uuid(NODE, 'numa0')
        self.numa1 = node_tree.child_uuid(NODE, 'numa1')
        self.node = FakeNode(properties={'numa_nodes': 2, 'cpus': 9,
                                         'memory_mb': 4096},
                             allocation_id=3)

    def test_split_is_even_with_the_remainder_first(self):
        shape = self.hw.provider_shape(self.node)
        self.assertEqual({GOLD: 1}, {rc: r['total'] for rc, r
                                     in shape.root_inventories.items()})
        self.assertEqual(
            [('numa0', {'VCPU': 5, 'MEMORY_MB': 2048}),
             ('numa1', {'VCPU': 4, 'MEMORY_MB': 2048})],
            [(c.suffix, {rc: r['total'] for rc, r in c.inventories.items()})
             for c in shape.children])

    def test_no_numa_nodes_no_cells(self):
        node = FakeNode(properties={'cpus': 9, 'memory_mb': 4096})
        self.assertEqual([], self.hw.provider_shape(node).children)

    def test_several_classes_move_with_live_allocations(self):
        tree = tree_with_root({GOLD: 1, 'VCPU': 9, 'MEMORY_MB': 4096})
        self.assertRaises(pc_exc.ReshapeNeeded, self.hw.update_provider_tree,
                          tree, NODE, node=self.node)
        allocations = {
            CONSUMER: consumer((NODE, {GOLD: 1, 'VCPU': 9,
                                       'MEMORY_MB': 4096}))}
        self.hw.update_provider_tree(tree, NODE, node=self.node,
                                     allocations=allocations)
        self.assertEqual(
            {NODE: {GOLD: 1},
             self.numa0: {'VCPU': 5, 'MEMORY_MB': 2048},
             self.numa1: {'VCPU': 4, 'MEMORY_MB': 2048}},
            held(allocations[CONSUMER]))
        self.assertEqual({GOLD: 1}, inventories(tree, NODE))
        self.assertEqual({'VCPU': 4, 'MEMORY_MB': 2048},
                         inventories(tree, self.numa1))

    def test_two_consumers_share_what_is_free(self):
        tree = tree_with_root({GOLD: 1, 'VCPU': 8, 'MEMORY_MB': 4096})
        node = FakeNode(properties={'numa_nodes': 2, 'cpus': 8,
                                    'memory_mb': 4096}, allocation_id=3)
        allocations = {
            CONSUMER: consumer((NODE, {GOLD: 1, 'VCPU': 6})),
            OTHER: consumer((NODE, {'VCPU': 2, 'MEMORY_MB': 4096}))}
        self.hw.update_provider_tree(tree, NODE, node=node,
                                     allocations=allocations)
        self.assertEqual({NODE: {GOLD: 1}, self.numa0: {'VCPU': 4},
                          self.numa1: {'VCPU': 2}},
                         held(allocations[CONSUMER]))
        self.assertEqual({self.numa1: {'VCPU': 2, 'MEMORY_MB': 2048},
                          self.numa0: {'MEMORY_MB': 2048}},
                         held(allocations[OTHER]))


class RenameTestCase(testtools.TestCase):
    """Worked reshape 3: a class renamed under its consumers."""

    def setUp(self):
        super().setUp()
        self.hw = hw_base.HardwareType()

    def test_node_class_changed_in_use(self):
        tree = tree_with_root({GOLD: 1})
        node = FakeNode(resource_class='silver', allocation_id=1)
        error = self.assertRaises(pc_exc.ReshapeNeeded,
                                  self.hw.update_provider_tree, tree, NODE,
                                  node=node)
        self.assertIn('CUSTOM_GOLD renamed CUSTOM_SILVER', str(error))
        allocations = {CONSUMER: consumer((NODE, {GOLD: 1}))}
        self.hw.update_provider_tree(tree, NODE, node=node,
                                     allocations=allocations)
        self.assertEqual({NODE: {SILVER: 1}}, held(allocations[CONSUMER]))
        self.assertEqual({SILVER: 1}, inventories(tree, NODE))

    def test_node_class_changed_while_free(self):
        tree = tree_with_root({GOLD: 1})
        self.assertEqual([], self.hw.update_provider_tree(
            tree, NODE, node=FakeNode(resource_class='silver')))
        self.assertEqual({SILVER: 1}, inventories(tree, NODE))

    def test_custom_class_given_its_standard_name(self):
        tree = tree_with_root({GOLD: 1, 'CUSTOM_PGPU': 2})

        class Standard(hw_base.HardwareType):
            def provider_shape(self, node):
                shape = super().provider_shape(node)
                shape.root_inventories['PGPU'] = node_tree.inventory(2)
                shape.renames['CUSTOM_PGPU'] = 'PGPU'
                return shape

        node = FakeNode(allocation_id=1)
        allocations = {CONSUMER: consumer((NODE, {GOLD: 1,
                                                  'CUSTOM_PGPU': 2}))}
        Standard().update_provider_tree(tree, NODE, node=node,
                                        allocations=allocations)
        self.assertEqual({NODE: {GOLD: 1, 'PGPU': 2}},
                         held(allocations[CONSUMER]))
        self.assertEqual({GOLD: 1, 'PGPU': 2}, inventories(tree, NODE))

    def test_class_gone_is_dropped_from_consumers(self):
        tree = tree_with_root({GOLD: 1, 'FPGA': 1})
        node = FakeNode(allocation_id=1)
        self.assertRaises(pc_exc.ReshapeNeeded, self.hw.update_provider_tree,
                          tree, NODE, node=node)
        allocations = {CONSUMER: consumer((NODE, {GOLD: 1, 'FPGA': 1}))}
        moves = self.hw.update_provider_tree(tree, NODE, node=node,
                                             allocations=allocations)
        self.assertEqual({NODE: {GOLD: 1}}, held(allocations[CONSUMER]))
        self.assertTrue(any('FPGA dropped' in m for m in moves))

    def test_consumer_left_with_nothing_is_refused(self):
        tree = tree_with_root({GOLD: 1, 'FPGA': 1})
        allocations = {CONSUMER: consumer((NODE, {'FPGA': 1}))}
        before = copy.deepcopy(allocations)
        self.assertRaises(node_tree.ReshapeImpossible,
                          self.hw.update_provider_tree, tree, NODE,
                          node=FakeNode(allocation_id=1),
                          allocations=allocations)
        self.assertEqual({GOLD: 1, 'FPGA': 1}, inventories(tree, NODE))
        self.assertEqual(before, allocations)

    def test_unchanged_tree_moves_nothing(self):
        tree = tree_with_root({GOLD: 1})
        node = FakeNode(allocation_id=1)
        self.assertEqual([], self.hw.update_provider_tree(tree, NODE,
                                                          node=node))

    def test_duplicate_child_suffixes_refused(self):
        self.assertRaises(ValueError, node_tree.Shape, {}, [
            node_tree.Child('a', {}), node_tree.Child('a', {})])
