"""``POST /v1/allocations/{ident}/retry``: an extension of ours."""

import os

from oslo_utils import uuidutils

from alloc_framework.api.baremetal import app as bm_app
from alloc_framework.api.baremetal import policies
from alloc_framework.objects.baremetal import allocation as allocation_obj
from tests.functional.api.baremetal import base
from tests.functional.api.baremetal import test_allocations
from tests.functional.api.baremetal import test_auth


class TestRetry(test_allocations.AllocationTestCase):

    def failed(self, **kw):
        body = {'resource_class': 'baremetal', 'name': 'web-1'}
        body.update(kw)
        created = self.post('/v1/allocations', body, status=201).json_body
        done = self.wait(created['uuid'])
        self.assertEqual('error', done['state'])
        return done

    def test_retry_keeps_uuid_and_name(self):
        failed = self.failed()
        node = self.make_node()
        resp = self.post('/v1/allocations/%s/retry' % failed['uuid'], None,
                         status=202)
        body = resp.json_body
        self.assertEqual(test_allocations.FIELDS, set(body))
        self.assertEqual((failed['uuid'], 'web-1', 'allocating'),
                         (body['uuid'], body['name'], body['state']))
        self.assertIsNone(body['last_error'])
        self.assertEqual('http://localhost/v1/allocations/%s'
                         % failed['uuid'], resp.headers['Location'])
        done = self.wait(failed['uuid'])
        self.assertEqual(('active', node.uuid, None),
                         (done['state'], done['node_uuid'],
                          done['last_error']))
        shown = self.get('/v1/nodes/%s' % node.uuid, status=200).json_body
        self.assertEqual(failed['uuid'], shown['allocation_uuid'])
        self.assertEqual(1, self.count())

    def test_retry_by_name_that_fails_again(self):
        self.failed(traits=['CUSTOM_GPU'])
        self.make_node()
        self.post('/v1/allocations/web-1/retry', None, status=202)
        done = self.wait('web-1')
        self.assertEqual('error', done['state'])
        self.assertIn('CUSTOM_GPU', done['last_error'])

    def test_other_states_are_409(self):
        self.make_node()
        created = self.post('/v1/allocations',
                            {'resource_class': 'baremetal'},
                            status=201).json_body
        self.assertEqual('active', self.wait(created['uuid'])['state'])
        resp = self.post('/v1/allocations/%s/retry' % created['uuid'], None)
        self.assertError(resp, 409, 'baremetal.allocation_not_retryable',
                         'active')
        pending = allocation_obj.Allocation(
            self.context, resource_class='baremetal',
            uuid=uuidutils.generate_uuid())
        pending.create(self.context)
        resp = self.post('/v1/allocations/%s/retry' % pending.uuid, None)
        self.assertError(resp, 409, 'baremetal.allocation_not_retryable',
                         'allocating')

    def test_unknown_is_404_and_other_methods_405(self):
        resp = self.post('/v1/allocations/%s/retry'
                         % uuidutils.generate_uuid(), None)
        self.assertError(resp, 404, 'baremetal.allocation_not_found')
        failed = self.failed()
        resp = self.get('/v1/allocations/%s/retry' % failed['uuid'])
        self.assertError(resp, 405, 'baremetal.method_not_allowed')
        self.assertEqual('POST', resp.headers['Allow'])

    def test_needs_the_allocation_api(self):
        failed = self.failed()
        resp = self.post('/v1/allocations/%s/retry' % failed['uuid'], None,
                         version='1.51')
        self.assertError(resp, 405, 'baremetal.method_not_allowed')
        self.post('/v1/allocations/%s/retry' % failed['uuid'], None,
                  version='1.52', status=202)


class TestRetryPolicy(base.BaremetalTestCase):
    auth_strategy = 'keystone'

    def _allocation(self, owner):
        allocation = allocation_obj.Allocation(
            self.context, resource_class='baremetal', owner=owner,
            uuid=uuidutils.generate_uuid(), state='error',
            last_error='no node')
        allocation.create(self.context)
        return allocation

    def test_retry_rule(self):
        rules = {rule.name for rule in policies.list_rules()}
        self.assertIn('baremetal:allocation:retry', rules)
        mine = self._allocation('p1')
        other = self._allocation('p2')
        path = '/v1/allocations/%s/retry'
        # Readers may see it but not retry it.
        self.assertError(self.post(path % mine.uuid, None,
                                   headers=test_auth.P1_READER),
                         403, 'baremetal.policy_forbidden',
                         'baremetal:allocation:retry')
        # Allocations of another project do not exist for the caller.
        self.assertError(self.post(path % other.uuid, None,
                                   headers=test_auth.P1), 404)
        self.post(path % mine.uuid, None, headers=test_auth.P1, status=202)
        self.post(path % other.uuid, None, headers=test_auth.ADMIN,
                  status=202)

    def test_rule_can_be_overridden(self):
        path = os.path.join(self.state_path, 'policy.yaml')
        with open(path, 'w') as stream:
            stream.write('"baremetal:allocation:retry": "role:admin"\n')
        self.config(policy_file=path, group='oslo_policy')
        self.app = bm_app.setup_app(self.conf,
                                    auth_middleware=base.keystone_headers)
        mine = self._allocation('p1')
        self.assertError(self.post('/v1/allocations/%s/retry' % mine.uuid,
                                   None, headers=test_auth.P1),
                         403, 'baremetal.policy_forbidden')
        # Creating is still allowed: only the retry rule changed.
        self.post('/v1/allocations', {'resource_class': 'baremetal'},
                  headers=test_auth.P1, status=201)
