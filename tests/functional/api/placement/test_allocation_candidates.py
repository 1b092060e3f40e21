"""GET /allocation_candidates over many provider trees: the search pages
through trees, stops at ``limit`` or at ``max_allocation_candidates``,
and ``randomize_allocation_candidates`` changes where it starts."""

from unittest import mock

from oslo_utils import uuidutils

from alloc_framework.objects.placement import allocation_candidate
from tests.functional.api.placement import base

_COUNT = 40


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
