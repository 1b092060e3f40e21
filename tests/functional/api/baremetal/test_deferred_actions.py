"""GET /v1/deferred_actions: the operators' read-only view."""

from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import deferred_action as da
from tests.functional.api.baremetal import base
from tests.functional.api.baremetal import test_auth


class TestDeferredActionsAPI(base.BaremetalTestCase):
    with_conductor = False

    def setUp(self):
        super().setUp()
        self.node = self.make_node(name='n1')
        self.other = self.make_node()
        self.actions = []
        for node in (self.node, self.other, self.node):
            action = objects.DeferredAction.new(
                self.context, node.id, 'task.driver.power.poll',
                arguments={'step': 1}, retries=2)
            action.create()
            self.actions.append(action)
        self.actions[1].transition(da.RUNNING)

    def test_list(self):
        body = self.get('/v1/deferred_actions', status=200).json_body
        items = body['deferred_actions']
        self.assertEqual([a.uuid for a in self.actions],
                         [i['uuid'] for i in items])
        self.assertEqual(self.node.uuid, items[0]['node_uuid'])
        self.assertEqual(self.other.uuid, items[1]['node_uuid'])
        self.assertEqual('RUNNING', items[1]['state'])
        self.assertEqual('task.driver.power.poll', items[0]['call'])
        self.assertNotIn('arguments', items[0])
        self.assertIn('links', items[0])

    def test_list_filters_detail_and_pages(self):
        body = self.get('/v1/deferred_actions?node=n1&detail=true',
                        status=200).json_body
        items = body['deferred_actions']
        self.assertEqual([self.actions[0].uuid, self.actions[2].uuid],
                         [i['uuid'] for i in items])
        self.assertEqual({'step': 1}, items[0]['arguments'])
        body = self.get('/v1/deferred_actions?state=RUNNING',
                        status=200).json_body
        self.assertEqual([self.actions[1].uuid],
                         [i['uuid'] for i in body['deferred_actions']])
        body = self.get('/v1/deferred_actions?limit=2',
                        status=200).json_body
        self.assertEqual(2, len(body['deferred_actions']))
        self.assertIn('marker=%s' % self.actions[1].uuid, body['next'])
        body = self.get('/v1/deferred_actions?marker=%s'
                        % self.actions[1].uuid, status=200).json_body
        self.assertEqual([self.actions[2].uuid],
                         [i['uuid'] for i in body['deferred_actions']])

    def test_bad_query(self):
        for query in ('state=DONE', 'color=red', 'limit=x'):
            resp = self.get('/v1/deferred_actions?' + query, status=400)
            self.assertError(resp, 400, 'baremetal.invalid_query')
        resp = self.get('/v1/deferred_actions?node=missing', status=404)
        self.assertError(resp, 404, 'baremetal.node_not_found')

    def test_show(self):
        action = self.actions[0]
        body = self.get('/v1/deferred_actions/%s' % action.uuid,
                        status=200).json_body
        self.assertEqual(action.uuid, body['uuid'])
        self.assertEqual(self.node.uuid, body['node_uuid'])
        self.assertEqual('CREATED', body['state'])
        self.assertEqual(2, body['retry_remaining'])
        self.assertEqual({'step': 1}, body['arguments'])
        for ident in ('c0ffee00-0000-0000-0000-000000000000', 'nope'):
            resp = self.get('/v1/deferred_actions/%s' % ident, status=404)
            self.assertError(resp, 404,
                             'baremetal.deferred_action_not_found')

    def test_read_only(self):
        resp = self.request('DELETE', '/v1/deferred_actions/%s'
                            % self.actions[0].uuid, status=405)
        self.assertEqual('GET', resp.headers['Allow'])


class TestDeferredActionsPolicy(base.BaremetalTestCase):
    with_conductor = False
    auth_strategy = 'keystone'

    def test_admins_only(self):
        self.get('/v1/deferred_actions', headers=test_auth.ADMIN,
                 status=200)
        self.get('/v1/deferred_actions', headers=test_auth.P1, status=403)
        self.get('/v1/deferred_actions/c0ffee00-0000-0000-0000-000000000000',
                 headers=test_auth.P1_READER, status=403)
