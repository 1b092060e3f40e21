"""``alloc baremetal node ...`` and ``alloc baremetal allocation ...``
end to end, against the bare metal API and an in-process conductor."""

from oslo_utils import uuidutils

from alloc_framework.common import context as af_context
from alloc_framework.objects import baremetal as objects
from tests.functional.cli import base


class TestNodeCommands(base.BaremetalCLITestCase):

    def create(self, name, *extra):
        return self.alloc('baremetal', 'node', 'create', '--driver',
                          'fake-hardware', '--name', name, *extra)

    def test_create_list_show_set_unset_delete(self):
        uuid = uuidutils.generate_uuid()
        node = self.create('node-0', '--uuid', uuid, '--resource-class',
                           'gold', '--property', 'cpus=8',
                           '--driver-info', 'user=admin',
                           '--extra', 'rack=r1')
        self.assertEqual(uuid, node['uuid'])
        self.assertEqual('node-0', node['name'])
        self.assertEqual('gold', node['resource_class'])
        self.assertEqual('enroll', node['provision_state'])
        self.assertEqual({'rack': 'r1'}, node['extra'])
        self.assertNotIn('links', node)

        listed = self.alloc('baremetal', 'node', 'list')
        self.assertEqual([{'uuid': uuid, 'name': 'node-0',
                           'instance_uuid': None,
                           'power_state': node['power_state'],
                           'provision_state': 'enroll',
                           'maintenance': False}], listed)
        long = self.alloc('baremetal', 'node', 'list', '--long')
        self.assertEqual('gold', long[0]['resource_class'])
        only = self.alloc('baremetal', 'node', 'list', '--fields', 'uuid',
                          'resource_class')
        self.assertEqual([{'uuid': uuid, 'resource_class': 'gold'}], only)
        self.assertEqual([], self.alloc('baremetal', 'node', 'list',
                                        '--resource-class', 'silver'))
        self.assertEqual(1, len(self.alloc('baremetal', 'node', 'list',
                                           '--provision-state', 'enroll',
                                           '--no-maintenance',
                                           '--unassociated')))

        shown = self.alloc('baremetal', 'node', 'show', 'node-0')
        self.assertEqual(uuid, shown['uuid'])
        self.assertEqual({'cpus': 8}, shown['properties'])
        few = self.alloc('baremetal', 'node', 'show', uuid, '--fields',
                         'uuid', 'name')
        self.assertEqual({'uuid': uuid, 'name': 'node-0'}, few)

        changed = self.alloc('baremetal', 'node', 'set', 'node-0',
                             '--resource-class', 'silver',
                             '--property', 'cpus=16',
                             '--extra', 'row=2', '--description', 'd')
        self.assertEqual('silver', changed['resource_class'])
        self.assertEqual({'cpus': 16}, changed['properties'])
        self.assertEqual({'rack': 'r1', 'row': 2}, changed['extra'])
        changed = self.alloc('baremetal', 'node', 'unset', 'node-0',
                             '--extra', 'rack', '--description')
        self.assertEqual({'row': 2}, changed['extra'])
        self.assertIsNone(changed['description'])

        self.alloc('baremetal', 'node', 'delete', 'node-0', fmt=None)
        err = self.alloc_fails('baremetal', 'node', 'show', uuid)
        self.assertIn('(HTTP 404)', err)
        self.assertIn(uuid, err)

    def test_create_and_set_parse_values_alike(self):
        # As the upstream client: a value that is JSON is stored decoded,
        # anything else as the string given, on create as on set.
        values = ('cpus=8', 'arch=x86_64', 'ratio=1.5', 'flag=true',
                  'tags=["a", "b"]', 'nested={"k": 1}', 'none=null',
                  'empty=', 'text=a=b')
        expected = {'cpus': 8, 'arch': 'x86_64', 'ratio': 1.5,
                    'flag': True, 'tags': ['a', 'b'], 'nested': {'k': 1},
                    'none': None, 'empty': '', 'text': 'a=b'}
        argv = []
        for flag in ('--property', '--extra', '--driver-info'):
            for value in values:
                argv += [flag, value]
        created = self.create('made', *argv)
        self.create('patched')
        patched = self.alloc('baremetal', 'node', 'set', 'patched', *argv)
        for field in ('properties', 'extra', 'driver_info'):
            self.assertEqual(expected, created[field], field)
            self.assertEqual(created[field], patched[field], field)
        err = self.alloc_fails('baremetal', 'node', 'create', '--driver',
                               'fake-hardware', '--property', 'cpus')
        self.assertIn("--property expects KEY=VALUE, got 'cpus'", err)

    def test_interfaces(self):
        node = self.create('node-i', '--boot-interface', 'no-boot')
        self.assertEqual('no-boot', node['boot_interface'])
        self.assertEqual('fake', node['bios_interface'])
        changed = self.alloc('baremetal', 'node', 'set', 'node-i',
                             '--bios-interface', 'no-bios')
        self.assertEqual('no-bios', changed['bios_interface'])
        changed = self.alloc('baremetal', 'node', 'unset', 'node-i',
                             '--boot-interface', '--bios-interface')
        self.assertEqual('fake', changed['boot_interface'])
        self.assertEqual('fake', changed['bios_interface'])

    def test_bad_input_reports_server_message(self):
        err = self.alloc_fails('baremetal', 'node', 'create', '--driver',
                               'no-such-driver')
        # Upstream answers an unknown driver on node create with 400.
        self.assertIn('(HTTP 400)', err)
        self.assertIn('(code: baremetal.driver_not_found)', err)
        self.assertIn('no-such-driver', err)
        self.create('dup')
        err = self.alloc_fails('baremetal', 'node', 'create', '--driver',
                               'fake-hardware', '--name', 'dup')
        self.assertIn('(HTTP 409)', err)
        err = self.alloc_fails('baremetal', 'node', 'list', '--fields',
                               'nonsense')
        self.assertIn('(HTTP 400)', err)
        self.assertIn('nonsense', err)
        err = self.alloc_fails('baremetal', 'node', 'delete', 'nope', 'dup')
        self.assertIn('Failed to delete 1 of 2 nodes', err)
        self.assertIn('nope', err)

    def test_provisioning_power_maintenance_history(self):
        self.create('node-1', '--resource-class', 'gold')
        self.alloc('baremetal', 'node', 'manage', 'node-1', '--wait', '30',
                   fmt=None)
        self.assertEqual('manageable', self.alloc(
            'baremetal', 'node', 'show', 'node-1')['provision_state'])
        self.alloc('baremetal', 'node', 'clean', 'node-1', '--clean-steps',
                   '[{"interface": "deploy", "step": "erase_devices"}]',
                   '--wait', '30', fmt=None)
        self.alloc('baremetal', 'node', 'provide', 'node-1', '--wait', '30',
                   fmt=None)
        self.assertEqual('available', self.alloc(
            'baremetal', 'node', 'show', 'node-1')['provision_state'])

        self.alloc('baremetal', 'node', 'power', 'on', 'node-1', '--wait',
                   '30', fmt=None)
        self.assertEqual('power on', self.alloc(
            'baremetal', 'node', 'show', 'node-1')['power_state'])
        self.alloc('baremetal', 'node', 'reboot', 'node-1', '--wait', '30',
                   fmt=None)
        self.alloc('baremetal', 'node', 'power', 'off', 'node-1', '--wait',
                   fmt=None)
        self.assertEqual('power off', self.alloc(
            'baremetal', 'node', 'show', 'node-1')['power_state'])

        self.alloc('baremetal', 'node', 'deploy', 'node-1', '--wait', '30',
                   fmt=None)
        self.assertEqual('active', self.alloc(
            'baremetal', 'node', 'show', 'node-1')['provision_state'])
        self.alloc('baremetal', 'node', 'undeploy', 'node-1', '--wait',
                   '30', fmt=None)
        self.assertEqual('available', self.alloc(
            'baremetal', 'node', 'show', 'node-1')['provision_state'])

        self.alloc('baremetal', 'node', 'maintenance', 'set', 'node-1',
                   '--reason', 'disk swap', fmt=None)
        node = self.alloc('baremetal', 'node', 'show', 'node-1')
        self.assertTrue(node['maintenance'])
        self.assertEqual('disk swap', node['maintenance_reason'])
        self.assertEqual(1, len(self.alloc('baremetal', 'node', 'list',
                                           '--maintenance')))
        self.alloc('baremetal', 'node', 'maintenance', 'unset', 'node-1',
                   fmt=None)
        self.assertFalse(self.alloc('baremetal', 'node', 'show',
                                    'node-1')['maintenance'])

        # The fake hardware never fails, so the event a failure would
        # leave is written directly.
        ctx = af_context.get_admin_context()
        node_obj = objects.Node.get_by_name(ctx, 'node-1')
        objects.NodeHistory.record(ctx, node_obj, 'Deploy step failed',
                                   conductor='test-host')
        history = self.alloc('baremetal', 'node', 'history', 'list',
                             'node-1')
        self.assertEqual(['Deploy step failed'],
                         [e['event'] for e in history
                          if e['event'] == 'Deploy step failed'])
        for event in history:
            self.assertEqual({'uuid', 'created_at', 'severity', 'event'},
                             set(event))
        long = self.alloc('baremetal', 'node', 'history', 'list', 'node-1',
                          '--long')
        self.assertEqual(len(history), len(long))
        self.assertIn('event_type', long[0])
        # At the newest version the fields of 1.113 and 1.115 are shown;
        # at 1.112 the server returns none of them and they are left out.
        for field in ('project', 'state', 'target_provision_state',
                      'duration_seconds'):
            self.assertIn(field, long[0])
        older = self.alloc('--os-baremetal-api-version', '1.112',
                           'baremetal', 'node', 'history', 'list', 'node-1',
                           '--long')
        self.assertEqual({'uuid', 'created_at', 'severity', 'event_type',
                          'event', 'conductor', 'user'}, set(older[0]))
        uuid = [e['uuid'] for e in history
                if e['event'] == 'Deploy step failed'][0]
        event = self.alloc('baremetal', 'node', 'history', 'get', 'node-1',
                           uuid)
        self.assertEqual('Deploy step failed', event['event'])
        self.assertEqual('test-host', event['conductor'])
        err = self.alloc_fails('baremetal', 'node', 'history', 'get',
                               'node-1', uuidutils.generate_uuid())
        self.assertIn('(HTTP 404)', err)

        # Verbs the state machine refuses: the server's 4xx reaches us.
        err = self.alloc_fails('baremetal', 'node', 'abort', 'node-1')
        self.assertIn('(HTTP 400)', err)
        err = self.alloc_fails(
            'baremetal', 'node', 'clean', 'node-1', '--clean-steps',
            '[{"interface": "deploy", "step": "erase_devices"}]')
        self.assertIn('(HTTP 400)', err)
        self.assertIn('available', err)

    def test_wait_reports_failures(self):
        self.create('node-3', '--driver-info', 'fake_fail_deploy=true',
                    '--driver-info', 'fake_fail_power=true')
        for verb in ('manage', 'provide'):
            self.alloc('baremetal', 'node', verb, 'node-3', '--wait', '30',
                       fmt=None)
        err = self.alloc_fails('baremetal', 'node', 'deploy', 'node-3',
                               '--wait', '30')
        self.assertIn('node node-3 to active failed: provision state '
                      'deploy failed: Deploy failed:', err)
        self.assertIn('fake_fail_deploy', err)
        err = self.alloc_fails('baremetal', 'node', 'power', 'on', 'node-3',
                               '--wait', '30')
        self.assertIn('node node-3 to power on failed: power state power '
                      'off: Failed to change power state to "power on"', err)

    def test_traits(self):
        self.create('node-2')
        self.alloc('baremetal', 'node', 'trait', 'add', 'node-2',
                   'CUSTOM_GPU', 'HW_CPU_X86_AVX', fmt=None)
        self.assertEqual([{'traits': 'CUSTOM_GPU'},
                          {'traits': 'HW_CPU_X86_AVX'}],
                         self.alloc('baremetal', 'node', 'trait', 'list',
                                    'node-2'))
        self.alloc('baremetal', 'node', 'trait', 'remove', 'node-2',
                   'CUSTOM_GPU', fmt=None)
        self.assertEqual([{'traits': 'HW_CPU_X86_AVX'}],
                         self.alloc('baremetal', 'node', 'trait', 'list',
                                    'node-2'))
        err = self.alloc_fails('baremetal', 'node', 'trait', 'remove',
                               'node-2', 'CUSTOM_GPU')
        self.assertIn('(HTTP 404)', err)
        self.alloc('baremetal', 'node', 'trait', 'remove', 'node-2',
                   '--all', fmt=None)
        self.assertEqual([], self.alloc('baremetal', 'node', 'trait',
                                        'list', 'node-2'))
        err = self.alloc_fails('baremetal', 'node', 'trait', 'add',
                               'node-2', 'lowercase-bad')
        self.assertIn('(HTTP 400)', err)


class TestAllocationCommands(base.BaremetalCLITestCase):

    def make_available(self, name, *extra):
        self.alloc('baremetal', 'node', 'create', '--driver',
                   'fake-hardware', '--name', name, *extra)
        for verb in ('manage', 'provide'):
            self.alloc('baremetal', 'node', verb, name, '--wait', '30',
                       fmt=None)
        self.alloc('baremetal', 'node', 'power', 'off', name, '--wait', '30',
                   fmt=None)
        return self.alloc('baremetal', 'node', 'show', name)

    def test_create_wait_show_list_set_unset_delete(self):
        node = self.make_available('n-gold', '--resource-class', 'gold')
        self.alloc('baremetal', 'node', 'trait', 'add', 'n-gold',
                   'CUSTOM_GPU', fmt=None)
        self.make_available('n-silver', '--resource-class', 'silver')

        allocation = self.alloc(
            'baremetal', 'allocation', 'create', '--resource-class', 'gold',
            '--trait', 'CUSTOM_GPU', '--candidate-node', 'n-gold',
            '--name', 'web-1', '--extra', 'purpose=web', '--wait', '30')
        self.assertEqual('active', allocation['state'])
        self.assertEqual(node['uuid'], allocation['node_uuid'])
        self.assertEqual(['CUSTOM_GPU'], allocation['traits'])
        self.assertEqual([node['uuid']], allocation['candidate_nodes'])
        self.assertEqual({'purpose': 'web'}, allocation['extra'])
        self.assertEqual(allocation['uuid'], self.alloc(
            'baremetal', 'node', 'show', 'n-gold')['allocation_uuid'])

        shown = self.alloc('baremetal', 'allocation', 'show', 'web-1')
        self.assertEqual(allocation['uuid'], shown['uuid'])
        few = self.alloc('baremetal', 'allocation', 'show', 'web-1',
                         '--fields', 'uuid', 'state')
        self.assertEqual({'uuid': allocation['uuid'], 'state': 'active'},
                         few)
        listed = self.alloc('baremetal', 'allocation', 'list')
        self.assertEqual([{'uuid': allocation['uuid'], 'name': 'web-1',
                           'resource_class': 'gold', 'state': 'active',
                           'node_uuid': node['uuid']}], listed)
        self.assertEqual(1, len(self.alloc('baremetal', 'allocation',
                                           'list', '--node', 'n-gold',
                                           '--state', 'active', '--long')))
        self.assertEqual([], self.alloc('baremetal', 'allocation', 'list',
                                        '--resource-class', 'silver'))

        changed = self.alloc('baremetal', 'allocation', 'set', 'web-1',
                             '--name', 'web-01', '--extra', 'team=a')
        self.assertEqual('web-01', changed['name'])
        self.assertEqual({'purpose': 'web', 'team': 'a'}, changed['extra'])
        changed = self.alloc('baremetal', 'allocation', 'unset', 'web-01',
                             '--extra', 'purpose')
        self.assertEqual({'team': 'a'}, changed['extra'])

        self.alloc('baremetal', 'allocation', 'delete', 'web-01', fmt=None)
        self.assertIsNone(self.alloc('baremetal', 'node', 'show',
                                     'n-gold')['allocation_uuid'])
        err = self.alloc_fails('baremetal', 'allocation', 'show', 'web-01')
        self.assertIn('(HTTP 404)', err)

    def test_failed_allocation_with_wait(self):
        err = self.alloc_fails('baremetal', 'allocation', 'create',
                               '--resource-class', 'none-such',
                               '--name', 'doomed', '--wait', '30')
        self.assertIn('failed', err)
        listed = self.alloc('baremetal', 'allocation', 'list', '--state',
                            'error', '--long')
        self.assertEqual(['doomed'], [a['name'] for a in listed])
        self.assertTrue(listed[0]['last_error'])

    def test_retry_failed_allocation(self):
        err = self.alloc_fails('baremetal', 'allocation', 'create',
                               '--resource-class', 'gold', '--name', 'late',
                               '--wait', '30')
        self.assertIn('failed', err)
        uuid = self.alloc('baremetal', 'allocation', 'show', 'late')['uuid']
        # Still nothing to allocate: the retry fails again.
        err = self.alloc_fails('baremetal', 'allocation', 'retry', 'late',
                               '--wait', '30')
        self.assertIn('gold', err)
        node = self.make_available('n-late', '--resource-class', 'gold')
        retried = self.alloc('baremetal', 'allocation', 'retry', 'late',
                             '--wait', '30')
        self.assertEqual((uuid, 'late', 'active', node['uuid']),
                         (retried['uuid'], retried['name'],
                          retried['state'], retried['node_uuid']))
        err = self.alloc_fails('baremetal', 'allocation', 'retry', 'late')
        self.assertIn('(HTTP 409)', err)
        self.assertIn('only an allocation in state error', err)

    def test_bad_input(self):
        err = self.alloc_fails('baremetal', 'allocation', 'create',
                               '--resource-class', 'gold', '--uuid',
                               'not-a-uuid')
        self.assertIn('(HTTP 400)', err)
        err = self.alloc_fails('baremetal', 'allocation', 'create',
                               '--resource-class', 'gold',
                               '--candidate-node', 'missing-node')
        self.assertIn('(HTTP 400)', err)
        self.assertIn('missing-node', err)
        self.assertEqual([], self.alloc('baremetal', 'allocation', 'list'))

    def test_explicit_microversion(self):
        self.assertEqual([], self.alloc('--os-baremetal-api-version',
                                        '1.52', 'baremetal', 'allocation',
                                        'list'))
        err = self.alloc_fails('--os-baremetal-api-version', '1.51',
                               'baremetal', 'allocation', 'list')
        self.assertIn('requires --os-baremetal-api-version 1.52', err)
        err = self.alloc_fails('--os-baremetal-api-version', '1.116',
                               'baremetal', 'allocation', 'list')
        self.assertIn('(HTTP 406)', err)

    def test_backfill(self):
        self.make_available('n-deployed', '--resource-class', 'gold')
        self.alloc('baremetal', 'node', 'deploy', 'n-deployed', '--wait',
                   '30', fmt=None)
        allocation = self.alloc('baremetal', 'allocation', 'create',
                                '--node', 'n-deployed', '--name', 'bf')
        self.assertEqual('active', allocation['state'])
        node = self.alloc('baremetal', 'node', 'show', 'n-deployed')
        self.assertEqual(node['uuid'], allocation['node_uuid'])
        self.assertEqual(allocation['uuid'], node['allocation_uuid'])


class TestShardAndChildNodeCommands(base.BaremetalCLITestCase):
    """Microversions 1.81 to 1.85 through ``alloc baremetal``."""

    def test_shards_children_inventory_unhold(self):
        parent = self.alloc('baremetal', 'node', 'create', '--driver',
                            'fake-hardware', '--name', 'parent',
                            '--shard', 'rack-1')
        self.assertEqual('rack-1', parent['shard'])
        child = self.alloc('baremetal', 'node', 'create', '--driver',
                           'fake-hardware', '--name', 'child',
                           '--parent-node', 'parent')
        self.assertEqual(parent['uuid'], child['parent_node'])

        self.assertEqual(['parent'], [n['name'] for n in self.alloc(
            'baremetal', 'node', 'list')])
        self.assertEqual(['child', 'parent'], sorted(
            n['name'] for n in self.alloc('baremetal', 'node', 'list',
                                          '--include-children')))
        self.assertEqual(['child'], [n['name'] for n in self.alloc(
            'baremetal', 'node', 'list', '--parent-node', 'parent')])
        self.assertEqual([{'child_nodes': child['uuid']}], self.alloc(
            'baremetal', 'node', 'children', 'list', 'parent'))
        self.assertEqual(['parent'], [n['name'] for n in self.alloc(
            'baremetal', 'node', 'list', '--shards', 'rack-1')])
        self.assertEqual(
            sorted([{'name': 'rack-1', 'count': 1},
                    {'name': 'None', 'count': 1}], key=str),
            sorted(self.alloc('baremetal', 'shard', 'list'), key=str))

        self.alloc('baremetal', 'node', 'unset', 'child', '--parent-node')
        self.assertEqual(['child', 'parent'], sorted(
            n['name'] for n in self.alloc('baremetal', 'node', 'list')))
        self.alloc('baremetal', 'node', 'set', 'child', '--shard', 'rack-2')
        self.assertEqual(['child'], [n['name'] for n in self.alloc(
            'baremetal', 'node', 'list', '--shards', 'rack-2')])

        err = self.alloc_fails('baremetal', 'node', 'inventory', 'save',
                               'parent')
        self.assertIn('Node inventory for node %s could not be found'
                      % parent['uuid'], err)
        err = self.alloc_fails('baremetal', 'node', 'unhold', 'parent')
        self.assertIn('enroll', err)


class TestAllocationGroupCommands(base.BaremetalCLITestCase):
    """``alloc baremetal allocation group ...``."""

    make_available = TestAllocationCommands.make_available

    def test_create_wait_list_show_delete(self):
        gold = {self.make_available('g-%d' % i, '--resource-class',
                                    'gold')['uuid'] for i in range(2)}
        group = self.alloc('baremetal', 'allocation', 'group', 'create',
                           '--member', 'count=2,resource_class=gold',
                           '--spread', 'conductor_group', '--name', 'pair',
                           '--wait', '30')
        self.assertEqual(('pair', 'active', 2),
                         (group['name'], group['state'],
                          len(group['allocations'])))
        self.assertEqual({'field': 'conductor_group'}, group['spread'])
        nodes = {self.alloc('baremetal', 'allocation', 'show',
                            uuid)['node_uuid']
                 for uuid in group['allocations']}
        self.assertEqual(gold, nodes)
        listed = self.alloc('baremetal', 'allocation', 'group', 'list')
        self.assertEqual([{'uuid': group['uuid'], 'name': 'pair',
                           'state': 'active', 'owner': None}], listed)
        self.assertEqual([], self.alloc('baremetal', 'allocation', 'group',
                                        'list', '--state', 'error'))
        shown = self.alloc('baremetal', 'allocation', 'group', 'show',
                           'pair')
        self.assertEqual(group['uuid'], shown['uuid'])
        self.alloc('baremetal', 'allocation', 'group', 'delete', 'pair',
                   fmt=None)
        self.assertEqual([], self.alloc('baremetal', 'allocation', 'list'))
        err = self.alloc_fails('baremetal', 'allocation', 'group', 'show',
                               'pair')
        self.assertIn('(HTTP 404)', err)

    def test_failed_group_with_wait(self):
        self.make_available('g-0', '--resource-class', 'gold')
        err = self.alloc_fails(
            'baremetal', 'allocation', 'group', 'create', '--member',
            'count=1,resource_class=gold,trait=CUSTOM_GPU', '--member',
            'count=1,resource_class=gold', '--wait', '30')
        self.assertIn('member 0', err)
        self.assertIn('CUSTOM_GPU', err)
        self.assertEqual([], self.alloc('baremetal', 'allocation', 'list'))
        err = self.alloc_fails('baremetal', 'allocation', 'group', 'create',
                               '--member', 'count=x,resource_class=gold')
        self.assertIn('count must be an integer', err)
        err = self.alloc_fails('baremetal', 'allocation', 'group', 'create',
                               '--member', 'count=1', '--member',
                               'count=1,resource_class=gold')
        self.assertIn('resource_class are required', err)
