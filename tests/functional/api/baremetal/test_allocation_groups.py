"""``/v1/allocation_groups``: all-or-nothing groups of node allocations."""

import collections

from oslo_utils import uuidutils

from alloc_framework.objects.baremetal import allocation as allocation_obj
from alloc_framework.objects.baremetal import node as node_obj
from tests import base as tests_base
from tests.functional.api.baremetal import base
from tests.functional.api.baremetal import test_auth

FIELDS = {'uuid', 'name', 'owner', 'state', 'last_error', 'members',
          'spread', 'allocations', 'created_at', 'updated_at', 'links'}


class GroupTestCase(base.BaremetalTestCase):

    def wait(self, ident, timeout=30, **kw):
        def processed():
            body = self.get('/v1/allocation_groups/%s' % ident, status=200,
                            **kw).json_body
            return body if body['state'] != 'allocating' else None
        return tests_base.wait_for(processed, 'group %s to be processed'
                                   % ident, timeout=timeout, interval=0.05)

    def create(self, body, **kw):
        return self.post('/v1/allocation_groups', body, status=201,
                         **kw).json_body

    def reserved(self):
        """{node uuid: instance_uuid} of the reserved nodes."""
        return {n.uuid: n.instance_uuid
                for n in node_obj.Node.list(self.context)
                if n.instance_uuid}


class TestCreate(GroupTestCase):

    def test_group_that_fits(self):
        plain = [self.make_node() for _ in range(3)]
        gpus = [self.make_node(traits=['CUSTOM_GPU']) for _ in range(2)]
        resp = self.post('/v1/allocation_groups', {
            'name': 'cluster-1',
            'members': [{'count': 3, 'resource_class': 'baremetal'},
                        {'count': 2, 'resource_class': 'baremetal',
                         'traits': ['CUSTOM_GPU']}]}, status=201)
        body = resp.json_body
        self.assertEqual(FIELDS, set(body))
        self.assertEqual('http://localhost/v1/allocation_groups/%s'
                         % body['uuid'], resp.headers['Location'])
        self.assertEqual('cluster-1', body['name'])
        self.assertEqual(2, len(body['members']))
        done = self.wait('cluster-1')
        self.assertEqual('active', done['state'])
        self.assertIsNone(done['last_error'])
        self.assertEqual(5, len(done['allocations']))
        listed = self.get('/v1/allocations', status=200).json_body
        self.assertEqual(sorted(done['allocations']),
                         sorted(a['uuid'] for a in listed['allocations']))
        nodes = {a['node_uuid']: a for a in listed['allocations']}
        self.assertEqual({n.uuid for n in plain + gpus}, set(nodes))
        for gpu in gpus:
            self.assertEqual(['CUSTOM_GPU'], nodes[gpu.uuid]['traits'])
        for allocation in listed['allocations']:
            self.assertEqual('active', allocation['state'])
            self.assertEqual(body['uuid'],
                             allocation['extra']['allocation_group'])
            shown = self.get('/v1/nodes/%s' % allocation['node_uuid'],
                             status=200).json_body
            self.assertEqual(allocation['uuid'], shown['allocation_uuid'])
            self.assertEqual(allocation['uuid'], shown['instance_uuid'])

    def test_group_that_cannot_fit_reserves_nothing(self):
        for _ in range(2):
            self.make_node()
        body = self.create({'members': [{'count': 3,
                                         'resource_class': 'baremetal'}]})
        done = self.wait(body['uuid'])
        self.assertEqual('error', done['state'])
        self.assertEqual([], done['allocations'])
        self.assertIn('member 0', done['last_error'])
        self.assertIn('only 2 available nodes match the resource class '
                      'baremetal', done['last_error'])
        self.assertEqual({}, self.reserved())
        self.assertEqual([], allocation_obj.Allocation.list(self.context))

    def test_failing_second_member_undoes_the_first(self):
        for _ in range(3):
            self.make_node()
        body = self.create({'members': [
            {'count': 2, 'resource_class': 'baremetal'},
            {'count': 1, 'resource_class': 'baremetal',
             'traits': ['CUSTOM_MISSING']}]})
        done = self.wait(body['uuid'])
        self.assertEqual('error', done['state'])
        # The words of the single allocations name the filter.
        self.assertIn('member 1', done['last_error'])
        self.assertIn('have the requested traits CUSTOM_MISSING',
                      done['last_error'])
        self.assertEqual({}, self.reserved())
        self.assertEqual([], allocation_obj.Allocation.list(self.context))
        # The nodes are free for anyone else.
        single = self.post('/v1/allocations',
                           {'resource_class': 'baremetal'},
                           status=201).json_body
        self.assertEqual('active', tests_base.wait_for(
            lambda: (lambda b: b if b['state'] != 'allocating' else None)(
                self.get('/v1/allocations/%s' % single['uuid'],
                         status=200).json_body),
            'single allocation', timeout=30, interval=0.05)['state'])

    def test_unknown_resource_class_is_explained(self):
        body = self.create({'members': [{'count': 1,
                                         'resource_class': 'gold'}]})
        done = self.wait(body['uuid'])
        self.assertIn('no available nodes match the resource class gold',
                      done['last_error'])

    def test_candidate_nodes(self):
        wanted = [self.make_node(name='c-%d' % i) for i in range(2)]
        self.make_node()
        body = self.create({'members': [{
            'count': 2, 'resource_class': 'baremetal',
            'candidate_nodes': ['c-0', wanted[1].uuid]}]})
        self.assertEqual([w.uuid for w in wanted],
                         body['members'][0]['candidate_nodes'])
        self.assertEqual('active', self.wait(body['uuid'])['state'])
        self.assertEqual({w.uuid for w in wanted}, set(self.reserved()))

    def test_spread_over_conductor_groups(self):
        for group in ('a', 'b', 'c'):
            for _ in range(3):
                self.make_node(conductor_group=group)
        body = self.create({'members': [{'count': 3,
                                         'resource_class': 'baremetal'}],
                            'spread': {'field': 'conductor_group'}})
        self.assertEqual({'field': 'conductor_group'}, body['spread'])
        self.assertEqual('active', self.wait(body['uuid'])['state'])
        nodes = [n for n in node_obj.Node.list(self.context)
                 if n.instance_uuid]
        self.assertEqual(['a', 'b', 'c'],
                         sorted(n.conductor_group for n in nodes))

    def test_spread_over_a_property_is_even(self):
        for rack in ('r1', 'r2'):
            for _ in range(4):
                self.make_node(properties={'rack': rack})
        self.make_node()  # no rack: never used for a spread group
        body = self.create({'members': [{'count': 4,
                                         'resource_class': 'baremetal'}],
                            'spread': {'field': 'properties/rack'}})
        self.assertEqual('active', self.wait(body['uuid'])['state'])
        racks = collections.Counter(
            n.properties.get('rack') for n in node_obj.Node.list(self.context)
            if n.instance_uuid)
        self.assertEqual({'r1': 2, 'r2': 2}, dict(racks))

    def test_spread_without_the_property_fails(self):
        for _ in range(3):
            self.make_node()
        body = self.create({'members': [{'count': 2,
                                         'resource_class': 'baremetal'}],
                            'spread': {'field': 'properties/rack'}})
        done = self.wait(body['uuid'])
        self.assertEqual('error', done['state'])
        self.assertIn('properties/rack', done['last_error'])
        self.assertEqual({}, self.reserved())


class TestBadInput(GroupTestCase):
    with_conductor = False

    def assertBad(self, body, field):
        resp = self.post('/v1/allocation_groups', body)
        self.assertError(resp, 400, 'baremetal.invalid_field', field)

    def test_bad_bodies_name_the_field(self):
        member = {'count': 1, 'resource_class': 'baremetal'}
        self.assertBad({}, 'members')
        self.assertBad({'members': []}, 'members')
        self.assertBad({'members': [{'count': 0,
                                     'resource_class': 'rc'}]},
                       'members/0/count')
        self.assertBad({'members': [member, {'count': '2',
                                             'resource_class': 'rc'}]},
                       'members/1/count')
        self.assertBad({'members': [member, {'count': 1}]},
                       'members/1/resource_class')
        self.assertBad({'members': [dict(member, colour='red')]},
                       'members/0/colour')
        self.assertBad({'members': [member], 'spread': {'field': 'name'}},
                       'spread/field')
        self.assertBad({'members': [member], 'spread': {}}, 'spread/field')
        self.assertBad({'members': [member], 'colour': 'red'}, 'colour')
        self.assertBad({'members': [member], 'name': 'with space'}, 'name')
        self.assertBad({'members': [member], 'uuid': 'nope'}, 'uuid')
        self.assertBad({'members': [dict(member, traits=['bad trait'])]},
                       'members/0/traits')
        self.assertBad({'members': [dict(member,
                                         candidate_nodes=['missing'])]},
                       'members/0/candidate_nodes')

    def test_max_group_size(self):
        self.config(max_group_size=5, group='allocation')
        resp = self.post('/v1/allocation_groups', {'members': [
            {'count': 3, 'resource_class': 'a'},
            {'count': 3, 'resource_class': 'b'}]})
        self.assertError(resp, 400, 'baremetal.invalid_field',
                         'max_group_size')

    def test_unknown_group_is_404(self):
        for method in ('GET', 'DELETE'):
            resp = self.request(method, '/v1/allocation_groups/nope')
            self.assertError(resp, 404,
                             'baremetal.allocation_group_not_found')

    def test_every_version(self):
        self.get('/v1/allocation_groups', version='1.1', status=200)
        self.get('/v1/allocation_groups', version=None, status=200)


class TestListShowDelete(GroupTestCase):

    def test_list_filters_and_paging(self):
        self.make_node()
        ok = self.create({'name': 'g-ok', 'members': [
            {'count': 1, 'resource_class': 'baremetal'}]})
        bad = self.create({'name': 'g-bad', 'members': [
            {'count': 1, 'resource_class': 'gold'}]})
        self.wait(ok['uuid'])
        self.wait(bad['uuid'])
        body = self.get('/v1/allocation_groups', status=200).json_body
        self.assertEqual([ok['uuid'], bad['uuid']],
                         [g['uuid'] for g in body['allocation_groups']])
        body = self.get('/v1/allocation_groups?state=error',
                        status=200).json_body
        self.assertEqual(['g-bad'],
                         [g['name'] for g in body['allocation_groups']])
        page = self.get('/v1/allocation_groups?limit=1',
                        status=200).json_body
        self.assertEqual(['g-ok'],
                         [g['name'] for g in page['allocation_groups']])
        self.assertIn('marker=%s' % ok['uuid'], page['next'])
        rest = self.get('/v1/allocation_groups?limit=1&marker=%s'
                        % ok['uuid'], status=200).json_body
        self.assertEqual(['g-bad'],
                         [g['name'] for g in rest['allocation_groups']])
        desc = self.get('/v1/allocation_groups?sort_key=name&sort_dir=desc',
                        status=200).json_body
        self.assertEqual(['g-ok', 'g-bad'],
                         [g['name'] for g in desc['allocation_groups']])
        self.assertEqual([], self.get('/v1/allocation_groups?owner=p9',
                                      status=200).json_body[
                                          'allocation_groups'])
        for query in ('state=nope', 'limit=x', 'sort_key=members',
                      'marker=%s' % uuidutils.generate_uuid()):
            self.assertError(self.get('/v1/allocation_groups?' + query),
                             400, 'baremetal.invalid_query')

    def test_delete_releases_every_node(self):
        for _ in range(3):
            self.make_node()
        body = self.create({'name': 'g', 'members': [
            {'count': 3, 'resource_class': 'baremetal'}]})
        self.assertEqual('active', self.wait('g')['state'])
        self.assertEqual(3, len(self.reserved()))
        self.delete('/v1/allocation_groups/%s' % body['uuid'], status=204)
        self.assertEqual({}, self.reserved())
        self.assertEqual([], allocation_obj.Allocation.list(self.context))
        self.assertError(self.get('/v1/allocation_groups/g'), 404)

    def test_delete_refused_as_a_whole(self):
        for _ in range(2):
            self.make_node()
        self.create({'name': 'g', 'members': [
            {'count': 2, 'resource_class': 'baremetal'}]})
        self.assertEqual('active', self.wait('g')['state'])
        node = node_obj.Node.list(self.context)[1]
        node.provision_state = 'active'
        node.save()
        resp = self.delete('/v1/allocation_groups/g')
        self.assertError(resp, 409, 'baremetal.node_is_allocated')
        self.assertEqual(2, len(self.reserved()))
        self.assertEqual(2, len(allocation_obj.Allocation.list(
            self.context)))
        self.get('/v1/allocation_groups/g', status=200)

    def test_delete_failed_group(self):
        body = self.create({'members': [{'count': 1,
                                         'resource_class': 'gold'}]})
        self.wait(body['uuid'])
        self.delete('/v1/allocation_groups/%s' % body['uuid'], status=204)
        self.assertEqual([], self.get('/v1/allocation_groups',
                                      status=200).json_body[
                                          'allocation_groups'])

    def test_duplicate_name_is_409(self):
        self.create({'name': 'g', 'members': [{'count': 1,
                                               'resource_class': 'gold'}]})
        resp = self.post('/v1/allocation_groups', {
            'name': 'g', 'members': [{'count': 1, 'resource_class': 'x'}]})
        self.assertError(resp, 409,
                         'baremetal.allocation_group_duplicate_name')


class TestPolicy(GroupTestCase):
    auth_strategy = 'keystone'

    def test_rules_per_action(self):
        from alloc_framework.api.baremetal import policies
        names = {rule.name for rule in policies.list_rules()}
        for action in ('create', 'create_restricted', 'get', 'list',
                       'list_all', 'delete'):
            self.assertIn('baremetal:allocation_group:' + action, names)

    def test_projects_see_and_delete_their_own(self):
        member = [{'count': 1, 'resource_class': 'gold'}]
        mine = self.create({'members': member}, headers=test_auth.P1)
        self.assertEqual('p1', mine['owner'])
        other = self.create({'members': member}, headers=test_auth.P2)
        self.wait(mine['uuid'], headers=test_auth.P1)
        self.wait(other['uuid'], headers=test_auth.P2)
        listed = self.get('/v1/allocation_groups', headers=test_auth.P1,
                          status=200).json_body['allocation_groups']
        self.assertEqual([mine['uuid']], [g['uuid'] for g in listed])
        self.assertEqual(2, len(self.get(
            '/v1/allocation_groups', headers=test_auth.ADMIN,
            status=200).json_body['allocation_groups']))
        self.assertError(self.get('/v1/allocation_groups?owner=p2',
                                  headers=test_auth.P1), 403)
        path = '/v1/allocation_groups/%s'
        self.assertError(self.get(path % other['uuid'],
                                  headers=test_auth.P1), 404)
        self.assertError(self.delete(path % other['uuid'],
                                     headers=test_auth.P1), 404)
        self.get(path % mine['uuid'], headers=test_auth.P1_READER,
                 status=200)
        self.assertError(self.delete(path % mine['uuid'],
                                     headers=test_auth.P1_READER),
                         403, 'baremetal.policy_forbidden')
        self.delete(path % mine['uuid'], headers=test_auth.P1, status=204)
        self.delete(path % other['uuid'], headers=test_auth.ADMIN,
                    status=204)

    def test_create_rules(self):
        member = [{'count': 1, 'resource_class': 'gold'}]
        resp = self.post('/v1/allocation_groups', {'members': member},
                         headers=test_auth.P1_READER)
        self.assertError(resp, 403, 'baremetal.policy_forbidden')
        resp = self.post('/v1/allocation_groups',
                         {'members': member, 'owner': 'p2'},
                         headers=test_auth.P1)
        self.assertError(resp, 403, 'baremetal.policy_forbidden',
                         'create_restricted')
        body = self.create({'members': member, 'owner': 'p2'},
                           headers=test_auth.ADMIN)
        self.assertEqual('p2', body['owner'])
