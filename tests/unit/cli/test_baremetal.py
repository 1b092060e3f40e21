"""The bare metal commands against a fake HTTP layer."""

import json

import fixtures

from alloc_framework.cli.baremetal import node_state
from tests import base
from tests.unit.cli import fakes

NODE = '0f3b0a7e-5d1c-4c8e-9b2a-0c9d2e8e4f11'
ALLOC = '7c4a3e0b-9a61-4f0a-8f0b-2b1e1c5d6e7f'


class TestBaremetalCommands(base.TestCase):

    def setUp(self):
        super().setUp()
        self.http = self.useFixture(fakes.FakeHTTP())
        self.api = self.http.baremetal

    def test_allocation_create_body_and_version(self):
        self.api.add('POST', '/v1/allocations', 201, {
            'uuid': ALLOC, 'name': 'a1', 'state': 'allocating',
            'resource_class': 'gold', 'traits': ['CUSTOM_A'],
            'candidate_nodes': [NODE], 'extra': {'k': 'v'},
            'owner': None, 'node_uuid': None, 'last_error': None,
            'created_at': 'now', 'updated_at': None, 'links': []})
        out = fakes.run_json(self, [
            'baremetal', 'allocation', 'create', '--resource-class', 'gold',
            '--trait', 'CUSTOM_A', '--candidate-node', NODE, '--name', 'a1',
            '--extra', 'k=v'])
        req = self.api.last()
        self.assertEqual({'resource_class': 'gold', 'traits': ['CUSTOM_A'],
                          'candidate_nodes': [NODE], 'name': 'a1',
                          'extra': {'k': 'v'}}, req['json'])
        self.assertEqual('1.80',
                         req['headers']['X-OpenStack-Ironic-API-Version'])
        self.assertEqual('allocating', out['state'])
        self.assertNotIn('links', out)

    def test_allocation_create_needs_class_or_node(self):
        code, _out, err = fakes.run(['baremetal', 'allocation', 'create'])
        self.assertEqual(1, code)
        self.assertIn('--resource-class is required unless --node', err)

    def test_allocation_create_wait_reports_error(self):
        self.api.add('POST', '/v1/allocations', 201,
                     {'uuid': ALLOC, 'state': 'allocating'})
        self.api.add('GET', '/v1/allocations/' + ALLOC, 200, {
            'uuid': ALLOC, 'state': 'error',
            'last_error': 'No available nodes match the resource class '
                          'gold'})
        code, _out, err = fakes.run([
            'baremetal', 'allocation', 'create', '--resource-class', 'gold',
            '--wait', '5'])
        self.assertEqual(1, code)
        self.assertIn('No available nodes match the resource class gold',
                      err)

    def test_allocation_list_fields_and_filters(self):
        self.api.add('GET', '/v1/allocations', 200, {'allocations': [
            {'uuid': ALLOC, 'state': 'active'}]})
        out = fakes.run_json(self, [
            'baremetal', 'allocation', 'list', '--state', 'active',
            '--node', 'n1', '--fields', 'uuid', 'state'])
        self.assertEqual({'state': 'active', 'node': 'n1',
                          'fields': 'uuid,state'},
                         self.api.last()['params'])
        self.assertEqual([{'uuid': ALLOC, 'state': 'active'}], out)

    def test_allocation_list_follows_pages(self):
        first = [{'uuid': 'a%d' % i} for i in range(2)]
        self.api.add('GET', '/v1/allocations', 200,
                     {'allocations': first, 'next': 'http://x/next'})
        self.api.add('GET', '/v1/allocations', 200,
                     {'allocations': [{'uuid': 'a2'}]})
        out = fakes.run_json(self, ['baremetal', 'allocation', 'list'])
        self.assertEqual(['a0', 'a1', 'a2'], [a['uuid'] for a in out])
        self.assertEqual('a1', self.api.last()['params']['marker'])

    def test_allocation_set_and_unset_patch(self):
        self.api.add('PATCH', '/v1/allocations/' + ALLOC, 200,
                     {'uuid': ALLOC, 'name': 'x'})
        fakes.run_json(self, ['baremetal', 'allocation', 'set', ALLOC,
                              '--name', 'x', '--extra', 'a=1'])
        self.assertEqual([{'op': 'add', 'path': '/name', 'value': 'x'},
                          {'op': 'add', 'path': '/extra/a', 'value': 1}],
                         self.api.last()['json'])
        fakes.run_json(self, ['baremetal', 'allocation', 'unset', ALLOC,
                              '--name', '--extra', 'a'])
        self.assertEqual([{'op': 'remove', 'path': '/name'},
                          {'op': 'remove', 'path': '/extra/a'}],
                         self.api.last()['json'])

    def test_baremetal_error_message(self):
        fault = json.dumps({'faultstring': 'Allocation nope could not be '
                                           'found.', 'faultcode': 'Client',
                            'debuginfo': None})
        self.api.add('DELETE', '/v1/allocations/nope', 404,
                     {'error_message': fault})
        code, _out, err = fakes.run(['baremetal', 'allocation', 'delete',
                                     'nope'])
        self.assertEqual(1, code)
        self.assertIn('Allocation nope could not be found. (HTTP 404)', err)

    def test_node_create_body(self):
        self.api.add('POST', '/v1/nodes', 201,
                     {'uuid': NODE, 'driver': 'fake-hardware'})
        out = fakes.run_json(self, [
            'baremetal', 'node', 'create', '--driver', 'fake-hardware',
            '--name', 'n1', '--resource-class', 'gold',
            '--property', 'cpus=4', '--driver-info', 'ipmi_address=1.2.3.4'])
        self.assertEqual({'driver': 'fake-hardware', 'name': 'n1',
                          'resource_class': 'gold',
                          'properties': {'cpus': 4},
                          'driver_info': {'ipmi_address': '1.2.3.4'}},
                         self.api.last()['json'])
        self.assertEqual(NODE, out['uuid'])

    def test_node_list_long_and_filters(self):
        self.api.add('GET', '/v1/nodes/detail', 200, {'nodes': []})
        fakes.run_json(self, ['baremetal', 'node', 'list', '--long',
                              '--provision-state', 'available',
                              '--no-maintenance', '--unassociated',
                              '--resource-class', 'gold'])
        self.assertEqual({'provision_state': 'available',
                          'maintenance': 'false', 'associated': 'false',
                          'resource_class': 'gold'},
                         self.api.last()['params'])

    def test_node_shard_and_parent_node(self):
        v = ['--os-baremetal-api-version', '1.85']
        self.api.add('POST', '/v1/nodes', 201, {'uuid': NODE})
        fakes.run_json(self, v + ['baremetal', 'node', 'create', '--driver',
                                  'fake-hardware', '--shard', 's1',
                                  '--parent-node', 'p1'])
        self.assertEqual({'driver': 'fake-hardware', 'shard': 's1',
                          'parent_node': 'p1'}, self.api.last()['json'])
        self.api.add('PATCH', '/v1/nodes/n1', 200, {'uuid': NODE})
        fakes.run_json(self, v + ['baremetal', 'node', 'set', 'n1',
                                  '--shard', 's2'])
        self.assertEqual([{'op': 'add', 'path': '/shard', 'value': 's2'}],
                         self.api.last()['json'])
        fakes.run_json(self, v + ['baremetal', 'node', 'unset', 'n1',
                                  '--shard', '--parent-node'])
        self.assertEqual([{'op': 'remove', 'path': '/shard'},
                          {'op': 'remove', 'path': '/parent_node'}],
                         self.api.last()['json'])
        self.api.add('GET', '/v1/nodes', 200, {'nodes': []})
        fakes.run_json(self, v + ['baremetal', 'node', 'list', '--shards',
                                  's1', 's2', '--unsharded',
                                  '--include-children'])
        self.assertEqual({'shard': 's1,s2', 'sharded': 'false',
                          'include_children': 'true'},
                         self.api.last()['params'])
        fakes.run_json(self, v + ['baremetal', 'node', 'list',
                                  '--parent-node', 'p1'])
        self.assertEqual({'parent_node': 'p1'}, self.api.last()['params'])

    def test_children_shards_inventory_unhold(self):
        v = ['--os-baremetal-api-version', '1.85']
        self.api.add('GET', '/v1/nodes/p1/children', 200,
                     {'children': [NODE], 'links': []})
        out = fakes.run_json(self, v + ['baremetal', 'node', 'children',
                                        'list', 'p1'])
        self.assertEqual([{'child_nodes': NODE}], out)
        self.api.add('GET', '/v1/shards', 200, {'shards': [
            {'name': 's1', 'count': 2}, {'name': 'None', 'count': 1}]})
        out = fakes.run_json(self, v + ['baremetal', 'shard', 'list'])
        self.assertEqual([{'name': 's1', 'count': 2},
                          {'name': 'None', 'count': 1}], out)
        self.api.add('GET', '/v1/nodes/n1/inventory', 200,
                     {'inventory': {'cpu': {}}, 'plugin_data': {}})
        code, out, _err = fakes.run(v + ['baremetal', 'node', 'inventory',
                                         'save', 'n1'])
        self.assertEqual(0, code)
        self.assertEqual({'inventory': {'cpu': {}}, 'plugin_data': {}},
                         json.loads(out))
        self.api.add('PUT', '/v1/nodes/n1/states/provision', 202)
        code, _out, err = fakes.run(v + ['baremetal', 'node', 'unhold',
                                         'n1'])
        self.assertEqual(0, code, err)
        self.assertEqual({'target': 'unhold'}, self.api.last()['json'])

    def test_node_set_unset_patch(self):
        self.api.add('PATCH', '/v1/nodes/n1', 200, {'uuid': NODE})
        fakes.run_json(self, ['baremetal', 'node', 'set', 'n1',
                              '--resource-class', 'gold',
                              '--property', 'cpus=4'])
        self.assertEqual([
            {'op': 'add', 'path': '/resource_class', 'value': 'gold'},
            {'op': 'add', 'path': '/properties/cpus', 'value': 4}],
            self.api.last()['json'])
        fakes.run_json(self, ['baremetal', 'node', 'unset', 'n1',
                              '--instance-uuid', '--extra', 'k'])
        self.assertEqual([{'op': 'remove', 'path': '/instance_uuid'},
                          {'op': 'remove', 'path': '/extra/k'}],
                         self.api.last()['json'])

    def test_provision_verbs(self):
        url = '/v1/nodes/n1/states/provision'
        self.api.add('PUT', url, 202)
        for verb, target in (('manage', 'manage'), ('provide', 'provide'),
                             ('deploy', 'active'), ('undeploy', 'deleted')):
            code, _out, err = fakes.run(['baremetal', 'node', verb, 'n1'])
            self.assertEqual(0, code, err)
            self.assertEqual({'target': target}, self.api.last()['json'])

    def test_clean_steps(self):
        self.api.add('PUT', '/v1/nodes/n1/states/provision', 202)
        steps = [{'interface': 'deploy', 'step': 'erase_devices'}]
        code, _out, err = fakes.run(['baremetal', 'node', 'clean', 'n1',
                                     '--clean-steps', json.dumps(steps)])
        self.assertEqual(0, code, err)
        self.assertEqual({'target': 'clean', 'clean_steps': steps},
                         self.api.last()['json'])

    def test_power_and_maintenance(self):
        self.api.add('PUT', '/v1/nodes/n1/states/power', 202)
        self.api.add('PUT', '/v1/nodes/n1/maintenance', 202)
        self.api.add('DELETE', '/v1/nodes/n1/maintenance', 202)
        for argv, target in ((['power', 'on'], 'power on'),
                             (['power', 'off'], 'power off'),
                             (['reboot'], 'rebooting')):
            code, _out, err = fakes.run(['baremetal', 'node'] + argv
                                        + ['n1'])
            self.assertEqual(0, code, err)
            self.assertEqual({'target': target}, self.api.last()['json'])
        fakes.run(['baremetal', 'node', 'maintenance', 'set', 'n1',
                   '--reason', 'disk'])
        self.assertEqual({'reason': 'disk'}, self.api.last()['json'])
        code, _out, _err = fakes.run(['baremetal', 'node', 'maintenance',
                                      'unset', 'n1'])
        self.assertEqual(0, code)
        self.assertEqual('DELETE', self.api.last()['method'])

    def _node_answers(self, *nodes, interval=0):
        """The node as successive GETs see it; --wait polls every
        ``interval`` seconds."""
        self.useFixture(fixtures.MockPatchObject(node_state, 'WAIT_INTERVAL',
                                                 interval))
        for node in nodes:
            self.api.add('GET', '/v1/nodes/n1', 200, dict(
                {'uuid': NODE, 'target_provision_state': None,
                 'power_state': 'power off', 'target_power_state': None,
                 'last_error': None}, **node))

    def test_provision_wait_until_settled(self):
        self.api.add('PUT', '/v1/nodes/n1/states/provision', 202)
        self._node_answers(
            {'provision_state': 'deploying',
             'target_provision_state': 'active'},
            {'provision_state': 'wait call-back',
             'target_provision_state': 'active'},
            # Settled, but the conductor has not released the lock yet.
            {'provision_state': 'active', 'reservation': 'conductor-1'},
            {'provision_state': 'active'})
        code, _out, err = fakes.run(['baremetal', 'node', 'deploy', 'n1',
                                     '--wait', '10'])
        self.assertEqual(0, code, err)
        self.assertEqual(4, len([r for r in self.api.requests
                                 if r['method'] == 'GET']))

    def test_provision_wait_fails_on_failure_state(self):
        self.api.add('PUT', '/v1/nodes/n1/states/provision', 202)
        # A failure state keeps its target, as upstream.
        self._node_answers(
            {'provision_state': 'deploying',
             'target_provision_state': 'active'},
            {'provision_state': 'deploy failed',
             'target_provision_state': 'active',
             'last_error': 'Deploy failed: no image'})
        code, _out, err = fakes.run(['baremetal', 'node', 'deploy', 'n1',
                                     '--wait'])
        self.assertEqual(1, code)
        self.assertIn('node n1 to active failed: provision state deploy '
                      'failed: Deploy failed: no image', err)

    def test_provision_wait_fails_on_other_stable_state(self):
        self.api.add('PUT', '/v1/nodes/n1/states/provision', 202)
        # A failed verification goes back to enroll.
        self._node_answers(
            {'provision_state': 'verifying',
             'target_provision_state': 'manageable'},
            {'provision_state': 'enroll',
             'last_error': 'Failed to verify node'})
        code, _out, err = fakes.run(['baremetal', 'node', 'manage', 'n1',
                                     '--wait', '10'])
        self.assertEqual(1, code)
        self.assertIn('provision state enroll: Failed to verify node', err)

    def test_provision_wait_times_out(self):
        self.api.add('PUT', '/v1/nodes/n1/states/provision', 202)
        self._node_answers({'provision_state': 'cleaning',
                            'target_provision_state': 'available'},
                           interval=0.05)
        code, _out, err = fakes.run(['baremetal', 'node', 'provide', 'n1',
                                     '--wait', '1'])
        self.assertEqual(1, code)
        self.assertIn('Timed out after 1 seconds waiting for node n1 to '
                      'provide', err)

    def test_abort_wait_accepts_failure_state(self):
        self.api.add('PUT', '/v1/nodes/n1/states/provision', 202)
        self._node_answers({'provision_state': 'clean failed',
                            'target_provision_state': 'manageable',
                            'last_error': 'Aborted by request'})
        code, _out, err = fakes.run(['baremetal', 'node', 'abort', 'n1',
                                     '--wait'])
        self.assertEqual(0, code, err)

    def test_power_wait(self):
        self.api.add('PUT', '/v1/nodes/n1/states/power', 202)
        self._node_answers(
            {'provision_state': 'available',
             'target_power_state': 'power on'},
            {'provision_state': 'available', 'power_state': 'power on'})
        code, _out, err = fakes.run(['baremetal', 'node', 'reboot', 'n1',
                                     '--wait', '10'])
        self.assertEqual(0, code, err)
        self.assertEqual({'target': 'rebooting'},
                         self.api.last('PUT')['json'])
        self.assertEqual(2, len([r for r in self.api.requests
                                 if r['method'] == 'GET']))

    def test_power_wait_reports_failure(self):
        self.api.add('PUT', '/v1/nodes/n1/states/power', 202)
        self._node_answers(
            {'provision_state': 'available',
             'target_power_state': 'power on'},
            {'provision_state': 'available',
             'last_error': 'Failed to change power state to "power on"'})
        code, _out, err = fakes.run(['baremetal', 'node', 'power', 'on',
                                     'n1', '--wait'])
        self.assertEqual(1, code)
        self.assertIn('node n1 to power on failed: power state power off: '
                      'Failed to change power state', err)

    def test_traits(self):
        self.api.add('PUT', '/v1/nodes/n1/traits/CUSTOM_A', 204)
        self.api.add('GET', '/v1/nodes/n1/traits', 200,
                     {'traits': ['CUSTOM_B', 'CUSTOM_A']})
        code, _out, err = fakes.run(['baremetal', 'node', 'trait', 'add',
                                     'n1', 'CUSTOM_A'])
        self.assertEqual(0, code, err)
        out = fakes.run_json(self, ['baremetal', 'node', 'trait', 'list',
                                    'n1'])
        self.assertEqual([{'traits': 'CUSTOM_A'}, {'traits': 'CUSTOM_B'}],
                         out)
        code, _out, err = fakes.run(['baremetal', 'node', 'trait', 'remove',
                                     'n1'])
        self.assertEqual(1, code)
        self.assertIn('Give traits to remove or --all', err)

    def test_history(self):
        self.api.add('GET', '/v1/nodes/n1/history', 200, {'history': [
            {'uuid': 'h1', 'created_at': 't', 'severity': 'ERROR',
             'event': 'boom'}]})
        out = fakes.run_json(self, ['baremetal', 'node', 'history', 'list',
                                    'n1'])
        self.assertEqual([{'uuid': 'h1', 'created_at': 't',
                           'severity': 'ERROR', 'event': 'boom'}], out)

    def test_endpoint_with_v1_suffix_and_explicit_version(self):
        self.api.add('GET', '/v1/nodes', 200, {'nodes': []})
        fakes.run_json(self, ['--os-baremetal-endpoint', 'http://h:1/v1/',
                              '--os-baremetal-api-version', '1.60',
                              'baremetal', 'node', 'list'])
        self.assertIn(('baremetal', 'http://h:1', None),
                      self.http.adapters_made)
        self.assertEqual('1.60', self.api.last()['headers'][
            'X-OpenStack-Ironic-API-Version'])

    def test_invalid_version(self):
        code, _out, err = fakes.run(['--os-baremetal-api-version', 'new',
                                     'baremetal', 'node', 'list'])
        self.assertEqual(1, code)
        self.assertIn("Invalid baremetal API version 'new'", err)

    def test_version_gates(self):
        cases = [
            (['--os-baremetal-api-version', '1.51', 'baremetal',
              'allocation', 'list'], 'This command', '1.52'),
            (['--os-baremetal-api-version', '1.57', 'baremetal',
              'allocation', 'create', '--node', 'n1'], '--node', '1.58'),
            (['--os-baremetal-api-version', '1.59', 'baremetal',
              'allocation', 'create', '--resource-class', 'x', '--owner',
              'p'], '--owner', '1.60'),
            (['--os-baremetal-api-version', '1.56', 'baremetal',
              'allocation', 'set', 'a', '--name', 'b'], 'This command',
             '1.57'),
            (['--os-baremetal-api-version', '1.36', 'baremetal', 'node',
              'trait', 'list', 'n1'], 'This command', '1.37'),
            (['--os-baremetal-api-version', '1.77', 'baremetal', 'node',
              'history', 'list', 'n1'], 'This command', '1.78'),
            (['--os-baremetal-api-version', '1.80', 'baremetal', 'node',
              'inventory', 'save', 'n1'], 'This command', '1.81'),
            (['--os-baremetal-api-version', '1.81', 'baremetal', 'shard',
              'list'], 'This command', '1.82'),
            (['--os-baremetal-api-version', '1.81', 'baremetal', 'node',
              'create', '--driver', 'd', '--shard', 's'], '--shard',
             '1.82'),
            (['--os-baremetal-api-version', '1.81', 'baremetal', 'node',
              'list', '--sharded'], '--sharded/--unsharded', '1.82'),
            (['--os-baremetal-api-version', '1.82', 'baremetal', 'node',
              'set', 'n1', '--parent-node', 'p'], '--parent-node', '1.83'),
            (['--os-baremetal-api-version', '1.82', 'baremetal', 'node',
              'unset', 'n1', '--parent-node'], '--parent-node', '1.83'),
            (['--os-baremetal-api-version', '1.82', 'baremetal', 'node',
              'list', '--include-children'], '--include-children', '1.83'),
            (['--os-baremetal-api-version', '1.82', 'baremetal', 'node',
              'children', 'list', 'n1'], 'This command', '1.83'),
            (['--os-baremetal-api-version', '1.84', 'baremetal', 'node',
              'unhold', 'n1'], 'This command', '1.85'),
        ]
        for argv, what, version in cases:
            code, _out, err = fakes.run(argv)
            self.assertEqual(1, code, argv)
            self.assertIn('%s requires --os-baremetal-api-version %s or '
                          'greater' % (what, version), err)
        self.assertEqual([], self.api.requests)
