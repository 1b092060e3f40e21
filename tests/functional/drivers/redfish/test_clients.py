"""Redfish nodes with the ``alloc`` CLI and the ``openstack baremetal``
commands of python-ironicclient, over HTTP, against sushy-emulator."""

import json

from tests import base as tests_base
from tests.functional.api.baremetal import test_clients
from tests.functional.cli import base as cli_base
from tests.functional.drivers import redfish
from tests.functional.drivers.redfish import emulators

# A power change of sushy-emulator shows after at most ~11 s.
POWER_WAIT = 40


def _driver_info_options(flag, bmc, path):
    options = []
    for key, value in bmc.driver_info(redfish_system_id=path).items():
        options += [flag, '%s=%s' % (key, value)]
    return options


class TestAllocCLI(cli_base.BaremetalCLITestCase):

    def configure(self):
        super().configure()
        redfish.enable_redfish(self, read_timeout=5, connection_timeout=5)

    def setUp(self):
        super().setUp()
        self.bmc = self.useFixture(emulators.SushyEmulator())

    def test_manage_power_and_boot_device(self):
        path = self.bmc.system_path()
        node = self.alloc('baremetal', 'node', 'create', '--driver',
                          'redfish', '--name', 'rf-cli',
                          *_driver_info_options('--driver-info', self.bmc,
                                                path))
        self.assertEqual('******', node['driver_info']['redfish_password'])
        self.alloc('baremetal', 'node', 'manage', 'rf-cli', '--wait', '30',
                   fmt=None)
        shown = self.alloc('baremetal', 'node', 'show', 'rf-cli')
        self.assertEqual('manageable', shown['provision_state'])
        self.assertEqual('power off', shown['power_state'])

        self.alloc('baremetal', 'node', 'power', 'on', 'rf-cli', '--wait',
                   str(POWER_WAIT), fmt=None)
        shown = self.alloc('baremetal', 'node', 'show', 'rf-cli')
        self.assertEqual('power on', shown['power_state'])
        self.assertIsNone(shown['last_error'])

        supported = self.alloc('baremetal', 'node', 'boot', 'device', 'show',
                               'rf-cli', '--supported')
        self.assertIn('pxe', supported['supported_boot_devices'])
        self.alloc('baremetal', 'node', 'boot', 'device', 'set', 'rf-cli',
                   'pxe', '--persistent', fmt=None)
        self.assertEqual({'boot_device': 'pxe', 'persistent': True},
                         self.alloc('baremetal', 'node', 'boot', 'device',
                                    'show', 'rf-cli'))
        err = self.alloc_fails('baremetal', 'node', 'boot', 'device', 'set',
                               'rf-cli', 'floppy')
        self.assertIn('Invalid boot_device floppy', err)


class TestOpenStackBaremetal(test_clients.BaremetalCommandTestCase):

    def _start_conductor(self):
        redfish.enable_redfish(self, read_timeout=5, connection_timeout=5)
        return super()._start_conductor()

    def setUp(self):
        super().setUp()
        self.bmc = self.useFixture(emulators.SushyEmulator())

    def show(self):
        return json.loads(self.run_cli('baremetal', 'node', 'show', 'rf-osc',
                                       '-f', 'json'))

    def test_manage_reboot_and_boot_device(self):
        path = self.bmc.system_path()
        node = json.loads(self.run_cli(
            'baremetal', 'node', 'create', '--driver', 'redfish', '--name',
            'rf-osc', *_driver_info_options('--driver-info', self.bmc, path),
            '-f', 'json'))
        self.assertEqual('******', node['driver_info']['redfish_password'])
        self.run_cli('baremetal', 'node', 'manage', 'rf-osc', '--wait', '30')
        self.assertEqual('manageable', self.show()['provision_state'])

        self.run_cli('baremetal', 'node', 'reboot', 'rf-osc')
        node = tests_base.wait_for(
            lambda: (lambda n: n if not n['target_power_state'] else None)(
                self.show()), 'the reboot to end', timeout=POWER_WAIT,
            interval=0.2)
        self.assertIsNone(node['last_error'])
        self.assertEqual('power on', node['power_state'])

        self.run_cli('baremetal', 'node', 'boot', 'device', 'set', 'rf-osc',
                     'pxe', '--persistent')
        self.assertEqual({'boot_device': 'pxe', 'persistent': True},
                         json.loads(self.run_cli(
                             'baremetal', 'node', 'boot', 'device', 'show',
                             'rf-osc', '-f', 'json')))
        supported = json.loads(self.run_cli(
            'baremetal', 'node', 'boot', 'device', 'show', '--supported',
            'rf-osc', '-f', 'json'))
        self.assertIn('pxe', supported['supported_boot_devices'])
        # A device the client knows but the BMC does not offer.
        self.assertNotIn('bios', supported['supported_boot_devices'])
        failed = self.openstack.run('baremetal', 'node', 'boot', 'device',
                                    'set', 'rf-osc', 'bios')
        self.assertNotEqual(0, failed.returncode)
        self.assertIn('Invalid boot_device bios', failed.stderr)
