"""ReportClient against our Placement (in process, HTTP) and upstream's.

Every test of :class:`ReportClientTests` runs three times. What
Placement holds afterwards is read back with plain requests
(``self.api``), and ``self.calls()`` shows what the client sent.
"""

import os_traits
from oslo_utils import uuidutils
import sqlalchemy as sa

from alloc_framework.placement_client import exception
from alloc_framework.placement_client import report
from tests.functional.placement_client import fixtures

ROOT = 'a0000000-0000-4000-8000-000000000001'
CHILD = 'a0000000-0000-4000-8000-000000000002'
GRANDCHILD = 'a0000000-0000-4000-8000-000000000003'
GPU0 = 'a0000000-0000-4000-8000-000000000010'
GPU1 = 'a0000000-0000-4000-8000-000000000011'
SHARING = 'a0000000-0000-4000-8000-000000000020'
OTHER_ROOT = 'a0000000-0000-4000-8000-000000000030'
AGG = 'a0000000-0000-4000-8000-0000000000a1'
CONSUMER_A = 'c0000000-0000-4000-8000-00000000000a'
CONSUMER_B = 'c0000000-0000-4000-8000-00000000000b'
CONSUMER_Z = 'c0000000-0000-4000-8000-00000000000f'


def inventory(total, **kw):
    return dict({'total': total}, **kw)


class ReportClientTests:

    # --- get_provider_tree_and_ensure_root -----------------------------------

    def test_ensure_root_creates_a_missing_root(self):
        tree = self.client.get_provider_tree_and_ensure_root(
            None, ROOT, name='node-a')
        self.assertEqual([ROOT], tree.root_uuids)
        data = tree.data(ROOT)
        self.assertEqual('node-a', data.name)
        self.assertEqual(0, data.generation)
        provider = self.api.provider(ROOT)
        self.assertEqual('node-a', provider['name'])
        self.assertIsNone(provider['parent_provider_uuid'])
        # The name defaults to the uuid.
        tree = self.client.get_provider_tree_and_ensure_root(None,
                                                             OTHER_ROOT)
        self.assertEqual(OTHER_ROOT, self.api.provider(OTHER_ROOT)['name'])
        # The cache holds both trees, and the copy is the caller's.
        self.assertEqual([ROOT, OTHER_ROOT], tree.root_uuids)
        tree.remove(ROOT)
        again = self.client.get_provider_tree_and_ensure_root(None, ROOT)
        self.assertTrue(again.exists(ROOT))

    def test_ensure_root_reads_an_existing_tree_whole(self):
        self.api.create('node', uuid=ROOT,
                        inventories={'VCPU': inventory(8, reserved=1)},
                        traits=[os_traits.HW_CPU_X86_AVX2],
                        aggregates=[AGG])
        self.api.create('numa0', parent=ROOT, uuid=CHILD,
                        inventories={'MEMORY_MB': inventory(1024)})
        self.api.create('gpu0', parent=CHILD, uuid=GRANDCHILD)
        # Asked for a child: the whole tree comes, from its root.
        tree = self.client.get_provider_tree_and_ensure_root(None, CHILD)
        self.assertEqual([ROOT, CHILD, GRANDCHILD],
                         tree.get_provider_uuids())
        root = tree.data(ROOT)
        self.assertEqual(8, root.inventory['VCPU']['total'])
        self.assertEqual(1, root.inventory['VCPU']['reserved'])
        self.assertEqual({os_traits.HW_CPU_X86_AVX2}, root.traits)
        self.assertEqual({AGG}, root.aggregates)
        self.assertEqual(CHILD, tree.data(GRANDCHILD).parent_uuid)
        self.assertEqual({'MEMORY_MB'}, set(tree.data(CHILD).inventory))
        for uuid in (ROOT, CHILD, GRANDCHILD):
            self.assertEqual(self.api.provider(uuid)['generation'],
                             tree.data(uuid).generation)
        # One list, then inventories, traits, aggregates per provider.
        self.assertEqual(1 + 3 * 3, len(self.calls()))
        # A tree in the cache is not read again.
        self.client.get_provider_tree_and_ensure_root(None, ROOT)
        self.assertEqual([], self.calls())

    def test_ensure_child(self):
        self.client.get_provider_tree_and_ensure_root(None, ROOT, 'node')
        tree = self.client.get_provider_tree_and_ensure_root(
            None, CHILD, 'node-numa0', parent_provider_uuid=ROOT)
        self.assertEqual(ROOT, self.api.provider(CHILD)[
            'parent_provider_uuid'])
        self.assertEqual(ROOT, tree.data('node-numa0').parent_uuid)
        self.assertEqual([ROOT, CHILD], tree.get_provider_uuids())

    def test_ensure_root_duplicate_name(self):
        self.api.create('taken', uuid=OTHER_ROOT)
        exc = self.assertRaises(
            exception.PlacementAPIError,
            self.client.get_provider_tree_and_ensure_root, None, ROOT,
            'taken')
        self.assertEqual(409, exc.status)
        self.assertEqual('placement.duplicate_name', exc.code)
        self.assertEqual('POST', exc.method)
        self.assertIn('taken', str(exc))
        self.assertFalse(self.api.exists(ROOT))

    # --- update_from_provider_tree: shape and data --------------------------

    def test_update_creates_children_and_custom_names(self):
        tree = self.client.get_provider_tree_and_ensure_root(None, ROOT,
                                                             'node')
        self.calls()
        tree.new_child('node-numa0', ROOT, uuid=CHILD)
        tree.new_child('node-numa0-gpu', CHILD, uuid=GRANDCHILD)
        tree.update_inventory(CHILD, {'CUSTOM_REPORT_GPU': inventory(2)})
        tree.update_traits(GRANDCHILD, ['CUSTOM_REPORT_FAST',
                                        os_traits.HW_CPU_X86_AVX2])
        tree.update_aggregates(ROOT, [AGG])
        self.client.update_from_provider_tree(None, tree)

        self.assertEqual([CHILD], self.api.children(ROOT))
        self.assertEqual([GRANDCHILD], self.api.children(CHILD))
        self.assertEqual({'CUSTOM_REPORT_GPU': 2},
                         self.api.inventories(CHILD))
        self.assertEqual({'CUSTOM_REPORT_FAST', os_traits.HW_CPU_X86_AVX2},
                         self.api.traits(GRANDCHILD))
        self.assertEqual({AGG}, self.api.aggregates(ROOT))
        calls = self.calls()
        self.assertIn(('PUT', '/resource_classes/CUSTOM_REPORT_GPU'), calls)
        self.assertIn(('PUT', '/traits/CUSTOM_REPORT_FAST'), calls)
        posts = [c for c in calls if c[0] == 'POST']
        self.assertEqual(2, len(posts))  # the two children, parent first
        # Nothing else than what changed: no request about the root's
        # inventory or traits.
        root_path = '/resource_providers/%s' % ROOT
        self.assertNotIn(('PUT', root_path + '/inventories'), calls)
        self.assertNotIn(('PUT', root_path + '/traits'), calls)
        # The cache has Placement's generations: the copy it gives now
        # is current, and flushing it unchanged sends nothing.
        tree = self.client.get_provider_tree_and_ensure_root(None, ROOT)
        for uuid in (ROOT, CHILD, GRANDCHILD):
            self.assertEqual(self.api.provider(uuid)['generation'],
                             tree.data(uuid).generation)
        self.client.update_from_provider_tree(None, tree)
        self.assertEqual([], self.calls())
        # And a further change is written without conflict.
        tree.update_inventory(GRANDCHILD, {'VCPU': inventory(2)})
        self.client.update_from_provider_tree(None, tree)
        self.assertEqual({'VCPU': 2}, self.api.inventories(GRANDCHILD))

    def test_unchanged_tree_sends_nothing(self):
        self.api.create('node', uuid=ROOT,
                        inventories={'VCPU': inventory(8)},
                        traits=['CUSTOM_REPORT_T'], aggregates=[AGG])
        self.api.create('numa0', parent=ROOT, uuid=CHILD,
                        inventories={'MEMORY_MB': inventory(64)})
        tree = self.client.get_provider_tree_and_ensure_root(None, ROOT)
        self.calls()
        # Records left partly to their defaults compare equal.
        tree.update_inventory(ROOT, {'VCPU': {'total': 8}})
        self.client.update_from_provider_tree(None, tree)
        self.client.update_from_provider_tree(None, tree, allocations={})
        self.assertEqual([], self.calls())

    def test_update_renames(self):
        tree = self.client.get_provider_tree_and_ensure_root(None, ROOT,
                                                             'old-name')
        tree.populate_from_iterable([{'uuid': ROOT, 'name': 'new-name',
                                      'parent_provider_uuid': None}])
        self.client.update_from_provider_tree(None, tree)
        self.assertEqual('new-name', self.api.provider(ROOT)['name'])

    def test_update_removes_subtrees_bottom_up(self):
        self.api.create('node', uuid=ROOT)
        self.api.create('numa0', parent=ROOT, uuid=CHILD,
                        inventories={'MEMORY_MB': inventory(64)})
        self.api.create('gpu0', parent=CHILD, uuid=GRANDCHILD)
        tree = self.client.get_provider_tree_and_ensure_root(None, ROOT)
        self.calls()
        tree.remove(CHILD)
        self.client.update_from_provider_tree(None, tree)
        self.assertEqual(
            [('DELETE', '/resource_providers/%s' % GRANDCHILD),
             ('DELETE', '/resource_providers/%s' % CHILD)], self.calls())
        self.assertFalse(self.api.exists(CHILD))
        self.assertFalse(self.api.exists(GRANDCHILD))
        self.assertTrue(self.api.exists(ROOT))
        tree = self.client.get_provider_tree_and_ensure_root(None, ROOT)
        self.assertEqual([ROOT], tree.get_provider_uuids())

    def test_delete_provider_with_subtree(self):
        self.api.create('node', uuid=ROOT)
        self.api.create('numa0', parent=ROOT, uuid=CHILD)
        self.api.create('gpu0', parent=CHILD, uuid=GRANDCHILD)
        self.client.get_provider_tree_and_ensure_root(None, ROOT)
        self.assertTrue(self.client.delete_provider(ROOT))
        for uuid in (ROOT, CHILD, GRANDCHILD):
            self.assertFalse(self.api.exists(uuid))
        self.assertFalse(self.client.delete_provider(ROOT))
        # The cache forgot the tree: asking again creates it anew.
        tree = self.client.get_provider_tree_and_ensure_root(None, ROOT)
        self.assertEqual([ROOT], tree.get_provider_uuids())

    # --- conflicts and failures ---------------------------------------------

    def test_conflict_then_reread_and_retry(self):
        self.api.create('node', uuid=ROOT,
                        inventories={'VCPU': inventory(4)})
        tree = self.client.get_provider_tree_and_ensure_root(None, ROOT)
        # Someone else changes the provider: its generation moves on.
        generation = self.api.provider(ROOT)['generation']
        self.api.call('PUT', '/resource_providers/%s/traits' % ROOT, {
            'resource_provider_generation': generation,
            'traits': [os_traits.HW_CPU_X86_AVX2]})
        tree.update_inventory(ROOT, {'VCPU': inventory(8)})
        exc = self.assertRaises(exception.ProviderUpdateConflict,
                                self.client.update_from_provider_tree,
                                None, tree)
        self.assertIsInstance(exc.cause, exception.PlacementAPIError)
        self.assertEqual(409, exc.cause.status)
        self.assertEqual('placement.concurrent_update', exc.cause.code)
        self.assertEqual({'VCPU': 4}, self.api.inventories(ROOT))
        # The tree was dropped from the cache: the next copy is re-read
        # and shows the other writer's change.
        self.calls()
        tree = self.client.get_provider_tree_and_ensure_root(None, ROOT)
        self.assertNotEqual([], self.calls())
        self.assertEqual({os_traits.HW_CPU_X86_AVX2}, tree.data(ROOT).traits)
        tree.update_inventory(ROOT, {'VCPU': inventory(8)})
        self.client.update_from_provider_tree(None, tree)
        self.assertEqual({'VCPU': 8}, self.api.inventories(ROOT))
        self.assertEqual({os_traits.HW_CPU_X86_AVX2}, self.api.traits(ROOT))

    def test_update_failure_without_allocations(self):
        self.api.create('node', uuid=ROOT,
                        inventories={'VCPU': inventory(4)})
        self.api.allocate(CONSUMER_A, {ROOT: {'VCPU': 2}})
        tree = self.client.get_provider_tree_and_ensure_root(None, ROOT)
        # Inventory in use cannot go without moving its allocations.
        tree.update_inventory(ROOT, {})
        exc = self.assertRaises(exception.ProviderUpdateFailed,
                                self.client.update_from_provider_tree,
                                None, tree)
        self.assertEqual(409, exc.cause.status)
        self.assertEqual('placement.inventory.inuse', exc.cause.code)
        self.assertEqual({'VCPU': 4}, self.api.inventories(ROOT))

    def test_update_needs_the_roots_in_the_cache(self):
        tree = self.client.get_provider_tree_and_ensure_root(None, ROOT)
        self.client.clear_provider_cache(ROOT)
        self.calls()
        self.assertRaises(ValueError, self.client.update_from_provider_tree,
                          None, tree)
        self.assertEqual([], self.calls())

    # --- allocations and reshapes -------------------------------------------

    def _node_with_gpus(self):
        """A root with VCPU and PGPU, one consumer holding both."""
        self.api.create('node', uuid=ROOT, inventories={
            'VCPU': inventory(8), 'PGPU': inventory(2)})
        self.api.allocate(CONSUMER_A, {ROOT: {'VCPU': 2, 'PGPU': 2}})
        return self.client.get_provider_tree_and_ensure_root(None, ROOT)

    def test_reshape_moves_inventory_and_allocations_to_children(self):
        tree = self._node_with_gpus()
        allocations = self.client.get_allocations_for_provider_tree(
            None, 'node')
        self.assertEqual([CONSUMER_A], list(allocations))
        record = allocations[CONSUMER_A]
        self.assertEqual(fixtures.PROJECT, record['project_id'])
        self.assertEqual(fixtures.USER, record['user_id'])
        self.calls()
        # The driver's new shape: one child per GPU, the allocations
        # follow.
        for index, uuid in enumerate((GPU0, GPU1)):
            tree.new_child('node_gpu%d' % index, ROOT, uuid=uuid)
            tree.update_inventory(uuid, {'PGPU': inventory(1)})
        tree.update_inventory(ROOT, {'VCPU': inventory(8)})
        record['allocations'] = {
            ROOT: {'resources': {'VCPU': 2}},
            GPU0: {'resources': {'PGPU': 1}},
            GPU1: {'resources': {'PGPU': 1}}}
        self.client.update_from_provider_tree(None, tree, allocations)

        calls = self.calls()
        self.assertEqual(1, calls.count(('POST', '/reshaper')))
        self.assertFalse([c for c in calls if c[1].endswith('/inventories')])
        self.assertEqual({'VCPU': 8}, self.api.inventories(ROOT))
        self.assertEqual({'PGPU': 1}, self.api.inventories(GPU0))
        self.assertEqual({'PGPU': 1}, self.api.inventories(GPU1))
        self.assertEqual({ROOT: {'VCPU': 2}, GPU0: {'PGPU': 1},
                          GPU1: {'PGPU': 1}},
                         self.api.allocations(CONSUMER_A))
        self.assertEqual({'VCPU': 2}, self.api.usages(ROOT))
        self.assertEqual({'PGPU': 1}, self.api.usages(GPU0))
        self.assertEqual({'PGPU': 1}, self.api.usages(GPU1))
        # The cache learnt the generations the reshape left.
        tree = self.client.get_provider_tree_and_ensure_root(None, ROOT)
        for uuid in (ROOT, GPU0, GPU1):
            self.assertEqual(self.api.provider(uuid)['generation'],
                             tree.data(uuid).generation)
        tree.update_traits(GPU0, ['CUSTOM_REPORT_VGPU'])
        self.client.update_from_provider_tree(None, tree)
        self.assertEqual({'CUSTOM_REPORT_VGPU'}, self.api.traits(GPU0))

    def test_reshape_empties_removed_providers_first(self):
        self.api.create('node', uuid=ROOT)
        self.api.create('old', parent=ROOT, uuid=CHILD,
                        inventories={'VCPU': inventory(4)})
        self.api.allocate(CONSUMER_A, {CHILD: {'VCPU': 2}})
        tree = self.client.get_provider_tree_and_ensure_root(None, ROOT)
        allocations = self.client.get_allocations_for_provider_tree(
            None, ROOT)
        self.calls()
        tree.remove(CHILD)
        tree.new_child('new', ROOT, uuid=GRANDCHILD)
        tree.update_inventory(GRANDCHILD, {'VCPU': inventory(4)})
        allocations[CONSUMER_A]['allocations'] = {
            GRANDCHILD: {'resources': {'VCPU': 2}}}
        self.client.update_from_provider_tree(None, tree, allocations)
        calls = self.calls()
        self.assertEqual(1, calls.count(('POST', '/reshaper')))
        self.assertLess(calls.index(('POST', '/reshaper')), calls.index(
            ('DELETE', '/resource_providers/%s' % CHILD)))
        self.assertFalse(self.api.exists(CHILD))
        self.assertEqual({GRANDCHILD: {'VCPU': 2}},
                         self.api.allocations(CONSUMER_A))
        self.assertEqual({'VCPU': 2}, self.api.usages(GRANDCHILD))

    def _assert_unchanged(self, generation):
        self.assertEqual({'VCPU': 8, 'PGPU': 2}, self.api.inventories(ROOT))
        self.assertEqual({ROOT: {'VCPU': 2, 'PGPU': 2}},
                         self.api.allocations(CONSUMER_A))
        self.assertEqual(generation, self.api.provider(ROOT)['generation'])

    def _bad_reshape(self, expected, inventories, resources,
                     consumer_generation_delta=0):
        tree = self._node_with_gpus()
        generation = self.api.provider(ROOT)['generation']
        allocations = self.client.get_allocations_for_provider_tree(
            None, ROOT)
        record = allocations[CONSUMER_A]
        record['allocations'] = {ROOT: {'resources': resources}}
        record['consumer_generation'] += consumer_generation_delta
        tree.update_inventory(ROOT, inventories)
        exc = self.assertRaises(expected,
                                self.client.update_from_provider_tree,
                                None, tree, allocations)
        self._assert_unchanged(generation)
        self.assertIsInstance(exc.cause, exception.PlacementAPIError)
        # Dropped from the cache: read again next time.
        self.calls()
        self.client.get_provider_tree_and_ensure_root(None, ROOT)
        self.assertNotEqual([], self.calls())
        return exc

    def test_bad_reshape_unknown_resource_class(self):
        exc = self._bad_reshape(
            exception.ReshapeFailed,
            {'VCPU': inventory(8), 'NO_SUCH_CLASS': inventory(2)},
            {'VCPU': 2, 'NO_SUCH_CLASS': 2})
        self.assertEqual(400, exc.cause.status)

    def test_bad_reshape_allocation_does_not_fit(self):
        exc = self._bad_reshape(
            exception.ReshapeFailed,
            {'VCPU': inventory(8), 'MEMORY_MB': inventory(1024)},
            {'VCPU': 2, 'MEMORY_MB': 4096})
        self.assertNotEqual('placement.concurrent_update', exc.cause.code)

    def test_bad_reshape_wrong_consumer_generation(self):
        # A consumer generation that is not current is a conflict
        # (Placement's placement.concurrent_update): re-read and retry.
        exc = self._bad_reshape(
            exception.ProviderUpdateConflict,
            {'VCPU': inventory(8), 'MEMORY_MB': inventory(1024)},
            {'VCPU': 2, 'MEMORY_MB': 512}, consumer_generation_delta=5)
        self.assertEqual(409, exc.cause.status)

    def test_reshape_failure_is_not_a_provider_update_failure(self):
        # Without allocations the same failure is ProviderUpdateFailed.
        tree = self._node_with_gpus()
        tree.update_inventory(ROOT, {'VCPU': inventory(8),
                                     'NO_SUCH_CLASS': inventory(1)})
        self.assertRaises(exception.ProviderUpdateFailed,
                          self.client.update_from_provider_tree, None, tree)

    def test_allocations_for_provider_tree(self):
        # ROOT and CHILD are local; SHARING shares DISK_GB with them.
        self.api.create('node', uuid=ROOT, aggregates=[AGG],
                        inventories={'VCPU': inventory(8)})
        self.api.create('numa0', parent=ROOT, uuid=CHILD,
                        inventories={'PGPU': inventory(4)})
        self.api.create('shared-disk', uuid=SHARING, aggregates=[AGG],
                        traits=[os_traits.MISC_SHARES_VIA_AGGREGATE],
                        inventories={'DISK_GB': inventory(100)})
        self.api.create('other-node', uuid=OTHER_ROOT,
                        inventories={'VCPU': inventory(8)})
        # A: on two local providers and the sharing one; B: on the child.
        self.api.allocate(CONSUMER_A, {ROOT: {'VCPU': 1},
                                       CHILD: {'PGPU': 1},
                                       SHARING: {'DISK_GB': 10}})
        self.api.allocate(CONSUMER_B, {CHILD: {'PGPU': 2}})
        # Z only on the sharing provider and another node: not ours.
        self.api.allocate(CONSUMER_Z, {SHARING: {'DISK_GB': 5},
                                       OTHER_ROOT: {'VCPU': 1}})
        self.client.get_provider_tree_and_ensure_root(None, ROOT)
        self.calls()
        found = self.client.get_allocations_for_provider_tree(None, 'node')
        # N + C requests: two providers, two consumers.
        self.assertLessEqual(len(self.calls()), 2 + 2)
        self.assertEqual({CONSUMER_A, CONSUMER_B}, set(found))
        record = found[CONSUMER_A]
        self.assertEqual({ROOT, CHILD, SHARING}, set(record['allocations']))
        self.assertEqual({'DISK_GB': 10},
                         record['allocations'][SHARING]['resources'])
        self.assertEqual(self.api.provider(SHARING)['generation'],
                         record['allocations'][SHARING]['generation'])
        self.assertEqual(fixtures.PROJECT, record['project_id'])
        self.assertEqual(fixtures.USER, record['user_id'])
        self.assertEqual(1, record['consumer_generation'])
        self.assertEqual({CHILD: {'generation': self.api.provider(CHILD)[
            'generation'], 'resources': {'PGPU': 2}}},
            found[CONSUMER_B]['allocations'])

    def test_allocations_for_provider_tree_needs_a_cached_root(self):
        self.api.create('node', uuid=ROOT)
        self.api.create('numa0', parent=ROOT, uuid=CHILD)
        exc = self.assertRaises(
            ValueError, self.client.get_allocations_for_provider_tree,
            None, 'node')
        self.assertIn('node', str(exc))
        self.client.get_provider_tree_and_ensure_root(None, ROOT)
        exc = self.assertRaises(
            ValueError, self.client.get_allocations_for_provider_tree,
            None, 'numa0')
        self.assertIn('numa0', str(exc))
        self.assertEqual({}, self.client.get_allocations_for_provider_tree(
            None, ROOT))

    def test_consumer_allocations(self):
        self.api.create('node', uuid=ROOT, inventories={
            'VCPU': inventory(8)})
        self.api.allocate(CONSUMER_A, {ROOT: {'VCPU': 3}})
        record = self.client.get_allocations_for_consumer(None, CONSUMER_A)
        self.assertEqual({'VCPU': 3},
                         record['allocations'][ROOT]['resources'])
        self.assertEqual(1, record['consumer_generation'])
        self.assertEqual({}, self.client.get_allocations_for_consumer(
            None, uuidutils.generate_uuid())['allocations'])


class InProcessTestCase(ReportClientTests,
                        fixtures.ReportClientTestCase):
    mode = 'in-process'

    def _tree(self, name, children, consumers):
        """A root with ``children`` children and ``consumers`` consumers.

        Each consumer holds a VCPU on every provider of the tree and a
        DISK_GB on the sharing provider (made once).
        """
        if not self.api.exists(SHARING):
            self.api.create('shared', uuid=SHARING, aggregates=[AGG],
                            traits=[os_traits.MISC_SHARES_VIA_AGGREGATE],
                            inventories={'DISK_GB': inventory(1000)})
        root = self.api.create(name, inventories={'VCPU': inventory(100)})
        providers = [root] + [
            self.api.create('%s-%d' % (name, index), parent=root,
                            inventories={'VCPU': inventory(100)})
            for index in range(children)]
        for _index in range(consumers):
            allocations = {rp: {'VCPU': 1} for rp in providers}
            allocations[SHARING] = {'DISK_GB': 1}
            self.api.allocate(uuidutils.generate_uuid(), allocations)
        return root

    def _queries(self, client, root):
        """(answer, number of SQL statements) of the tree's allocations."""
        sent = []

        def count(conn, cursor, statement, *args):
            if statement.split(None, 1)[0].upper() not in (
                    'BEGIN', 'COMMIT', 'ROLLBACK', 'SAVEPOINT', 'RELEASE'):
                sent.append(statement)

        sa.event.listen(self.db.engine, 'before_cursor_execute', count)
        try:
            found = client.get_allocations_for_provider_tree(None, root)
        finally:
            sa.event.remove(self.db.engine, 'before_cursor_execute', count)
        return found, len(sent)

    def test_tree_allocations_in_constant_queries(self):
        small = self._tree('small', children=0, consumers=2)
        large = self._tree('large', children=4, consumers=10)
        fast = report.ReportClient(
            self.placement(), tree_allocations=self.placement.tree_allocations)
        for root in (small, large):
            fast.get_provider_tree_and_ensure_root(None, root)
            self.client.get_provider_tree_and_ensure_root(None, root)
        # Warm the resource class names cache of the in-process
        # Placement, as any earlier request does.
        fast.get_allocations_for_provider_tree(None, small)
        small_found, small_queries = self._queries(fast, small)
        large_found, large_queries = self._queries(fast, large)
        self.assertEqual(2, len(small_found))
        self.assertEqual(10, len(large_found))
        self.assertEqual(small_queries, large_queries)
        self.assertLessEqual(large_queries, 3)
        # The same answer as over the API, sharing provider included.
        for root, found in ((small, small_found), (large, large_found)):
            self.assertEqual(
                self.client.get_allocations_for_provider_tree(None, root),
                found)
        record = next(iter(large_found.values()))
        self.assertEqual(6, len(record['allocations']))
        self.assertEqual({'DISK_GB': 1},
                         record['allocations'][SHARING]['resources'])
        # Over the API: N + C requests.
        self.calls()
        self.client.get_allocations_for_provider_tree(None, large)
        self.assertEqual(5 + 10, len(self.calls()))

    def test_tree_allocations_of_an_unknown_provider(self):
        self.assertEqual({}, self.placement.tree_allocations(ROOT))


class HTTPTestCase(ReportClientTests, fixtures.ReportClientTestCase):
    # The same Placement application and SQL as InProcessTestCase, which
    # runs on every database; here only the client's HTTP path differs.
    dialect_neutral = True
    mode = 'http'


class UpstreamTestCase(ReportClientTests, fixtures.ReportClientTestCase):
    # Upstream's own SQLite database: nothing of ours by dialect.
    dialect_neutral = True
    mode = 'upstream'
