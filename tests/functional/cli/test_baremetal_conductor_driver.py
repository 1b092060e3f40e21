"""``alloc baremetal conductor ...``, ``driver ...``, ``node validate`` and
``node boot device set|show`` end to end, against the bare metal API and
an in-process conductor."""

from tests.functional.cli import base


class TestConductorAndDriverCommands(base.BaremetalCLITestCase):

    def test_conductor_list_and_show(self):
        listed = self.alloc('baremetal', 'conductor', 'list')
        self.assertEqual([{'hostname': 'test-host', 'conductor_group': '',
                           'alive': True}], listed)
        listed = self.alloc('baremetal', 'conductor', 'list', '--long')
        self.assertEqual(['fake-hardware'], listed[0]['drivers'])
        self.assertIsNotNone(listed[0]['updated_at'])
        shown = self.alloc('baremetal', 'conductor', 'show', 'test-host')
        self.assertEqual(('test-host', True, ['fake-hardware']),
                         (shown['hostname'], shown['alive'],
                          shown['drivers']))
        err = self.alloc_fails('baremetal', 'conductor', 'show', 'nope')
        self.assertIn('nope', err)
        err = self.alloc_fails('--os-baremetal-api-version', '1.48',
                               'baremetal', 'conductor', 'list')
        self.assertIn('1.49', err)

    def test_driver_list_show_and_properties(self):
        listed = self.alloc('baremetal', 'driver', 'list')
        self.assertEqual([{'name': 'fake-hardware',
                           'hosts': ['test-host']}], listed)
        listed = self.alloc('baremetal', 'driver', 'list', '--long')
        self.assertEqual('fake', listed[0]['default_power_interface'])
        shown = self.alloc('baremetal', 'driver', 'show', 'fake-hardware')
        self.assertEqual('dynamic', shown['type'])
        self.assertIn('fake', shown['enabled_deploy_interfaces'])
        props = self.alloc('baremetal', 'driver', 'property', 'list',
                           'fake-hardware')
        self.assertIn('fake_fail_power', [p['property'] for p in props])
        err = self.alloc_fails('baremetal', 'driver', 'show', 'nope')
        self.assertIn('nope', err)

    def test_node_validate(self):
        self.alloc('baremetal', 'node', 'create', '--driver',
                   'fake-hardware', '--name', 'v-node')
        verdicts = self.alloc('baremetal', 'node', 'validate', 'v-node')
        self.assertEqual(
            [{'interface': kind, 'result': True, 'reason': ''}
             for kind in sorted(('power', 'deploy', 'management', 'boot',
                                 'bios', 'firmware'))], verdicts)
        err = self.alloc_fails('baremetal', 'node', 'validate', 'nope')
        self.assertIn('nope', err)

    def test_node_boot_device_set_and_show(self):
        self.alloc('baremetal', 'node', 'create', '--driver',
                   'fake-hardware', '--name', 'b-node')
        result = self.alloc('baremetal', 'node', 'boot', 'device', 'set',
                            'b-node', 'pxe', '--persistent', fmt=None)
        self.assertEqual('', result.out)
        self.assertEqual({'boot_device': 'pxe', 'persistent': True},
                         self.alloc('baremetal', 'node', 'boot', 'device',
                                    'show', 'b-node'))
        self.alloc('baremetal', 'node', 'boot', 'device', 'set', 'b-node',
                   'disk', fmt=None)
        self.assertEqual({'boot_device': 'disk', 'persistent': False},
                         self.alloc('baremetal', 'node', 'boot', 'device',
                                    'show', 'b-node'))
        supported = self.alloc('baremetal', 'node', 'boot', 'device', 'show',
                               'b-node', '--supported')
        self.assertEqual(['supported_boot_devices'], list(supported))
        self.assertIn('pxe', supported['supported_boot_devices'].split(', '))
        err = self.alloc_fails('baremetal', 'node', 'boot', 'device', 'set',
                               'b-node', 'floppy')
        self.assertIn('floppy', err)
        err = self.alloc_fails('baremetal', 'node', 'boot', 'device', 'show',
                               'nope')
        self.assertIn('nope', err)
