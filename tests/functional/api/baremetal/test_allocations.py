"""The node Allocation API (spec 001 plus PATCH, backfill and owner)."""

from oslo_utils import uuidutils

from alloc_framework.common import states
from alloc_framework.objects.baremetal import allocation as allocation_obj
from alloc_framework.objects.baremetal import node as node_obj
from tests import base as tests_base
from tests.functional.api.baremetal import base

FIELDS = {'uuid', 'name', 'node_uuid', 'state', 'last_error',
          'resource_class', 'traits', 'candidate_nodes', 'extra', 'owner',
          'created_at', 'updated_at', 'links'}


class AllocationTestCase(base.BaremetalTestCase):

    def wait(self, ident, timeout=30):
        """The allocation once it left ``allocating``."""
        def processed():
            body = self.get('/v1/allocations/%s' % ident,
                            status=200).json_body
            return body if body['state'] != 'allocating' else None
        return tests_base.wait_for(processed, 'allocation %s to be processed'
                                   % ident, timeout=timeout, interval=0.05)

    def count(self):
        return len(allocation_obj.Allocation.list(self.context))


class TestCreate(AllocationTestCase):

    def test_create_allocates_a_node(self):
        node = self.make_node(traits=['CUSTOM_GPU'])
        self.make_node(resource_class='other')
        resp = self.post('/v1/allocations',
                         {'resource_class': 'baremetal',
                          'traits': ['CUSTOM_GPU'], 'name': 'alloc-1',
                          'extra': {'k': 'v'}}, status=201)
        body = resp.json_body
        self.assertEqual(FIELDS, set(body))
        self.assertIn(body['state'], ('allocating', 'active'))
        self.assertEqual('http://localhost/v1/allocations/%s' % body['uuid'],
                         resp.headers['Location'])
        self.assertEqual(['CUSTOM_GPU'], body['traits'])
        self.assertEqual({'k': 'v'}, body['extra'])
        done = self.wait(body['uuid'])
        self.assertEqual('active', done['state'])
        self.assertEqual(node.uuid, done['node_uuid'])
        shown = self.get('/v1/nodes/%s' % node.uuid, status=200).json_body
        self.assertEqual(body['uuid'], shown['instance_uuid'])
        self.assertEqual(body['uuid'], shown['allocation_uuid'])
        by_node = self.get('/v1/nodes/%s/allocation' % node.uuid,
                           status=200).json_body
        self.assertEqual(body['uuid'], by_node['uuid'])
        by_name = self.get('/v1/allocations/alloc-1', status=200).json_body
        self.assertEqual(body['uuid'], by_name['uuid'])

    def test_no_node_ends_in_error(self):
        self.make_node(resource_class='other')
        body = self.post('/v1/allocations', {'resource_class': 'baremetal'},
                         status=201).json_body
        done = self.wait(body['uuid'])
        self.assertEqual('error', done['state'])
        self.assertTrue(done['last_error'])
        self.assertIsNone(done['node_uuid'])

    def test_candidate_nodes_converted_to_uuids(self):
        node = self.make_node(name='cand-1')
        body = self.post('/v1/allocations',
                         {'resource_class': 'baremetal',
                          'candidate_nodes': ['cand-1']},
                         status=201).json_body
        self.assertEqual([node.uuid], body['candidate_nodes'])
        self.assertEqual(node.uuid, self.wait(body['uuid'])['node_uuid'])

    def test_unknown_candidate_is_400(self):
        resp = self.post('/v1/allocations',
                         {'resource_class': 'baremetal',
                          'candidate_nodes': ['nope']})
        self.assertError(resp, 400, 'baremetal.invalid_field',
                         'candidate_nodes')
        self.assertEqual(0, self.count())

    def test_candidate_nodes_keep_order_without_duplicates(self):
        first = self.make_node(name='cand-a')
        second = self.make_node(name='cand-b')
        body = self.post('/v1/allocations',
                         {'resource_class': 'baremetal',
                          'candidate_nodes': [second.uuid, 'cand-a',
                                              'cand-b', first.uuid]},
                         status=201).json_body
        self.assertEqual([second.uuid, first.uuid], body['candidate_nodes'])

    def test_candidate_uuid_in_upper_case_and_repeated(self):
        node = self.make_node()
        upper = node.uuid.upper()
        body = self.post('/v1/allocations',
                         {'resource_class': 'baremetal',
                          'candidate_nodes': [upper, node.uuid, upper]},
                         status=201).json_body
        self.assertEqual([node.uuid], body['candidate_nodes'])

    def test_candidate_that_is_no_identity_is_400(self):
        node = self.make_node(name='cand-1')
        resp = self.post('/v1/allocations',
                         {'resource_class': 'baremetal',
                          'candidate_nodes': [node.uuid, 'not a name!']})
        self.assertError(resp, 400, 'baremetal.invalid_field',
                         'not a name!')
        self.assertEqual(0, self.count())

    def test_invalid_resource_class_is_400(self):
        for value in ('', 'x' * 81, 42, None):
            resp = self.post('/v1/allocations', {'resource_class': value})
            self.assertError(resp, 400, contains='resource_class')
        resp = self.post('/v1/allocations', {'name': 'x'})
        self.assertError(resp, 400, contains='resource_class')
        self.assertEqual(0, self.count())

    def test_invalid_traits_are_400(self):
        for value in (['not a trait'], 'CUSTOM_A', [1]):
            resp = self.post('/v1/allocations',
                             {'resource_class': 'rc', 'traits': value})
            self.assertEqual(400, resp.status_int, resp.text)
        self.assertEqual(0, self.count())

    def test_invalid_name_is_400(self):
        for value in ('with space', uuidutils.generate_uuid(), 'a/b'):
            resp = self.post('/v1/allocations',
                             {'resource_class': 'rc', 'name': value})
            self.assertError(resp, 400, 'baremetal.invalid_field', 'name')
        self.assertEqual(0, self.count())

    def test_non_uuid_uuid_is_400(self):
        # Upstream accepts it and the allocation stays allocating forever.
        resp = self.post('/v1/allocations',
                         {'resource_class': 'rc', 'uuid': 'not-a-uuid'})
        self.assertError(resp, 400, 'baremetal.invalid_field', 'uuid')
        self.assertEqual(0, self.count())

    def test_unknown_attribute_is_400(self):
        resp = self.post('/v1/allocations',
                         {'resource_class': 'rc', 'bogus': 1})
        self.assertError(resp, 400, contains='bogus')

    def test_duplicate_uuid_and_name_are_409(self):
        uuid = uuidutils.generate_uuid()
        self.post('/v1/allocations', {'resource_class': 'rc', 'uuid': uuid,
                                      'name': 'dup'}, status=201)
        self.wait(uuid)
        resp = self.post('/v1/allocations',
                         {'resource_class': 'rc', 'uuid': uuid})
        self.assertError(resp, 409)
        resp = self.post('/v1/allocations',
                         {'resource_class': 'rc', 'name': 'dup'})
        self.assertError(resp, 409)
        self.assertEqual(1, self.count())

    def test_uuid_of_an_instance_is_409(self):
        instance = uuidutils.generate_uuid()
        self.make_node(instance_uuid=instance)
        resp = self.post('/v1/allocations',
                         {'resource_class': 'rc', 'uuid': instance})
        self.assertError(resp, 409)
        self.assertEqual(0, self.count())

    def test_owner_gated_by_version(self):
        resp = self.post('/v1/allocations',
                         {'resource_class': 'rc', 'owner': 'p1'},
                         version='1.59')
        self.assertError(resp, 406)
        body = self.post('/v1/allocations', {'resource_class': 'rc'},
                         version='1.59', status=201).json_body
        self.assertNotIn('owner', body)
        self.wait(body['uuid'])
        body = self.post('/v1/allocations',
                         {'resource_class': 'rc', 'owner': 'p1'},
                         status=201).json_body
        self.assertEqual('p1', body['owner'])


class TestBackfill(AllocationTestCase):

    def test_backfill_active_node(self):
        node = self.make_node(provision_state=states.ACTIVE,
                              traits=['CUSTOM_A'])
        body = self.post('/v1/allocations', {'node': node.uuid},
                         status=201).json_body
        self.assertEqual('active', body['state'])
        self.assertEqual(node.uuid, body['node_uuid'])
        self.assertEqual('baremetal', body['resource_class'])
        node = node_obj.Node.get_by_id(self.context, node.id)
        self.assertEqual(body['uuid'], node.instance_uuid)

    def test_backfill_keeps_instance_uuid(self):
        instance = uuidutils.generate_uuid()
        node = self.make_node(provision_state=states.ACTIVE,
                              instance_uuid=instance, name='deployed')
        body = self.post('/v1/allocations', {'node': 'deployed'},
                         status=201).json_body
        self.assertEqual(instance, body['uuid'])
        self.assertEqual(node.uuid, body['node_uuid'])

    def test_backfill_mismatch_is_400_and_leaves_nothing(self):
        # Upstream answers 500 and leaves an allocation in error.
        node = self.make_node(provision_state=states.ACTIVE)
        for extra in ({'resource_class': 'other'},
                      {'traits': ['CUSTOM_MISSING']},
                      {'candidate_nodes': [self.make_node().uuid]}):
            body = dict(extra, node=node.uuid)
            resp = self.post('/v1/allocations', body)
            self.assertEqual(400, resp.status_int, resp.text)
        self.assertEqual(0, self.count())
        node = node_obj.Node.get_by_id(self.context, node.id)
        self.assertIsNone(node.instance_uuid)
        self.assertIsNone(node.allocation_id)
        self.assertIsNone(node.reservation)

    def test_backfill_uuid_mismatch_is_400(self):
        node = self.make_node(provision_state=states.ACTIVE,
                              instance_uuid=uuidutils.generate_uuid())
        resp = self.post('/v1/allocations',
                         {'node': node.uuid,
                          'uuid': uuidutils.generate_uuid()})
        self.assertError(resp, 400, contains='uuid')
        self.assertEqual(0, self.count())

    def test_backfill_unknown_node_is_400(self):
        resp = self.post('/v1/allocations', {'node': 'nope'})
        self.assertError(resp, 400, contains='node')

    def test_backfill_allocated_node_is_409(self):
        node = self.make_node(provision_state=states.ACTIVE)
        self.post('/v1/allocations', {'node': node.uuid}, status=201)
        resp = self.post('/v1/allocations', {'node': node.uuid})
        self.assertError(resp, 409)
        self.assertEqual(1, self.count())

    def test_backfill_needs_1_58(self):
        """Upstream refuses ``node`` before 1.58 as an invalid request.

        Its allocations controller raises ``Invalid`` ("Cannot set node
        when creating an allocation in this API version"): a 400, not the
        406 of a field of a later version.
        """
        node = self.make_node(provision_state=states.ACTIVE)
        resp = self.post('/v1/allocations',
                         {'node': node.uuid, 'resource_class': 'baremetal'},
                         version='1.57')
        self.assertError(resp, 400, 'baremetal.invalid_field', 'node')
        self.assertEqual(0, self.count())


class TestReadUpdateDelete(AllocationTestCase):

    def _active(self, **kw):
        node = self.make_node(**kw)
        body = self.post('/v1/allocations', {'resource_class': 'baremetal',
                                             'candidate_nodes': [node.uuid]},
                         status=201).json_body
        done = self.wait(body['uuid'])
        self.assertEqual('active', done['state'])
        return node, done

    def test_show_fields_and_errors(self):
        _node, alloc = self._active()
        body = self.get('/v1/allocations/%s?fields=uuid,state'
                        % alloc['uuid'], status=200).json_body
        self.assertEqual({'uuid', 'state', 'links'}, set(body))
        self.assertError(self.get('/v1/allocations/%s?fields=nope'
                                  % alloc['uuid']), 400)
        # Not found comes first, as upstream.
        self.assertError(self.get('/v1/allocations/%s?fields=nope'
                                  % uuidutils.generate_uuid()), 404,
                         'baremetal.allocation_not_found')
        self.assertError(self.get('/v1/allocations/%s'
                                  % uuidutils.generate_uuid()), 404,
                         'baremetal.allocation_not_found')
        self.assertError(self.get('/v1/allocations/missing'), 404)
        body = self.get('/v1/allocations/%s' % alloc['uuid'],
                        version='1.59', status=200).json_body
        self.assertNotIn('owner', body)

    def test_show_each_field_alone(self):
        # A response of some fields reads only those: each must show what
        # the whole representation shows.
        node = self.make_node(traits=['CUSTOM_GPU'])
        created = self.post('/v1/allocations', {
            'resource_class': 'baremetal', 'traits': ['CUSTOM_GPU'],
            'name': 'alone', 'extra': {'k': 'v'}}, status=201).json_body
        self.assertEqual('active', self.wait(created['uuid'])['state'])
        failed = self.post('/v1/allocations', {'resource_class': 'gold'},
                           status=201).json_body
        self.assertEqual('error', self.wait(failed['uuid'])['state'])
        for ident in (created['uuid'], 'alone', failed['uuid']):
            whole = self.get('/v1/allocations/%s' % ident,
                             status=200).json_body
            for field in set(whole) - {'links'}:
                body = self.get('/v1/allocations/%s?fields=%s'
                                % (ident, field), status=200).json_body
                self.assertEqual({field: whole[field],
                                  'links': whole['links']}, body)
            body = self.get('/v1/allocations/%s?fields=node_uuid,traits,'
                            'state' % ident, status=200).json_body
            self.assertEqual(
                {k: whole[k] for k in ('node_uuid', 'traits', 'state')},
                {k: body[k] for k in ('node_uuid', 'traits', 'state')})
        self.assertEqual(node.uuid, self.get(
            '/v1/allocations/alone?fields=node_uuid',
            status=200).json_body['node_uuid'])

    def test_list_filters(self):
        node, alloc = self._active(name='n1')
        other = self.post('/v1/allocations', {'resource_class': 'gold'},
                          status=201).json_body
        self.wait(other['uuid'])

        def uuids(query):
            body = self.get('/v1/allocations?' + query, status=200).json_body
            return [a['uuid'] for a in body['allocations']]

        self.assertEqual([alloc['uuid']], uuids('state=active'))
        self.assertEqual([other['uuid']], uuids('state=error'))
        self.assertEqual([other['uuid']], uuids('resource_class=gold'))
        self.assertEqual([alloc['uuid']], uuids('node=n1'))
        self.assertEqual([alloc['uuid']], uuids('node=%s' % node.uuid))
        self.assertEqual(2, len(uuids('')))
        body = self.get('/v1/allocations?fields=uuid&limit=1',
                        status=200).json_body
        self.assertEqual({'uuid', 'links'}, set(body['allocations'][0]))
        self.assertIn('marker=', body['next'])
        # Upstream takes any string as the state filter: an unknown state
        # matches nothing (200, an empty list).
        self.assertEqual([], uuids('state=bogus'))
        self.assertError(self.get('/v1/allocations?resource_class=' +
                                  'x' * 81), 400)
        self.assertError(self.get('/v1/allocations?node=nope'), 400)
        self.assertError(self.get('/v1/allocations?fields=nope'), 400)
        self.assertError(self.get('/v1/allocations?owner=p',
                                  version='1.59'), 406)

    def test_patch_name_and_extra(self):
        _node, alloc = self._active()
        path = '/v1/allocations/%s' % alloc['uuid']
        body = self.patch(path, [{'op': 'add', 'path': '/name',
                                  'value': 'renamed'},
                                 {'op': 'add', 'path': '/extra/k',
                                  'value': 'v'}], status=200).json_body
        self.assertEqual('renamed', body['name'])
        self.assertEqual({'k': 'v'}, body['extra'])
        body = self.patch(path, [{'op': 'remove', 'path': '/name'}],
                          status=200).json_body
        self.assertIsNone(body['name'])

    def test_patch_errors(self):
        _node, alloc = self._active()
        taken = self.post('/v1/allocations', {'resource_class': 'rc',
                                              'name': 'taken'},
                          status=201).json_body
        self.wait(taken['uuid'])
        path = '/v1/allocations/%s' % alloc['uuid']
        for field in ('resource_class', 'state', 'node_uuid', 'uuid',
                      'traits', 'owner'):
            resp = self.patch(path, [{'op': 'replace', 'path': '/' + field,
                                      'value': 'x'}])
            self.assertError(resp, 400, contains=field)
        resp = self.patch(path, [{'op': 'add', 'path': '/name',
                                  'value': 'bad name'}])
        self.assertError(resp, 400, contains='name')
        resp = self.patch(path, [{'op': 'add', 'path': '/name',
                                  'value': 'taken'}])
        self.assertError(resp, 409)
        resp = self.patch(path, [{'op': 'add', 'path': '/name',
                                  'value': 'x'}], version='1.56')
        self.assertError(resp, 405)

    def test_delete_releases_node(self):
        node, alloc = self._active()
        self.delete('/v1/allocations/%s' % alloc['uuid'], status=204)
        self.assertError(self.get('/v1/allocations/%s' % alloc['uuid']),
                         404)
        node = node_obj.Node.get_by_id(self.context, node.id)
        self.assertIsNone(node.instance_uuid)
        self.assertIsNone(node.allocation_id)
        self.assertError(self.delete('/v1/allocations/%s' % alloc['uuid']),
                         404)

    def test_delete_with_active_node_is_409(self):
        node, alloc = self._active()
        node = node_obj.Node.get_by_id(self.context, node.id)
        node.provision_state = states.ACTIVE
        node.save(self.context)
        resp = self.delete('/v1/allocations/%s' % alloc['uuid'])
        self.assertError(resp, 409)
        node.maintenance = True
        node.save(self.context)
        self.delete('/v1/allocations/%s' % alloc['uuid'], status=204)

    def test_node_allocation_endpoint(self):
        node, alloc = self._active()
        body = self.get('/v1/nodes/%s/allocation?fields=uuid' % node.uuid,
                        status=200).json_body
        self.assertEqual(alloc['uuid'], body['uuid'])
        self.delete('/v1/nodes/%s/allocation' % node.uuid, status=204)
        self.assertError(self.get('/v1/nodes/%s/allocation' % node.uuid),
                         404)
        bare = self.make_node(instance_uuid=uuidutils.generate_uuid())
        self.assertError(self.get('/v1/nodes/%s/allocation' % bare.uuid),
                         400, 'baremetal.node_allocation_mismatch')
        self.assertError(self.get('/v1/nodes/%s/allocation'
                                  % uuidutils.generate_uuid()), 404)
        self.assertError(self.get('/v1/nodes/%s/allocation' % node.uuid,
                                  version='1.51'), 404)
