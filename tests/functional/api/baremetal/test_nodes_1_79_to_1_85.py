"""Microversions 1.79 to 1.85 of the bare metal API, over HTTP.

Written from the upstream API reference and version history: allocation
name matching (1.79), project admins deleting their own nodes (1.80),
node inventory (1.81), shards (1.82), child nodes (1.83), the inspection
call-back (1.84) and the unhold verb (1.85).
"""

from oslo_utils import uuidutils

from alloc_framework.common import states
from tests import base as tests_base
from tests.functional.api.baremetal import base
from tests.functional.api.baremetal import test_auth


class TestAllocationNameMatch(base.BaremetalTestCase):
    """1.79: the node named like the allocation is tried first."""

    def test_namesake_node_is_picked(self):
        for index in range(5):
            self.make_node(name='node-%d' % index)
        for index in (3, 0, 4):
            body = self.post('/v1/allocations',
                             {'resource_class': 'baremetal',
                              'name': 'node-%d' % index},
                             status=201).json_body
            tests_base.wait_for(
                lambda: self.get('/v1/allocations/' + body['uuid']
                                 ).json_body['state'] == 'active',
                'allocation to be active')
            node = self.get('/v1/nodes/node-%d' % index).json_body
            self.assertEqual(body['uuid'], node['allocation_uuid'])


class TestShards(base.BaremetalTestCase):
    """1.82: the shard field, its filters and GET /v1/shards."""

    def test_shard_field_hidden_below_1_82(self):
        node = self.make_node(shard='s1')
        self.assertNotIn('shard',
                         self.get('/v1/nodes/' + node.uuid,
                                  version='1.81').json_body)
        self.assertEqual('s1', self.get('/v1/nodes/' + node.uuid,
                                        version='1.82').json_body['shard'])
        resp = self.get('/v1/nodes/%s?fields=shard' % node.uuid,
                        version='1.81')
        self.assertError(resp, 406, 'baremetal.version_not_acceptable')

    def test_create_and_patch(self):
        body = self.post('/v1/nodes', {'driver': 'fake-hardware',
                                       'shard': 'rack-1'},
                         version='1.82', status=201).json_body
        self.assertEqual('rack-1', body['shard'])
        resp = self.post('/v1/nodes', {'driver': 'fake-hardware',
                                       'shard': 'rack-1'}, version='1.81')
        self.assertError(resp, 406, 'baremetal.version_not_acceptable',
                         'shard')
        patched = self.patch('/v1/nodes/' + body['uuid'],
                             [{'op': 'replace', 'path': '/shard',
                               'value': 'rack-2'}], status=200).json_body
        self.assertEqual('rack-2', patched['shard'])
        resp = self.patch('/v1/nodes/' + body['uuid'],
                          [{'op': 'remove', 'path': '/shard'}],
                          version='1.81')
        self.assertError(resp, 406, 'baremetal.version_not_acceptable')
        removed = self.patch('/v1/nodes/' + body['uuid'],
                             [{'op': 'remove', 'path': '/shard'}],
                             status=200).json_body
        self.assertIsNone(removed['shard'])
        resp = self.patch('/v1/nodes/' + body['uuid'],
                          [{'op': 'add', 'path': '/shard', 'value': 7}])
        self.assertError(resp, 400, 'baremetal.invalid_field', 'shard')

    def test_filters(self):
        a = self.make_node(name='a', shard='s1')
        b = self.make_node(name='b', shard='s2')
        c = self.make_node(name='c')

        def names(query, **kw):
            return [n['name'] for n in self.get('/v1/nodes?' + query, **kw)
                    .json_body['nodes']]

        self.assertEqual(['a'], names('shard=s1'))
        self.assertEqual(['a', 'b'], names('shard=s1,s2'))
        self.assertEqual(['a', 'b'], names('sharded=true'))
        self.assertEqual(['c'], names('sharded=false'))
        detail = self.get('/v1/nodes/detail?sharded=true&shard=s1,s2,x'
                          ).json_body['nodes']
        self.assertEqual([(a.uuid, 's1'), (b.uuid, 's2')],
                         [(n['uuid'], n['shard']) for n in detail])
        self.assertEqual([c.uuid], [n['uuid'] for n in self.get(
            '/v1/nodes?sharded=false').json_body['nodes']])
        for query in ('shard=s1', 'sharded=true'):
            self.assertError(self.get('/v1/nodes?' + query, version='1.81'),
                             406, 'baremetal.version_not_acceptable')
        self.assertError(self.get('/v1/nodes?sharded=maybe'), 400,
                         'baremetal.invalid_query', 'sharded')

    def test_shard_list(self):
        self.assertEqual({'shards': []}, self.get('/v1/shards').json_body)
        for shard in ('big', 'big', 'big', 'small', None):
            self.make_node(shard=shard)
        body = self.get('/v1/shards', version='1.82').json_body
        self.assertEqual({'name': 'big', 'count': 3}, body['shards'][0])
        self.assertEqual(sorted([{'name': 'small', 'count': 1},
                                 {'name': 'None', 'count': 1}],
                                key=lambda s: s['name']),
                         sorted(body['shards'][1:],
                                key=lambda s: s['name']))
        self.assertError(self.get('/v1/shards', version='1.81'), 404,
                         'baremetal.not_found')
        self.assertIn('shards', self.get('/v1', version='1.82').json_body)
        self.assertNotIn('shards',
                         self.get('/v1', version='1.81').json_body)


class TestChildNodes(base.BaremetalTestCase):
    """1.83: parent_node, /children and the child node filters."""

    def setUp(self):
        super().setUp()
        self.parent = self.make_node(name='parent')

    def _child(self, name, version=base.LATEST):
        return self.post('/v1/nodes', {'driver': 'fake-hardware',
                                       'name': name,
                                       'parent_node': 'parent'},
                         version=version)

    def test_parent_by_name_is_stored_as_uuid(self):
        child = self._child('dpu-0').json_body
        self.assertEqual(self.parent.uuid, child['parent_node'])
        self.assertNotIn('parent_node',
                         self.get('/v1/nodes/dpu-0',
                                  version='1.82').json_body)
        self.assertError(self._child('dpu-1', version='1.82'), 406,
                         'baremetal.version_not_acceptable', 'parent_node')

    def test_unknown_or_own_parent_is_400(self):
        resp = self.post('/v1/nodes', {'driver': 'fake-hardware',
                                       'parent_node': 'nobody'})
        self.assertError(resp, 400, 'baremetal.invalid_field',
                         'parent_node')
        uuid = uuidutils.generate_uuid()
        resp = self.post('/v1/nodes', {'driver': 'fake-hardware',
                                       'uuid': uuid, 'parent_node': uuid})
        self.assertError(resp, 400, 'baremetal.invalid_field',
                         'parent_node')
        resp = self.patch('/v1/nodes/parent',
                          [{'op': 'add', 'path': '/parent_node',
                            'value': 'parent'}])
        self.assertError(resp, 400, 'baremetal.invalid_field', 'own parent')

    def test_patch_parent_node(self):
        other = self.make_node(name='other')
        patched = self.patch('/v1/nodes/other',
                             [{'op': 'add', 'path': '/parent_node',
                               'value': self.parent.uuid}],
                             status=200).json_body
        self.assertEqual(self.parent.uuid, patched['parent_node'])
        resp = self.patch('/v1/nodes/other',
                          [{'op': 'remove', 'path': '/parent_node'}],
                          version='1.82')
        self.assertError(resp, 406, 'baremetal.version_not_acceptable')
        removed = self.patch('/v1/nodes/' + other.uuid,
                             [{'op': 'remove', 'path': '/parent_node'}],
                             status=200).json_body
        self.assertIsNone(removed['parent_node'])

    def test_children_hidden_from_lists(self):
        child = self._child('dpu-0').json_body

        def names(query='', **kw):
            return [n['name'] for n in self.get('/v1/nodes' + query, **kw)
                    .json_body['nodes']]

        self.assertEqual(['parent'], names())
        self.assertEqual(['parent'], names(version='1.82'))
        self.assertEqual(['parent', 'dpu-0'],
                         names('?include_children=true'))
        self.assertEqual(['dpu-0'], names('?parent_node=parent'))
        self.assertEqual(['dpu-0'],
                         names('?parent_node=' + self.parent.uuid))
        self.assertEqual([], names('?parent_node=' + child['uuid']))
        for query in ('?include_children=true', '?parent_node=parent'):
            self.assertError(self.get('/v1/nodes' + query, version='1.82'),
                             406, 'baremetal.version_not_acceptable')

    def test_children_endpoint(self):
        first = self._child('dpu-0').json_body
        second = self._child('dpu-1').json_body
        body = self.get('/v1/nodes/parent/children').json_body
        self.assertEqual(sorted([first['uuid'], second['uuid']]),
                         sorted(body['children']))
        self.assertEqual('children', body['links'][0]['rel'])
        self.assertIn('parent_node=' + self.parent.uuid,
                      body['links'][0]['href'])
        self.assertEqual([], self.get('/v1/nodes/dpu-0/children')
                         .json_body['children'])
        self.assertError(self.get('/v1/nodes/parent/children',
                                  version='1.82'), 404)
        self.assertError(self.get('/v1/nodes/nobody/children'), 404,
                         'baremetal.node_not_found')


class TestInventoryAndInspection(base.BaremetalTestCase):
    """1.81 and 1.84: no in-band inspection runs here."""

    with_conductor = False

    def test_inventory_not_recorded(self):
        node = self.make_node()
        resp = self.get('/v1/nodes/%s/inventory' % node.uuid)
        self.assertError(resp, 404, 'baremetal.node_inventory_not_found',
                         'Node inventory for node %s could not be found'
                         % node.uuid)
        self.assertError(self.get('/v1/nodes/%s/inventory' % node.uuid,
                                  version='1.80'), 404,
                         'baremetal.not_found')
        self.assertError(self.get('/v1/nodes/nobody/inventory'), 404,
                         'baremetal.node_not_found')

    def test_continue_inspection(self):
        self.make_node(driver_info={'ipmi_address': '192.0.2.1'})
        data = {'inventory': {'bmc_address': '192.0.2.1',
                              'interfaces': [{'mac_address':
                                              '52:54:00:12:34:56'}]}}
        # No node waits for inspection data: the look-up finds nothing.
        self.assertError(self.post('/v1/continue_inspection', data), 404,
                         'baremetal.not_found')
        resp = self.post('/v1/continue_inspection', data, version='1.83')
        self.assertError(resp, 404, 'baremetal.not_found', '1.84')
        for bad in ({}, {'inventory': {}},
                    {'inventory': {'interfaces': []}},
                    {'inventory': {'interfaces': [{'name': 'eth0'}]}},
                    {'inventory': {'interfaces': [{'mac_address': 'x'}],
                                   'bmc_address': 1}}):
            self.assertError(self.post('/v1/continue_inspection', bad), 400,
                             'baremetal.invalid_field', 'inventory')
        self.assertError(self.get('/v1/continue_inspection'), 405)


class TestInspectionCallbackIsPublic(base.BaremetalTestCase):
    """The ramdisk has no credentials, as upstream's call-back."""

    auth_strategy = 'keystone'
    with_conductor = False

    def test_no_credentials_needed(self):
        self.assertError(self.get('/v1/nodes'), 403)
        resp = self.post('/v1/continue_inspection',
                         {'inventory': {'interfaces': [
                             {'mac_address': '52:54:00:12:34:56'}]}})
        self.assertError(resp, 404, 'baremetal.not_found')


class TestUnhold(base.BaremetalTestCase):
    """1.85: the unhold verb."""

    def test_unhold(self):
        node = self.make_node(provision_state=states.MANAGEABLE)
        path = '/v1/nodes/%s/states/provision' % node.uuid
        resp = self.put(path, {'target': 'unhold'}, version='1.84')
        self.assertError(resp, 406, 'baremetal.version_not_acceptable',
                         'unhold')
        # Only a node in a hold state can leave it.
        resp = self.put(path, {'target': 'unhold'}, version='1.85')
        self.assertError(resp, 400, 'baremetal.invalid_state_requested',
                         'manageable')


class TestSelfOwnedNodeDeletion(base.BaremetalTestCase):
    """1.80: a project admin deletes the nodes its project owns."""

    auth_strategy = 'keystone'

    def test_project_admin_deletes_own_node(self):
        mine = self.make_node(owner='p1', provision_state=states.MANAGEABLE)
        theirs = self.make_node(owner='p2',
                                provision_state=states.MANAGEABLE)
        self.assertError(self.delete('/v1/nodes/' + theirs.uuid,
                                     headers=test_auth.P1_ADMIN), 404)
        self.assertError(self.delete('/v1/nodes/' + mine.uuid,
                                     headers=test_auth.P1), 403,
                         'baremetal.policy_forbidden')
        self.delete('/v1/nodes/' + mine.uuid, headers=test_auth.P1_ADMIN,
                    status=204)
        self.delete('/v1/nodes/' + theirs.uuid, headers=test_auth.ADMIN,
                    status=204)
