"""Real clients and the node changes of versions 1.95 to 1.113.

python-ironicclient 6.3 (library and ``openstack baremetal``) knows
these versions and negotiates the newest this service offers;
openstacksdk's node resource goes up to 1.109.
"""

import json

from alloc_framework.common import context as af_context
from alloc_framework.objects.baremetal import node as node_obj
from alloc_framework.objects.baremetal import node_history
from tests import base as tests_base
from tests.functional.api.baremetal import test_clients


class TestIronicClient(test_clients.ClientTestCase):

    client = test_clients.TestIronicClient.client

    def test_new_node_fields(self):
        from ironicclient import exc

        ironic = self.client()
        node = ironic.node.create(driver='fake-hardware', name='n1',
                                  resource_class='baremetal',
                                  disable_power_off=True,
                                  instance_name='vm1')
        self.assertTrue(node.disable_power_off)
        self.assertEqual('vm1', node.instance_name)
        self.assertEqual({'display_name': 'vm1'}, node.instance_info)
        self.assertIsNone(node.health)
        self.assertEqual(['n1'], [n.name for n in ironic.node.list(
            instance_name='vm1')])
        ironic.node.update('n1', [{'op': 'replace',
                                   'path': '/instance_info/display_name',
                                   'value': 'vm2'}])
        self.assertEqual('vm2', ironic.node.get('n1').instance_name)
        self.assertRaises(exc.BadRequest, ironic.node.set_power_state,
                          'n1', 'off')
        ironic.node.set_power_state('n1', 'on')
        tests_base.wait_for(lambda: (ironic.node.get('n1').power_state
                                     == 'power on'
                                     and ironic.node.get('n1').reservation
                                     is None), 'n1 to be powered on')
        ctx = af_context.RequestContext(user_id='u1', project_id='p1')
        node_history.NodeHistory.record(
            ctx, node_obj.Node.get_by_uuid(self.context, node.uuid), 'e')
        [event] = ironic.node.get_history_list('n1', detail=True)
        self.assertEqual('p1', event['project'])
        self.assertEqual('u1', event['user'])


class TestBaremetalCommand(test_clients.BaremetalCommandTestCase):

    def test_new_node_options(self):
        node = json.loads(self.run_cli(
            'baremetal', 'node', 'create', '--driver', 'fake-hardware',
            '--name', 'cli-node', '--instance-name', 'vm1', '-f', 'json'))
        self.assertEqual('vm1', node['instance_name'])
        self.run_cli('baremetal', 'node', 'set', 'cli-node',
                     '--disable-power-off', '--instance-name', 'vm2')
        shown = json.loads(self.run_cli('baremetal', 'node', 'show',
                                        'cli-node', '-f', 'json'))
        self.assertTrue(shown['disable_power_off'])
        self.assertEqual('vm2', shown['instance_name'])
        self.assertEqual({'display_name': 'vm2'}, shown['instance_info'])
        self.assertIn('health', shown)
        listed = json.loads(self.run_cli(
            'baremetal', 'node', 'list', '--instance-name', 'vm2',
            '-f', 'json'))
        self.assertEqual(['cli-node'],
                         [test_clients._get(n, 'name') for n in listed])
        result = self.openstack.run('baremetal', 'node', 'power', 'off',
                                    'cli-node')
        self.assertNotEqual(0, result.returncode)
        self.assertIn('disable_power_off', result.stderr)
        self.run_cli('baremetal', 'node', 'set', 'cli-node',
                     '--enable-power-off')
        self.assertFalse(json.loads(self.run_cli(
            'baremetal', 'node', 'show', 'cli-node', '-f',
            'json'))['disable_power_off'])


class TestOpenStackSDK(test_clients.ClientTestCase):

    connection = test_clients.TestOpenStackSDK.connection

    def test_new_node_fields(self):
        conn = self.connection()
        node = conn.baremetal.create_node(driver='fake-hardware',
                                          name='sdk-node',
                                          instance_name='vm1')
        self.assertEqual('vm1', node.instance_name)
        stored = node_obj.Node.get_by_uuid(self.context, node.id)
        stored.health = 'Warning'
        stored.save(self.context)
        node = conn.baremetal.get_node('sdk-node')
        self.assertEqual('Warning', node.health)
        node = conn.baremetal.patch_node(
            node, [{'op': 'add', 'path': '/instance_info/display_name',
                    'value': 'vm2'}])
        self.assertEqual('vm2', node.instance_name)
