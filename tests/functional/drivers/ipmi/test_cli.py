"""IPMI nodes driven with ``alloc baremetal ...`` and with the real
``openstack baremetal ...`` commands of python-ironicclient, against an
emulated BMC."""

import json

from tests import base as tests_base
from tests.functional.api.baremetal import test_clients
from tests.functional.cli import base as cli_base
from tests.functional.drivers.ipmi import base as ipmi_base
from tests.functional.drivers.ipmi import fixture


def _driver_info_args(bmc, password=None):
    args = []
    for key, value in bmc.driver_info().items():
        if key == 'ipmi_password' and password is not None:
            value = password
        args += ['--driver-info', '%s=%s' % (key, value)]
    return args


class TestAllocCommands(cli_base.BaremetalCLITestCase):

    def configure(self):
        super().configure()
        ipmi_base.enable_ipmi(self)

    def test_lifecycle_power_and_boot_device(self):
        bmc = self.useFixture(fixture.BMC())
        node = self.alloc('baremetal', 'node', 'create', '--driver', 'ipmi',
                          '--name', 'ipmi-0', *_driver_info_args(bmc))
        self.assertEqual('******', node['driver_info']['ipmi_password'])
        self.assertEqual('ipmi', node['power_interface'])
        for verb in ('manage', 'provide'):
            self.alloc('baremetal', 'node', verb, 'ipmi-0', '--wait', '30',
                       fmt=None)
        self.assertEqual('available', self.alloc(
            'baremetal', 'node', 'show', 'ipmi-0')['provision_state'])
        self.alloc('baremetal', 'node', 'power', 'on', 'ipmi-0', '--wait',
                   '30', fmt=None)
        self.assertEqual('power on', self.alloc(
            'baremetal', 'node', 'show', 'ipmi-0')['power_state'])
        self.assertEqual('on', bmc.state()['power'])
        self.alloc('baremetal', 'node', 'power', 'off', 'ipmi-0', '--wait',
                   '30', fmt=None)
        self.assertEqual('off', bmc.state()['power'])

        self.alloc('baremetal', 'node', 'boot', 'device', 'set', 'ipmi-0',
                   'pxe', '--persistent', fmt=None)
        self.assertEqual({'boot_device': 'pxe', 'persistent': True},
                         self.alloc('baremetal', 'node', 'boot', 'device',
                                    'show', 'ipmi-0'))
        self.assertEqual('network', bmc.state()['boot_device'])
        self.assertEqual(
            {'supported_boot_devices': 'bios, cdrom, disk, pxe, safe'},
            self.alloc('baremetal', 'node', 'boot', 'device', 'show',
                       'ipmi-0', '--supported'))
        err = self.alloc_fails('baremetal', 'node', 'boot', 'device', 'set',
                               'ipmi-0', 'floppy')
        self.assertIn('(HTTP 400)', err)
        self.assertIn('floppy', err)

    def test_wrong_password_fails_manage_with_the_reason(self):
        bmc = self.useFixture(fixture.BMC())
        self.alloc('baremetal', 'node', 'create', '--driver', 'ipmi',
                   '--name', 'ipmi-1', *_driver_info_args(bmc, 'nope'))
        err = self.alloc_fails('baremetal', 'node', 'manage', 'ipmi-1',
                               '--wait', '30')
        self.assertIn('enroll', err)
        self.assertIn('refused the credentials', err)
        self.assertNotIn('nope', err.replace('ipmi-1', ''))


class TestOpenStackBaremetalCommands(test_clients.BaremetalCommandTestCase):

    def _start_conductor(self):
        ipmi_base.enable_ipmi(self)
        return super()._start_conductor()

    def show(self, node):
        return json.loads(self.run_cli('baremetal', 'node', 'show', node,
                                       '-f', 'json'))

    def test_ironicclient_commands(self):
        bmc = self.useFixture(fixture.BMC())
        node = json.loads(self.run_cli(
            'baremetal', 'node', 'create', '--driver', 'ipmi', '--name',
            'osc-ipmi', *_driver_info_args(bmc), '-f', 'json'))
        self.assertEqual('******', node['driver_info']['ipmi_password'])
        self.run_cli('baremetal', 'node', 'manage', 'osc-ipmi', '--wait',
                     '30')
        self.run_cli('baremetal', 'node', 'provide', 'osc-ipmi', '--wait',
                     '30')
        self.assertEqual('available', self.show('osc-ipmi')['provision_state'])

        # The client's power commands return with the 202: poll.
        for target, bmc_state in (('on', 'on'), ('off', 'off')):
            self.run_cli('baremetal', 'node', 'power', target, 'osc-ipmi')
            tests_base.wait_for(
                lambda: (self.show('osc-ipmi')['power_state']
                         == 'power %s' % target
                         and not self.show('osc-ipmi')['reservation']),
                'power %s' % target)
            self.assertEqual(bmc_state, bmc.state()['power'])

        self.run_cli('baremetal', 'node', 'boot', 'device', 'set',
                     'osc-ipmi', 'pxe', '--persistent')
        shown = json.loads(self.run_cli('baremetal', 'node', 'boot',
                                        'device', 'show', 'osc-ipmi',
                                        '-f', 'json'))
        self.assertEqual({'boot_device': 'pxe', 'persistent': True}, shown)
        self.assertEqual('network', bmc.state()['boot_device'])
        supported = json.loads(self.run_cli(
            'baremetal', 'node', 'boot', 'device', 'show', '--supported',
            'osc-ipmi', '-f', 'json'))
        # The client joins the list it received.
        self.assertEqual('bios, cdrom, disk, pxe, safe',
                         supported['supported_boot_devices'])

        result = self.openstack.run('baremetal', 'node', 'boot', 'device',
                                    'set', 'osc-ipmi', 'floppy')
        self.assertNotEqual(0, result.returncode)
        self.assertIn('floppy', result.stderr)
