"""The answer codes of version gates, each on both sides of its version.

Where the upstream bare metal service answers a request of an older
version differently from a plain 404 or 406, its answer is cited in the
test's docstring (``ironic/api/controllers/v1/allocation.py``).
"""

from oslo_utils import uuidutils

from alloc_framework.common import states
from tests.functional.api.baremetal import test_allocations


class TestAllocationGates(test_allocations.AllocationTestCase):

    def _allocation(self, **extra):
        body = {'resource_class': 'baremetal'}
        body.update(extra)
        return self.post('/v1/allocations', body, status=201).json_body

    def test_read_before_1_52_is_404(self):
        alloc = self._allocation()
        self.assertError(self.get('/v1/allocations', version='1.51'), 404)
        self.assertError(self.get('/v1/allocations/%s' % alloc['uuid'],
                                  version='1.51'), 404)
        self.get('/v1/allocations', version='1.52', status=200)
        self.get('/v1/allocations/%s' % alloc['uuid'], version='1.52',
                 status=200)

    def test_post_before_1_52_is_405(self):
        """Upstream's allocations controller answers every method but GET
        with 405 (HTTPMethodNotAllowed) before 1.52."""
        resp = self.post('/v1/allocations', {'resource_class': 'baremetal'},
                         version='1.51')
        self.assertError(resp, 405, 'baremetal.method_not_allowed')
        self.post('/v1/allocations', {'resource_class': 'baremetal'},
                  version='1.52', status=201)

    def test_delete_before_1_52_is_405(self):
        """As POST: 405 before 1.52 (upstream), 204 from 1.52."""
        alloc = self._allocation()
        path = '/v1/allocations/%s' % alloc['uuid']
        self.assertError(self.delete(path, version='1.51'), 405,
                         'baremetal.method_not_allowed')
        self.delete(path, version='1.52', status=204)

    def test_patch_before_1_57_is_405(self):
        """Upstream: 405 before 1.52 (the controller's route check) and
        from 1.52 to 1.56 (the update check); 200 from 1.57."""
        alloc = self._allocation()
        path = '/v1/allocations/%s' % alloc['uuid']
        patch = [{'op': 'add', 'path': '/extra/k', 'value': 'v'}]
        for version in ('1.51', '1.56'):
            self.assertError(self.patch(path, patch, version=version), 405,
                             'baremetal.method_not_allowed')
        body = self.patch(path, patch, version='1.57', status=200).json_body
        self.assertEqual({'k': 'v'}, body['extra'])

    def test_node_allocation_before_1_52_is_404(self):
        """Upstream's node allocation controller answers 404 before 1.52,
        whatever the method."""
        node = self.make_node()
        path = '/v1/nodes/%s/allocation' % node.uuid
        self.assertError(self.get(path, version='1.51'), 404)
        self.assertError(self.delete(path, version='1.51'), 404)
        # From 1.52 the node has no allocation: 404 too, but from the
        # lookup (the allocation's code, not the generic one).
        self.assertError(self.get(path, version='1.52'), 404,
                         'baremetal.allocation_not_found')

    def test_backfill_node_before_1_58_is_400(self):
        """Upstream raises ``Invalid`` (400) for ``node`` before 1.58."""
        node = self.make_node(provision_state=states.ACTIVE)
        resp = self.post('/v1/allocations', {'node': node.uuid},
                         version='1.57')
        self.assertError(resp, 400, 'baremetal.invalid_field', 'node')
        body = self.post('/v1/allocations', {'node': node.uuid},
                         version='1.58', status=201).json_body
        self.assertEqual(node.uuid, body['node_uuid'])

    def test_owner_before_1_60_is_406(self):
        """Upstream's allocation field check raises ``NotAcceptable`` (406)
        for ``owner`` in the body, in ``fields`` and as a filter."""
        resp = self.post('/v1/allocations',
                         {'resource_class': 'baremetal', 'owner': 'p1'},
                         version='1.59')
        self.assertError(resp, 406, 'baremetal.version_not_acceptable')
        alloc = self._allocation(owner='p1')
        path = '/v1/allocations/%s?fields=owner' % alloc['uuid']
        self.assertError(self.get(path, version='1.59'), 406)
        self.assertEqual('p1', self.get(path, version='1.60',
                                        status=200).json_body['owner'])
        self.assertError(self.get('/v1/allocations?fields=owner',
                                  version='1.59'), 406)
        self.assertError(self.get('/v1/allocations?owner=p1',
                                  version='1.59'), 406)
        body = self.get('/v1/allocations?owner=p1', version='1.60',
                        status=200).json_body
        self.assertEqual([alloc['uuid']],
                         [a['uuid'] for a in body['allocations']])

    def test_unknown_state_filter_is_an_empty_list(self):
        """Upstream takes any string as the state: 200 with nothing."""
        alloc = self._allocation()
        state = self.wait(alloc['uuid'])['state']
        for bogus in ('bogus', 'x' * 300, 'ACTIVE'):
            body = self.get('/v1/allocations?state=%s' % bogus,
                            status=200).json_body
            self.assertEqual([], body['allocations'], bogus)
        body = self.get('/v1/allocations?state=%s' % state,
                        status=200).json_body
        self.assertEqual([alloc['uuid']],
                         [a['uuid'] for a in body['allocations']])

    def test_allocation_json_suffix(self):
        """At 1.90 ``/v1/allocations/<id>.json`` is the allocation; from
        1.91 a 404 (upstream's version history of 1.91)."""
        alloc = self._allocation(name='a1')
        for ident in (alloc['uuid'], 'a1'):
            path = '/v1/allocations/%s.json' % ident
            self.assertEqual(alloc['uuid'], self.get(
                path, version='1.90', status=200).json_body['uuid'])
            self.assertError(self.get(path, version='1.91'), 404,
                             'baremetal.allocation_not_found')
        missing = uuidutils.generate_uuid()
        self.assertError(self.get('/v1/allocations/%s.json' % missing,
                                  version='1.90'), 404)
