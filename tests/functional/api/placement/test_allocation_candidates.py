"""GET /allocation_candidates over many provider trees: the search pages
through trees, stops at ``limit`` or at ``max_allocation_candidates``,
and ``randomize_allocation_candidates`` changes where it starts."""

from unittest import mock

import fixtures
from oslo_utils import uuidutils
import sqlalchemy as sa

from alloc_framework.db import api as db_api
from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects.placement import allocation_candidate
from tests.functional.api.placement import base

_COUNT = 40


def _driver_spy():
    """``(drivers, spy)``: ``spy`` stands for ``_driver`` and records in
    ``drivers`` the kind of driver each search picks (None for none)."""
    drivers = []
    real = allocation_candidate._driver

    def spy(*args, **kwargs):
        found = real(*args, **kwargs)
        drivers.append(found[0][0] if found else None)
        return found

    return drivers, spy


class AllocationCandidatesSearchTestCase(base.PlacementAppTestCase):

    def setUp(self):
        super().setUp()
        self.uuids = []
        for index in range(_COUNT):
            uuid = uuidutils.generate_uuid()
            resp = self.request('POST', '/resource_providers',
                                json={'name': 'cn%d' % index, 'uuid': uuid})
            self.assertEqual(200, resp.status_code)
            resp = self.request(
                'PUT', '/resource_providers/%s/inventories' % uuid,
                json={'resource_provider_generation': 0,
                      'inventories': {'VCPU': {'total': 4}}})
            self.assertEqual(200, resp.status_code)
            self.uuids.append(uuid)

    def _candidates(self, query):
        resp = self.request('GET', '/allocation_candidates?' + query)
        self.assertEqual(200, resp.status_code, resp.text)
        return [list(req['allocations'])[0]
                for req in resp.json['allocation_requests']]

    def test_all_in_creation_order(self):
        self.assertEqual(self.uuids, self._candidates('resources=VCPU:1'))

    def test_limit_takes_the_first(self):
        self.assertEqual(self.uuids[:5],
                         self._candidates('resources=VCPU:1&limit=5'))

    def test_limit_searches_past_trees_that_do_not_fit(self):
        # Only the last provider has the trait: the search goes through
        # every page of trees to find it.
        last = self.uuids[-1]
        self.assertEqual(201, self.request(
            'PUT', '/traits/CUSTOM_LAST').status_code)
        resp = self.request('PUT', '/resource_providers/%s/traits' % last,
                            json={'resource_provider_generation': 1,
                                  'traits': ['CUSTOM_LAST']})
        self.assertEqual(200, resp.status_code)
        # Forbidding the trait keeps every other tree.
        self.assertEqual([last], self._candidates(
            'resources=VCPU:1&required=CUSTOM_LAST&limit=1'))
        self.assertEqual(self.uuids[:-1], self._candidates(
            'resources=VCPU:1&required=!CUSTOM_LAST'))

    def _trees_read(self, query):
        """How many trees answering ``query`` reads."""
        read = []
        real = allocation_candidate._load_trees

        def spy(context, root_ids, rps):
            read.extend(root_ids)
            return real(context, root_ids, rps)

        with mock.patch.object(allocation_candidate, '_load_trees', spy):
            self._candidates(query)
        return len(read)

    def test_work_follows_the_limit(self):
        # One chunk of trees for a small limit, all of them without.
        self.assertLessEqual(
            self._trees_read('resources=VCPU:1&limit=2'),
            allocation_candidate._MIN_CHUNK)
        self.assertEqual(_COUNT, self._trees_read('resources=VCPU:1'))

    def test_cap(self):
        self.config(max_allocation_candidates=7, group='placement')
        self.assertEqual(self.uuids[:7], self._candidates('resources=VCPU:1'))
        self.assertEqual(self.uuids[:3],
                         self._candidates('resources=VCPU:1&limit=3'))

    def test_randomize(self):
        self.config(randomize_allocation_candidates=True, group='placement')
        firsts = set()
        for _ in range(20):
            found = self._candidates('resources=VCPU:1&limit=5')
            self.assertEqual(5, len(found))
            self.assertEqual(5, len(set(found)))
            self.assertLessEqual(set(found), set(self.uuids))
            firsts.add(found[0])
        self.assertGreater(len(firsts), 1)
        # Without a limit every candidate is there, once.
        self.assertEqual(sorted(self.uuids),
                         sorted(self._candidates('resources=VCPU:1')))


class FullTreesFirstTestCase(base.PlacementAppTestCase):
    """The first trees are full, as in a cloud that fills from the first
    candidates: the next search of the same request starts with a
    window as wide as the span the last one covered, and still answers
    the first trees with room, in id order."""

    _FULL = 30

    def setUp(self):
        super().setUp()
        # Small chunks and windows, so that 40 trees take several.
        self.useFixture(fixtures.MockPatchObject(
            allocation_candidate, '_MIN_CHUNK', 2))
        self.uuids = [self.create_provider('cn%d' % i, {'VCPU': {'total': 4}})
                      for i in range(_COUNT)]
        self.consumers = [self._fill(uuid)
                          for uuid in self.uuids[:self._FULL]]

    def _fill(self, rp_uuid):
        consumer = uuidutils.generate_uuid()
        resp = self.request('PUT', '/allocations/%s' % consumer, json={
            'allocations': {rp_uuid: {'resources': {'VCPU': 4}}},
            'project_id': uuidutils.generate_uuid(),
            'user_id': uuidutils.generate_uuid(),
            'consumer_generation': None,
            'consumer_type': 'INSTANCE'})
        self.assertEqual(204, resp.status_code, resp.text)
        return consumer

    def _search(self, query):
        """``(first provider of each candidate, windows looked at)``."""
        windows = []
        real = allocation_candidate._RootQuery.window

        def spy(query, context, after, upto, limit):
            windows.append((after, upto))
            return real(query, context, after, upto, limit)

        with mock.patch.object(allocation_candidate._RootQuery, 'window',
                               spy):
            resp = self.request('GET', '/allocation_candidates?' + query)
        self.assertEqual(200, resp.status_code, resp.text)
        return ([list(req['allocations'])[0]
                 for req in resp.json['allocation_requests']], windows)

    def test_next_search_looks_at_one_window(self):
        query = 'resources=VCPU:1&limit=2'
        first, windows = self._search(query)
        self.assertEqual(self.uuids[self._FULL:self._FULL + 2], first)
        # chunk 4, first window 16: 16, 32, then past the full trees.
        self.assertGreater(len(windows), 1)
        again, windows = self._search(query)
        self.assertEqual(first, again)
        self.assertEqual(1, len(windows))

    def test_freed_tree_found_first(self):
        query = 'resources=VCPU:1&limit=2'
        self._search(query)
        # The second tree has room again: the wide window finds it.
        resp = self.request('DELETE', '/allocations/%s' % self.consumers[1])
        self.assertEqual(204, resp.status_code, resp.text)
        found, windows = self._search(query)
        self.assertEqual([self.uuids[1], self.uuids[self._FULL]], found)
        self.assertEqual(1, len(windows))
        # And the span remembered is now the narrower one.
        found, windows = self._search('resources=VCPU:1&limit=2')
        self.assertEqual([self.uuids[1], self.uuids[self._FULL]], found)

    def test_each_request_its_own_span(self):
        self._search('resources=VCPU:1&limit=2')
        # Another amount is another request: it learns its own span.
        found, windows = self._search('resources=VCPU:2&limit=2')
        self.assertEqual(self.uuids[self._FULL:self._FULL + 2], found)
        self.assertGreater(len(windows), 1)
        found, windows = self._search('resources=VCPU:2&limit=2')
        self.assertEqual(self.uuids[self._FULL:self._FULL + 2], found)
        self.assertEqual(1, len(windows))

    def test_every_tree_without_a_limit(self):
        query = 'resources=VCPU:1'
        found, _ = self._search(query)
        self.assertEqual(self.uuids[self._FULL:], found)
        again, windows = self._search(query)
        self.assertEqual(found, again)
        self.assertEqual(1, len(windows))

    def test_random_start_remembers_nothing(self):
        query = 'resources=VCPU:1&limit=2'
        self.config(randomize_allocation_candidates=True, group='placement')
        for _ in range(3):
            found, _ = self._search(query)
            self.assertEqual(2, len(found))
            self.assertLessEqual(set(found), set(self.uuids[self._FULL:]))
        # In id order again, the search learns its span from scratch.
        self.config(randomize_allocation_candidates=False,
                    group='placement')
        found, windows = self._search(query)
        self.assertEqual(self.uuids[self._FULL:self._FULL + 2], found)
        self.assertGreater(len(windows), 1)


class RareClassSearchTestCase(base.PlacementAppTestCase):
    """A requested class only a few trees have drives the search: only
    those trees are checked, and the candidates come in the order of the
    trees' roots, as without it."""

    def setUp(self):
        super().setUp()
        for index in range(_COUNT):
            self._provider('cn%d' % index, {'VCPU': 4})
        self.root_a = self._provider('a', {'VCPU': 4})
        self.root_b = self._provider('b', {'VCPU': 4})
        self._provider('b-nic', {'SRIOV_NET_VF': 2}, parent=self.root_b)
        for index in range(_COUNT, 2 * _COUNT):
            self._provider('cn%d' % index, {'VCPU': 4})
        # Created last: the NIC of the first tree.
        self._provider('a-nic', {'SRIOV_NET_VF': 2}, parent=self.root_a)

    def _provider(self, name, inventories, parent=None):
        return self.create_provider(
            name, {rc: {'total': total} for rc, total in inventories.items()},
            parent=parent)

    def _roots(self, query):
        checked = []
        real = allocation_candidate._driver_roots

        def spy(*args):
            found = real(*args)
            checked.extend(found)
            return found

        with mock.patch.object(allocation_candidate, '_driver_roots', spy):
            resp = self.request('GET', '/allocation_candidates?' + query)
        self.assertEqual(200, resp.status_code, resp.text)
        summaries = resp.json['provider_summaries']
        roots = [summaries[list(req['allocations'])[0]]['root_provider_uuid']
                 for req in resp.json['allocation_requests']]
        return roots, checked

    def test_only_trees_with_the_class_are_checked(self):
        roots, checked = self._roots(
            'resources=VCPU:1,SRIOV_NET_VF:1&group_policy=none')
        self.assertEqual([self.root_a, self.root_b], roots)
        self.assertEqual(2, len(checked))

    def test_limit_keeps_the_order_of_the_roots(self):
        roots, _checked = self._roots(
            'resources=VCPU:1&resources1=SRIOV_NET_VF:1&limit=1')
        self.assertEqual([self.root_a], roots)

    def test_amount_no_inventory_can_take(self):
        roots, checked = self._roots('resources=VCPU:1,SRIOV_NET_VF:3')
        self.assertEqual([], roots)
        self.assertEqual([], checked)


class SharedAmountSearchTestCase(RareClassSearchTestCase):
    """An amount only a sharing provider has room for drives the search
    to the trees anchored to it, whatever the trees before them; the
    tests of a rare class hold with sharing providers around."""

    def setUp(self):
        super().setUp()
        agg = uuidutils.generate_uuid()
        self.storage = self._provider('storage', {'DISK_GB': 10000})
        self._anchor(self.storage, agg, generation=1,
                     traits=['MISC_SHARES_VIA_AGGREGATE'])
        self.computes = [self._provider('c%d' % i, {'VCPU': 4})
                         for i in range(2)]
        for uuid in self.computes:
            self._anchor(uuid, agg, generation=1)
        # Disk every tree has, not enough for the request.
        self._provider('small-disk', {'VCPU': 4, 'DISK_GB': 100})

    def _anchor(self, uuid, agg, generation, traits=()):
        resp = self.request(
            'PUT', '/resource_providers/%s/aggregates' % uuid,
            json={'aggregates': [agg],
                  'resource_provider_generation': generation})
        self.assertEqual(200, resp.status_code, resp.text)
        if traits:
            resp = self.request(
                'PUT', '/resource_providers/%s/traits' % uuid,
                json={'traits': list(traits),
                      'resource_provider_generation': generation + 1})
            self.assertEqual(200, resp.status_code, resp.text)

    def test_only_anchored_trees_are_checked(self):
        roots, checked = self._roots('resources=VCPU:1,DISK_GB:5000')
        self.assertEqual(self.computes, roots)
        self.assertEqual(3, len(checked))

    def test_limit_keeps_the_order_of_the_anchored_roots(self):
        roots, _checked = self._roots('resources=VCPU:1,DISK_GB:5000&limit=1')
        self.assertEqual(self.computes[:1], roots)

    def _checked_in_sql(self, query):
        """The batches of roots whose conditions the database checks."""
        batches = []
        real = allocation_candidate._RootQuery.among

        def spy(root_query, context, ids):
            batches.append(list(ids))
            return real(root_query, context, ids)

        with mock.patch.object(allocation_candidate._RootQuery, 'among',
                               spy):
            resp = self.request('GET', '/allocation_candidates?' + query)
        self.assertEqual(200, resp.status_code, resp.text)
        return batches

    def _id(self, uuid):
        with db_api.get_engine().connect() as conn:
            return conn.execute(sa.select(models.ResourceProvider.id).where(
                models.ResourceProvider.uuid == uuid)).scalar()

    def test_storage_that_cannot_serve_the_rest_is_not_checked(self):
        # The storage provider, alone in its tree, is a driving root (it
        # has the disk) but has no VCPU, nor does a sharing provider of
        # its aggregate: the database is not asked about it.
        batches = self._checked_in_sql('resources=VCPU:1,DISK_GB:5000')
        self.assertEqual([[self._id(uuid) for uuid in self.computes]],
                         batches)
        # Asked for disk only, its tree is a candidate and is checked.
        roots, _checked = self._roots('resources=DISK_GB:5000')
        self.assertEqual([self.storage], roots)
        self.assertIn(self._id(self.storage),
                      self._checked_in_sql('resources=DISK_GB:5000')[0])


class SharingTreesThatFitTestCase(SharedAmountSearchTestCase):
    """The trees of sharing providers that can serve the other classes
    (themselves or with a child) are still checked, and answer in the
    order of their roots."""

    def setUp(self):
        super().setUp()
        agg = uuidutils.generate_uuid()
        # A sharing provider with a compute in its tree, and one with
        # CPUs of its own, each alone in its aggregate.
        self.rich = self._provider('rich', {'DISK_GB': 10000})
        self._provider('rich-cpu', {'VCPU': 4}, parent=self.rich)
        self._anchor(self.rich, agg, generation=1,
                     traits=['MISC_SHARES_VIA_AGGREGATE'])
        self.both = self._provider('both', {'VCPU': 4, 'DISK_GB': 10000})
        self._anchor(self.both, uuidutils.generate_uuid(), generation=1,
                     traits=['MISC_SHARES_VIA_AGGREGATE'])

    def test_only_anchored_trees_are_checked(self):
        roots, checked = self._roots('resources=VCPU:1,DISK_GB:5000')
        self.assertEqual(self.computes + [self.rich, self.both], roots)
        self.assertEqual(5, len(checked))

    def test_storage_that_cannot_serve_the_rest_is_not_checked(self):
        batches = self._checked_in_sql('resources=VCPU:1,DISK_GB:5000')
        self.assertEqual(
            [[self._id(uuid)
              for uuid in self.computes + [self.rich, self.both]]], batches)


class DrivenBatchesTestCase(base.PlacementAppTestCase):
    """The driving trees mostly fit: the first batch checked is a chunk
    of them, the size a limit needs, not more."""

    _provider = RareClassSearchTestCase._provider
    _roots = RareClassSearchTestCase._roots
    _anchor = SharedAmountSearchTestCase._anchor
    _checked_in_sql = SharedAmountSearchTestCase._checked_in_sql

    def setUp(self):
        super().setUp()
        # Few providers in all: the members of the aggregate drive the
        # search whatever their share.
        patcher = mock.patch.object(allocation_candidate, '_DRIVER_SHARE',
                                    1.0)
        patcher.start()
        self.addCleanup(patcher.stop)
        agg = uuidutils.generate_uuid()
        storage = self._provider('storage', {'DISK_GB': 10000})
        self._anchor(storage, agg, generation=1,
                     traits=['MISC_SHARES_VIA_AGGREGATE'])
        self.computes = [self._provider('c%d' % i, {'VCPU': 4})
                         for i in range(3 * allocation_candidate._MIN_CHUNK)]
        for uuid in self.computes:
            self._anchor(uuid, agg, generation=1)

    def test_first_batch_is_a_chunk(self):
        batches = self._checked_in_sql(
            'resources=VCPU:1,DISK_GB:5000&limit=2')
        self.assertEqual([allocation_candidate._MIN_CHUNK],
                         [len(batch) for batch in batches])
        roots, _checked = self._roots('resources=VCPU:1,DISK_GB:5000&limit=2')
        self.assertEqual(self.computes[:2], roots)

    def test_without_limit_every_tree_that_may_fit(self):
        batches = self._checked_in_sql('resources=VCPU:1,DISK_GB:5000')
        self.assertEqual(len(self.computes), sum(map(len, batches)))
        roots, _checked = self._roots('resources=VCPU:1,DISK_GB:5000')
        self.assertEqual(self.computes, roots)


class SharedAloneTestCase(base.PlacementAppTestCase):
    """A candidate served by a sharing provider alone is found from every
    tree anchored to it (and its own) but answered once; the others come
    from their tree only."""

    _provider = RareClassSearchTestCase._provider
    _anchor = SharedAmountSearchTestCase._anchor

    def setUp(self):
        super().setUp()
        agg = uuidutils.generate_uuid()
        # Every provider has disk: no class is rare, the search reads
        # every tree.
        self.computes = [self._provider('c%d' % i, {'DISK_GB': 100})
                         for i in range(4)]
        for uuid in self.computes:
            self._anchor(uuid, agg, generation=1)
        self.storage = self._provider('storage', {'DISK_GB': 10000})
        self._anchor(self.storage, agg, generation=1,
                     traits=['MISC_SHARES_VIA_AGGREGATE'])

    def _providers(self, query):
        resp = self.request('GET', '/allocation_candidates?' + query)
        self.assertEqual(200, resp.status_code, resp.text)
        return [list(req['allocations'])
                for req in resp.json['allocation_requests']]

    def test_sharing_alone_once(self):
        found = self._providers('resources=DISK_GB:50')
        self.assertEqual(5, len(found))
        self.assertEqual(sorted([[uuid] for uuid in self.computes] +
                                [[self.storage]]), sorted(found))

    def test_sharing_alone_once_with_limit(self):
        found = self._providers('resources=DISK_GB:50&limit=10')
        self.assertEqual(5, len(found))
        self.assertEqual(1, found.count([self.storage]))

    def test_only_sharing_has_room(self):
        self.assertEqual([[self.storage]],
                         self._providers('resources=DISK_GB:500'))


class ClassCountsPerApplicationTestCase(base.PlacementAppTestCase):
    """The counts of inventories per class that choose how to search
    belong to one application: two applications of one process never
    share them, so one does not search with the other's stale counts."""

    def test_two_applications_do_not_share_counts(self):
        used = []
        real = allocation_candidate.class_counts

        def spy(context):
            used.append(real(context))
            return used[-1]

        self.create_provider('cn', {'VCPU': {'total': 4}})
        first = self.app
        second = self.load()
        self.assertIsNot(first, second)
        seen = []
        with mock.patch.object(allocation_candidate, 'class_counts', spy):
            for app in (first, first, second):
                self.app = app
                del used[:]
                resp = self.request('GET',
                                    '/allocation_candidates?resources=VCPU:1')
                self.assertEqual(200, resp.status_code, resp.text)
                self.assertEqual(1, len(resp.json['allocation_requests']))
                # One request, one application's counts.
                self.assertEqual(1, len({id(c) for c in used}))
                seen.append(used[0])
        # One application reads its counts once and keeps them ...
        self.assertIs(seen[0], seen[1])
        # ... which the other never sees.
        self.assertIsNot(seen[0], seen[2])


class FilteredSearchTestCase(base.PlacementAppTestCase):
    """The aggregates and traits of a request narrow the trees the search
    reads: a tree none of whose providers is in the aggregates or has the
    trait (nor anchored to a sharing provider that could serve the
    request) is never read, and the candidates are those every provider
    checked one by one gives."""

    def setUp(self):
        super().setUp()
        self.agg = uuidutils.generate_uuid()
        shared = self.shared = uuidutils.generate_uuid()
        for name in ('CUSTOM_FAST', 'CUSTOM_SLOW'):
            self.assertEqual(201, self.request(
                'PUT', '/traits/%s' % name).status_code)
        self.flat = []
        for index in range(12):
            traits = []
            if index % 3 == 0:
                traits.append('CUSTOM_FAST')
            if index % 4 == 0:
                traits.append('CUSTOM_SLOW')
            self.flat.append(self.create_provider(
                'cn%d' % index,
                {'VCPU': {'total': 4}, 'DISK_GB': {'total': 100}},
                traits=traits, aggs=[self.agg] if index % 2 == 0 else []))
        # A nested tree: the disk and CUSTOM_SLOW on the root, which is in
        # no aggregate; the child has CUSTOM_FAST and is in the aggregate.
        self.nested = self.create_provider('n', {'DISK_GB': {'total': 100}},
                                           traits=['CUSTOM_SLOW'])
        self.child = self.create_provider(
            'n-numa', {'VCPU': {'total': 4}}, traits=['CUSTOM_FAST'],
            aggs=[self.agg], parent=self.nested)
        # A compute node without disk, anchored to a sharing provider with
        # CUSTOM_FAST.
        self.storage = self.create_provider(
            'storage', {'DISK_GB': {'total': 1000}},
            traits=['MISC_SHARES_VIA_AGGREGATE', 'CUSTOM_FAST'],
            aggs=[shared])
        self.diskless = self.create_provider(
            'diskless', {'VCPU': {'total': 4}}, aggs=[shared])

    def _search(self, query):
        """``([sorted providers of each candidate], {uuids of the roots
        of the trees read})``."""
        read = set()
        real = allocation_candidate._load_trees

        def spy(context, root_ids, rps):
            found = real(context, root_ids, rps)
            read.update(rps[root_id].uuid for root_id in root_ids)
            return found

        with mock.patch.object(allocation_candidate, '_load_trees', spy):
            resp = self.request('GET', '/allocation_candidates?' + query)
        self.assertEqual(200, resp.status_code, resp.text)
        found = [sorted(req['allocations'])
                 for req in resp.json['allocation_requests']]
        return found, read

    def test_member_of(self):
        found, read = self._search(
            'resources=VCPU:1,DISK_GB:10&member_of=%s' % self.agg)
        # The nested tree is read (its child is in the aggregate) but its
        # disk is not: its root is in no aggregate. The trees anchored to
        # the sharing provider are not: it is not in the aggregate, so it
        # cannot serve the group.
        self.assertEqual([[uuid] for uuid in self.flat[::2]], found)
        self.assertEqual(set(self.flat[::2]) | {self.nested}, read)

    def test_member_of_a_sharing_provider(self):
        # The sharing provider is in the aggregate (the diskless node is
        # not): the trees anchored to it are read, and the diskless node
        # takes its disk from it.
        path = '/resource_providers/%s/aggregates' % self.storage
        generation = self.request('GET', path).json[
            'resource_provider_generation']
        self.assertEqual(200, self.request(
            'PUT', path, json={'aggregates': [self.agg, self.shared],
                               'resource_provider_generation': generation}
        ).status_code)
        found, read = self._search(
            'resources=VCPU:1,DISK_GB:10&member_of=%s' % self.agg)
        self.assertEqual(set(self.flat[::2]) | {self.nested, self.storage,
                                                self.diskless}, read)
        for uuid in self.flat[::2]:
            # Its own disk, or that of the sharing provider.
            self.assertIn([uuid], found)
            self.assertIn(sorted([uuid, self.storage]), found)
        self.assertNotIn(sorted([self.diskless, self.storage]), found)
        # With the aggregate of sharing too, the diskless node is served.
        found, read = self._search(
            'resources=VCPU:1,DISK_GB:10&member_of=in:%s,%s'
            % (self.agg, self.shared))
        self.assertIn(sorted([self.diskless, self.storage]), found)

    def test_member_of_drives_only_an_unbounded_search(self):
        # With one read of driving roots smaller than the aggregate's 7
        # members, the members drive a search that nothing bounds, not
        # one with a limit (the class drives that one here); both give
        # the same candidates in the same order.
        drivers, spy = _driver_spy()
        query = ('/allocation_candidates?resources=VCPU:1,DISK_GB:10'
                 '&member_of=%s' % self.agg)
        with mock.patch.object(allocation_candidate, '_DRIVER_FIRST_READ',
                               2), \
                mock.patch.object(allocation_candidate, '_DRIVER_SHARE',
                                  1.0), \
                mock.patch.object(allocation_candidate, '_driver', spy):
            limited = self.request('GET', query + '&limit=3')
            unbounded = self.request('GET', query)
        self.assertEqual(['class', 'aggregates'], drivers)
        self.assertEqual(200, limited.status_code, limited.text)
        self.assertEqual(200, unbounded.status_code, unbounded.text)
        every = [sorted(req['allocations'])
                 for req in unbounded.json['allocation_requests']]
        self.assertEqual([[uuid] for uuid in self.flat[::2]], every)
        self.assertEqual(every[:3], [
            sorted(req['allocations'])
            for req in limited.json['allocation_requests']])

    def test_member_of_an_unknown_aggregate(self):
        # No provider is in an aggregate that does not exist: nothing is
        # searched, with or without a known aggregate beside it.
        for member_of in (uuidutils.generate_uuid(),
                          'in:%s' % uuidutils.generate_uuid()):
            found, read = self._search(
                'resources=VCPU:1,DISK_GB:10&member_of=%s&member_of=%s'
                % (self.agg, member_of))
            self.assertEqual(([], set()), (found, read))

    def test_required_trait(self):
        found, read = self._search(
            'resources=VCPU:1,DISK_GB:10&required=CUSTOM_FAST&limit=20')
        # The child brings the trait to its tree, the sharing provider to
        # the diskless node.
        self.assertEqual(
            [[self.flat[i]] for i in range(0, 12, 3)] +
            [sorted([self.nested, self.child]),
             sorted([self.diskless, self.storage])], found)
        self.assertEqual(
            set(self.flat[::3]) | {self.nested, self.storage,
                                   self.diskless}, read)

    def test_forbidden_trait(self):
        found, read = self._search(
            'resources=VCPU:1,DISK_GB:10&required=!CUSTOM_SLOW')
        # The nested tree's root has the trait: its disk is not allowed.
        self.assertEqual(
            [[self.flat[i]] for i in range(12) if i % 4] +
            [sorted([self.diskless, self.storage])], found)
        self.assertFalse(read & set(self.flat[::4]))
        self.assertIn(self.nested, read)

    def test_rare_trait_drives(self):
        # One provider has the trait: the search checks its tree and the
        # trees anchored to the sharing provider (which might have had
        # it), not the others.
        self.assertEqual(201, self.request(
            'PUT', '/traits/CUSTOM_RARE').status_code)
        resp = self.request(
            'PUT', '/resource_providers/%s/traits' % self.flat[5],
            json={'traits': ['CUSTOM_RARE'],
                  'resource_provider_generation': 1})
        self.assertEqual(200, resp.status_code, resp.text)
        checked = []
        real = allocation_candidate._driver_roots

        def spy(*args):
            found = real(*args)
            checked.extend(found)
            return found

        with mock.patch.object(allocation_candidate, '_driver_roots', spy):
            found, read = self._search(
                'resources=VCPU:1,DISK_GB:10&required=CUSTOM_RARE')
        self.assertEqual([[self.flat[5]]], found)
        self.assertEqual(3, len(checked))
        self.assertEqual({self.flat[5], self.storage, self.diskless}, read)

    def test_trait_drives_before_a_class_as_rare(self):
        # Two providers have both the class and the trait: the trait
        # drives (its providers are read from its index alone), and the
        # candidates are those of the two trees.
        for path in ('/resource_classes/CUSTOM_VF', '/traits/CUSTOM_NIC'):
            self.assertEqual(201, self.request('PUT', path).status_code)
        nics = [self.create_provider(
            'nic%d' % index, {'VCPU': {'total': 4}, 'CUSTOM_VF': {'total': 8}},
            traits=['CUSTOM_NIC']) for index in range(2)]
        drivers, spy = _driver_spy()
        with mock.patch.object(allocation_candidate, '_driver', spy):
            found, read = self._search(
                'resources=VCPU:1,CUSTOM_VF:1&required=CUSTOM_NIC&limit=5')
        self.assertEqual(['traits'], drivers)
        self.assertEqual([[uuid] for uuid in nics], found)
        self.assertEqual(set(nics), read)

    def test_unknown_aggregate(self):
        found, read = self._search(
            'resources=VCPU:1&member_of=%s' % uuidutils.generate_uuid())
        self.assertEqual([], found)
        self.assertEqual(set(), read)


class TreeOrderTestCase(base.PlacementAppTestCase):
    """The room of a tree is looked up from its providers, then their
    inventories, on every database: SQLite is told the order of the
    join (``CROSS JOIN``), the others plan it from their statistics and
    get a plain ``JOIN``."""

    def test_room_starts_from_the_tree(self):
        engine = db_api.get_engine()
        self.create_provider('cn', {'VCPU': {'total': 4}})
        classes = models.ResourceClass.__table__
        with engine.connect() as conn:
            vcpu = conn.execute(sa.select(classes.c.id).where(
                classes.c.name == 'VCPU')).scalar_one()
        query = sa.select(allocation_candidate.RP_TBL.c.id).where(
            allocation_candidate._tree_has_room(vcpu, 1, per_row=False))
        sql = str(query.compile(dialect=engine.dialect,
                                compile_kwargs={'literal_binds': True}))
        if engine.dialect.name == 'sqlite':
            self.assertIn('member CROSS JOIN inventories AS inv ON', sql)
            with engine.connect() as conn:
                plan = ' '.join(row[-1] for row in conn.exec_driver_sql(
                    'EXPLAIN QUERY PLAN ' + sql))
            # The providers of the tree by the index of their root, each
            # inventory by its provider: never every inventory of the
            # class.
            self.assertIn('resource_providers_root_provider_id_idx', plan)
            self.assertNotIn('inventories_resource_class_id', plan)
        else:
            self.assertNotIn('CROSS JOIN', sql)
            self.assertIn('JOIN inventories AS inv ON', sql)
        # The same rows either way.
        with engine.connect() as conn:
            self.assertEqual(1, len(conn.execute(query).all()))
