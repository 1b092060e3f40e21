"""ProviderTree: shape, data, snapshots, population and threads."""

import copy
import threading

import os_traits
from oslo_utils import uuidutils
import testtools

from alloc_framework.placement_client import provider_tree

ROOT = 'c0ffee00-0000-4000-8000-000000000001'
CHILD = 'c0ffee00-0000-4000-8000-000000000002'
GRANDCHILD = 'c0ffee00-0000-4000-8000-000000000003'
OTHER_ROOT = 'c0ffee00-0000-4000-8000-000000000004'
SHARING = 'c0ffee00-0000-4000-8000-000000000005'

VCPU = {'total': 8, 'min_unit': 1, 'max_unit': 2147483647, 'step_size': 1,
        'reserved': 0, 'allocation_ratio': 1.0}


class TreeTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.tree = provider_tree.ProviderTree()
        self.tree.new_root('node', ROOT, generation=0)
        self.tree.new_child('numa0', 'node', uuid=CHILD, generation=3)
        self.tree.new_child('gpu0', CHILD, uuid=GRANDCHILD)


class ShapeTestCase(TreeTestCase):

    def test_new_root_and_children(self):
        data = self.tree.data('gpu0')
        self.assertEqual(GRANDCHILD, data.uuid)
        self.assertEqual('gpu0', data.name)
        self.assertEqual(CHILD, data.parent_uuid)
        self.assertEqual(ROOT, data.root_uuid)
        self.assertIsNone(data.generation)
        self.assertEqual(3, self.tree.data(CHILD).generation)
        self.assertIsNone(self.tree.data('node').parent_uuid)

    def test_new_child_makes_a_uuid(self):
        uuid = self.tree.new_child('gpu1', 'numa0')
        self.assertTrue(uuidutils.is_uuid_like(uuid))
        self.assertEqual('gpu1', self.tree.data(uuid).name)

    def test_exists(self):
        for name_or_uuid in ('node', ROOT, 'gpu0', GRANDCHILD):
            self.assertTrue(self.tree.exists(name_or_uuid))
        self.assertFalse(self.tree.exists('nope'))
        self.assertFalse(self.tree.exists(OTHER_ROOT))

    def test_unknown_provider_is_a_named_value_error(self):
        calls = [
            lambda: self.tree.data('nope'),
            lambda: self.tree.remove('nope'),
            lambda: self.tree.new_child('x', 'nope'),
            lambda: self.tree.update_inventory('nope', {}),
            lambda: self.tree.update_traits('nope', []),
            lambda: self.tree.update_aggregates('nope', []),
            lambda: self.tree.has_inventory_changed('nope', {}),
            lambda: self.tree.add_traits('nope', 'CUSTOM_X'),
            lambda: self.tree.get_provider_uuids('nope'),
            lambda: self.tree.get_provider_uuids_in_tree('nope'),
        ]
        for call in calls:
            exc = self.assertRaises(provider_tree.ProviderNotFound, call)
            self.assertIsInstance(exc, ValueError)
            self.assertIn('nope', str(exc))

    def test_duplicate_name_or_uuid(self):
        exc = self.assertRaises(provider_tree.DuplicateProvider,
                                self.tree.new_root, 'node', OTHER_ROOT)
        self.assertIsInstance(exc, ValueError)
        self.assertIn('node', str(exc))
        exc = self.assertRaises(provider_tree.DuplicateProvider,
                                self.tree.new_child, 'gpu9', 'node',
                                uuid=GRANDCHILD)
        self.assertIn(GRANDCHILD, str(exc))
        # A name is unique across roots too.
        self.assertRaises(provider_tree.DuplicateProvider,
                          self.tree.new_root, 'gpu0', OTHER_ROOT)
        self.assertFalse(self.tree.exists(OTHER_ROOT))

    def test_invalid_uuid_or_name(self):
        self.assertRaises(ValueError, self.tree.new_root, 'x', 'not-a-uuid')
        self.assertRaises(ValueError, self.tree.new_root, '', OTHER_ROOT)

    def test_remove_takes_the_subtree(self):
        self.tree.remove('numa0')
        self.assertTrue(self.tree.exists('node'))
        self.assertFalse(self.tree.exists(CHILD))
        self.assertFalse(self.tree.exists('gpu0'))
        self.assertEqual([ROOT], self.tree.get_provider_uuids())
        # Names and uuids are free again.
        self.tree.new_child('gpu0', 'node', uuid=GRANDCHILD)

    def test_remove_a_root(self):
        self.tree.new_root('other', OTHER_ROOT)
        self.tree.remove(ROOT)
        self.assertEqual([OTHER_ROOT], self.tree.root_uuids)
        self.assertEqual([OTHER_ROOT], self.tree.get_provider_uuids())

    def test_roots(self):
        self.tree.new_root('other', OTHER_ROOT)
        self.assertEqual([ROOT, OTHER_ROOT], self.tree.root_uuids)
        self.assertEqual(['node', 'other'],
                         [r.name for r in self.tree.roots])

    def test_get_provider_uuids_top_down(self):
        self.tree.new_child('numa1', 'node', uuid=SHARING)
        self.tree.new_root('other', OTHER_ROOT)
        uuids = self.tree.get_provider_uuids()
        self.assertEqual({ROOT, CHILD, GRANDCHILD, SHARING, OTHER_ROOT},
                         set(uuids))
        self.assertEqual(5, len(uuids))
        for uuid in uuids:
            parent = self.tree.data(uuid).parent_uuid
            if parent:
                self.assertLess(uuids.index(parent), uuids.index(uuid))
        self.assertEqual([CHILD, GRANDCHILD],
                         self.tree.get_provider_uuids('numa0'))

    def test_get_provider_uuids_in_tree(self):
        self.tree.new_root('other', OTHER_ROOT)
        uuids = self.tree.get_provider_uuids_in_tree('gpu0')
        self.assertEqual([ROOT, CHILD, GRANDCHILD], uuids)
        self.assertEqual([OTHER_ROOT],
                         self.tree.get_provider_uuids_in_tree('other'))

    def test_deepcopy_is_independent(self):
        self.tree.update_inventory('node', {'VCPU': VCPU})
        self.tree.update_traits('node', ['CUSTOM_A'])
        other = copy.deepcopy(self.tree)
        self.assertEqual(self.tree.get_provider_uuids(),
                         other.get_provider_uuids())
        self.assertEqual(self.tree.data('gpu0'), other.data('gpu0'))
        other.remove('numa0')
        other.update_traits('node', [])
        self.assertTrue(self.tree.exists('gpu0'))
        self.assertEqual({'CUSTOM_A'}, self.tree.data('node').traits)


class DataTestCase(TreeTestCase):

    def test_snapshot_cannot_change_the_tree(self):
        self.tree.update_inventory('node', {'VCPU': dict(VCPU)})
        self.tree.update_traits('node', ['CUSTOM_A'])
        self.tree.update_aggregates('node', [OTHER_ROOT])
        data = self.tree.data('node')
        data.inventory['VCPU']['total'] = 99
        data.inventory['MEMORY_MB'] = {'total': 1}
        self.assertRaises(AttributeError, lambda: data.traits.add('X'))
        self.assertRaises(AttributeError,
                          lambda: data.aggregates.add(SHARING))
        self.assertRaises(AttributeError, setattr, data, 'name', 'x')
        again = self.tree.data('node')
        self.assertEqual({'VCPU': VCPU}, again.inventory)
        self.assertEqual({'CUSTOM_A'}, again.traits)
        self.assertEqual({OTHER_ROOT}, again.aggregates)
        self.assertEqual('node', again.name)

    def test_update_inventory_copies_its_argument(self):
        inventory = {'VCPU': dict(VCPU)}
        self.tree.update_inventory('node', inventory)
        inventory['VCPU']['total'] = 1
        self.assertEqual(8, self.tree.data('node').inventory['VCPU']['total'])

    def test_update_inventory_says_if_changed(self):
        self.assertTrue(self.tree.update_inventory('node', {'VCPU': VCPU}))
        self.assertFalse(self.tree.update_inventory(ROOT, {'VCPU': VCPU}))
        self.assertTrue(self.tree.update_inventory(ROOT, {}))
        self.assertEqual({}, self.tree.data(ROOT).inventory)

    def test_generation_is_recorded_but_not_a_change(self):
        self.tree.update_inventory('node', {'VCPU': VCPU})
        self.assertFalse(
            self.tree.update_inventory('node', {'VCPU': VCPU}, generation=7))
        self.assertEqual(7, self.tree.data('node').generation)
        self.assertFalse(self.tree.update_traits('node', [], generation=8))
        self.assertEqual(8, self.tree.data('node').generation)
        self.assertFalse(
            self.tree.update_aggregates('node', [], generation=9))
        self.assertEqual(9, self.tree.data('node').generation)
        # None keeps the generation.
        self.tree.update_traits('node', ['CUSTOM_A'])
        self.assertEqual(9, self.tree.data('node').generation)

    def test_has_inventory_changed_defaults(self):
        self.tree.update_inventory('node', {'VCPU': VCPU})
        self.assertFalse(
            self.tree.has_inventory_changed('node', {'VCPU': {'total': 8}}))
        self.assertFalse(self.tree.update_inventory(
            'node', {'VCPU': {'total': 8, 'reserved': 0}}))
        for change in ({'total': 9}, {'total': 8, 'reserved': 1},
                       {'total': 8, 'max_unit': 4},
                       {'total': 8, 'allocation_ratio': 2.0},
                       {'total': 8, 'step_size': 2},
                       {'total': 8, 'min_unit': 2}):
            self.assertTrue(
                self.tree.has_inventory_changed('node', {'VCPU': change}),
                change)
        self.assertTrue(self.tree.has_inventory_changed('node', {}))
        self.assertTrue(self.tree.has_inventory_changed(
            'node', {'VCPU': VCPU, 'MEMORY_MB': {'total': 1}}))
        # A stored record missing a default equals a full new one.
        self.tree.update_inventory('numa0', {'PGPU': {'total': 2}})
        self.assertFalse(self.tree.has_inventory_changed('numa0', {
            'PGPU': {'total': 2, 'max_unit': 2147483647, 'min_unit': 1,
                     'step_size': 1, 'reserved': 0,
                     'allocation_ratio': 1.0}}))
        # Placement's max_unit, not the total, is the default.
        self.assertTrue(self.tree.has_inventory_changed('numa0', {
            'PGPU': {'total': 2, 'max_unit': 2}}))

    def test_traits(self):
        self.assertTrue(self.tree.update_traits('node', ['CUSTOM_A']))
        self.assertFalse(self.tree.update_traits('node', {'CUSTOM_A'}))
        self.assertTrue(self.tree.add_traits('node', 'CUSTOM_B', 'CUSTOM_C'))
        self.assertFalse(self.tree.add_traits('node', 'CUSTOM_B'))
        self.assertTrue(self.tree.has_traits('node', ['CUSTOM_A',
                                                      'CUSTOM_B']))
        self.assertFalse(self.tree.has_traits('node', ['CUSTOM_D']))
        self.assertTrue(self.tree.remove_traits('node', 'CUSTOM_A',
                                                'CUSTOM_D'))
        self.assertFalse(self.tree.remove_traits('node', 'CUSTOM_A'))
        self.assertEqual({'CUSTOM_B', 'CUSTOM_C'},
                         self.tree.data('node').traits)
        self.assertEqual(frozenset(), self.tree.data('numa0').traits)

    def test_aggregates(self):
        self.assertTrue(self.tree.update_aggregates('node', [OTHER_ROOT]))
        self.assertFalse(self.tree.update_aggregates('node', [OTHER_ROOT]))
        self.assertTrue(self.tree.add_aggregates('node', SHARING))
        self.assertTrue(self.tree.in_aggregates('node', [SHARING]))
        self.assertFalse(self.tree.in_aggregates('numa0', [SHARING]))
        self.assertTrue(self.tree.remove_aggregates('node', OTHER_ROOT))
        self.assertEqual({SHARING}, self.tree.data('node').aggregates)
        self.assertTrue(self.tree.update_aggregates('node', []))
        self.assertEqual(frozenset(), self.tree.data('node').aggregates)

    def test_has_sharing_provider(self):
        self.tree.new_root('shared-disk', SHARING)
        self.tree.update_inventory('shared-disk', {'DISK_GB': {'total': 1}})
        self.tree.update_inventory('node', {'VCPU': VCPU})
        self.assertFalse(self.tree.has_sharing_provider('DISK_GB'))
        self.tree.add_traits('shared-disk',
                             os_traits.MISC_SHARES_VIA_AGGREGATE)
        self.assertTrue(self.tree.has_sharing_provider('DISK_GB'))
        self.assertFalse(self.tree.has_sharing_provider('VCPU'))
        # The trait without the inventory is no sharing provider of it.
        self.tree.add_traits('node', os_traits.MISC_SHARES_VIA_AGGREGATE)
        self.assertFalse(self.tree.has_sharing_provider('MEMORY_MB'))
        self.assertTrue(self.tree.has_sharing_provider('VCPU'))


def _pd(name, uuid, parent=None, root=None, generation=1):
    return {'name': name, 'uuid': uuid, 'generation': generation,
            'parent_provider_uuid': parent,
            'root_provider_uuid': root or (uuid if parent is None else ROOT)}


class PopulateTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.tree = provider_tree.ProviderTree()

    def test_unordered_input(self):
        self.tree.populate_from_iterable([
            _pd('gpu0', GRANDCHILD, parent=CHILD),
            _pd('numa0', CHILD, parent=ROOT),
            _pd('other', OTHER_ROOT),
            _pd('node', ROOT, generation=5),
        ])
        self.assertEqual({ROOT, OTHER_ROOT}, set(self.tree.root_uuids))
        self.assertEqual([ROOT, CHILD, GRANDCHILD],
                         self.tree.get_provider_uuids('node'))
        self.assertEqual(5, self.tree.data('node').generation)
        self.assertEqual(CHILD, self.tree.data('gpu0').parent_uuid)

    def test_generator_input(self):
        self.tree.populate_from_iterable(
            pd for pd in [_pd('numa0', CHILD, parent=ROOT), _pd('node', ROOT)])
        self.assertEqual([ROOT, CHILD], self.tree.get_provider_uuids())

    def test_parent_already_in_tree(self):
        self.tree.new_root('node', ROOT)
        self.tree.populate_from_iterable([_pd('numa0', CHILD, parent=ROOT)])
        self.assertEqual([ROOT, CHILD], self.tree.get_provider_uuids())

    def test_unknown_parent(self):
        exc = self.assertRaises(
            ValueError, self.tree.populate_from_iterable,
            [_pd('node', ROOT), _pd('gpu0', GRANDCHILD, parent=CHILD)])
        self.assertIn('gpu0', str(exc))
        self.assertIn(CHILD, str(exc))
        # Nothing was added.
        self.assertEqual([], self.tree.get_provider_uuids())

    def test_existing_provider_is_refreshed(self):
        self.tree.new_root('node', ROOT, generation=1)
        self.tree.update_traits('node', ['CUSTOM_A'])
        self.tree.new_child('numa0', 'node', uuid=CHILD)
        self.tree.populate_from_iterable([_pd('node-renamed', ROOT,
                                              generation=4)])
        data = self.tree.data(ROOT)
        self.assertEqual(('node-renamed', 4, {'CUSTOM_A'}),
                         (data.name, data.generation, data.traits))
        self.assertFalse(self.tree.exists('node'))
        self.assertTrue(self.tree.exists(CHILD))

    def test_names_may_move_between_providers(self):
        self.tree.new_root('a', ROOT)
        self.tree.new_root('b', OTHER_ROOT)
        self.tree.populate_from_iterable([
            _pd('b', ROOT), _pd('c', OTHER_ROOT), _pd('a', SHARING)])
        self.assertEqual([('b', ROOT), ('c', OTHER_ROOT), ('a', SHARING)],
                         [(r.name, r.uuid) for r in self.tree.roots])
        self.assertEqual(SHARING, self.tree.data('a').uuid)

    def test_parent_differs_from_the_tree(self):
        self.tree.new_root('node', ROOT)
        self.tree.new_root('other', OTHER_ROOT)
        exc = self.assertRaises(
            ValueError, self.tree.populate_from_iterable,
            [_pd('node', ROOT, parent=OTHER_ROOT, root=OTHER_ROOT)])
        self.assertIn(ROOT, str(exc))
        self.assertIsNone(self.tree.data('node').parent_uuid)

    def test_duplicates(self):
        self.assertRaises(provider_tree.DuplicateProvider,
                          self.tree.populate_from_iterable,
                          [_pd('node', ROOT), _pd('node2', ROOT)])
        self.assertRaises(provider_tree.DuplicateProvider,
                          self.tree.populate_from_iterable,
                          [_pd('node', ROOT), _pd('node', OTHER_ROOT)])
        self.tree.new_root('node', ROOT)
        self.assertRaises(provider_tree.DuplicateProvider,
                          self.tree.populate_from_iterable,
                          [_pd('node', OTHER_ROOT)])
        self.assertEqual([ROOT], self.tree.get_provider_uuids())

    def test_wrong_root_or_loop(self):
        self.assertRaises(ValueError, self.tree.populate_from_iterable,
                          [_pd('node', ROOT),
                           _pd('numa0', CHILD, parent=ROOT,
                               root=OTHER_ROOT)])
        self.assertRaises(ValueError, self.tree.populate_from_iterable,
                          [_pd('a', ROOT, parent=CHILD, root=ROOT),
                           _pd('b', CHILD, parent=ROOT, root=ROOT)])
        self.assertEqual([], self.tree.get_provider_uuids())

    def test_empty(self):
        self.tree.populate_from_iterable([])
        self.assertEqual([], self.tree.root_uuids)


class ThreadsTestCase(testtools.TestCase):

    def test_concurrent_children(self):
        tree = provider_tree.ProviderTree()
        tree.new_root('node', ROOT)
        threads_count, per_thread = 8, 50
        errors = []
        start = threading.Barrier(threads_count)

        def add(index):
            try:
                start.wait()
                for i in range(per_thread):
                    parent = tree.new_child('t%d-c%d' % (index, i), 'node')
                    tree.new_child('t%d-g%d' % (index, i), parent)
                    tree.add_traits(parent, 'CUSTOM_T%d' % index)
                    tree.get_provider_uuids()
            except Exception as exc:
                errors.append(exc)

        threads = [threading.Thread(target=add, args=(n,))
                   for n in range(threads_count)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.assertEqual([], errors)
        uuids = tree.get_provider_uuids()
        self.assertEqual(1 + 2 * threads_count * per_thread, len(uuids))
        self.assertEqual(len(uuids), len(set(uuids)))
        for uuid in uuids:
            data = tree.data(uuid)
            self.assertEqual(ROOT, data.root_uuid)
            if data.parent_uuid:
                self.assertLess(uuids.index(data.parent_uuid),
                                uuids.index(uuid))
