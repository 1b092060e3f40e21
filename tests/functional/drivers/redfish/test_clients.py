"""Redfish nodes with the ``alloc`` CLI and the ``openstack baremetal``
commands of python-ironicclient, over HTTP, against sushy-emulator; the
deployments boot an ISO that a local HTTP server serves."""

import json

import requests

from tests import base as tests_base
from tests.functional.api.baremetal import test_clients
from tests.functional.cli import base as cli_base
from tests.functional.drivers.ipmi import fixture as ipmi_fixture
from tests.functional.drivers import redfish
from tests.functional.drivers.redfish import emulators

# A power change of sushy-emulator shows after at most ~11 s.
POWER_WAIT = 40


ISO_PATH = '/images/instance.iso'


def _driver_info_options(flag, bmc, path):
    options = []
    for key, value in bmc.driver_info(redfish_system_id=path).items():
        options += [flag, '%s=%s' % (key, value)]
    return options


def _virtual_cd(bmc):
    """The virtual CD of the emulator's Manager, as the BMC shows it."""
    def get(path):
        return requests.get(bmc.address + path, timeout=10, auth=(
            emulators.USERNAME, emulators.PASSWORD)).json()
    manager = get(get('/redfish/v1/Managers')['Members'][0]['@odata.id'])
    return get(manager['VirtualMedia']['@odata.id'] + '/Cd')


def _iso_server(test):
    images = test.useFixture(ipmi_fixture.ImageServer(
        {ISO_PATH: b'CD001' + b'\0' * 2043}))
    return images.url + ISO_PATH


class TestAllocCLI(cli_base.BaremetalCLITestCase):

    def configure(self):
        super().configure()
        # The defaults: a BMC that answers slowly on a loaded machine
        # (an emulator inserting a virtual medium) is not a failure.
        redfish.enable_redfish(self)

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

    def test_deploy_from_virtual_media_and_undeploy(self):
        iso_url = _iso_server(self)
        path = self.bmc.system_path()
        node = self.alloc('baremetal', 'node', 'create', '--driver',
                          'redfish', '--name', 'rf-deploy',
                          *_driver_info_options('--driver-info', self.bmc,
                                                path))
        self.assertEqual('ramdisk', node['deploy_interface'])
        self.assertEqual('redfish-virtual-media', node['boot_interface'])
        for verb in ('manage', 'provide'):
            self.alloc('baremetal', 'node', verb, 'rf-deploy', '--wait',
                       '30', fmt=None)
        err = self.alloc_fails('baremetal', 'node', 'deploy', 'rf-deploy')
        self.assertIn('instance_info.boot_iso', err)

        self.alloc('baremetal', 'node', 'set', 'rf-deploy',
                   '--instance-info', 'boot_iso=%s' % iso_url, fmt=None)
        self.alloc('baremetal', 'node', 'deploy', 'rf-deploy', '--wait',
                   str(POWER_WAIT), fmt=None)
        shown = self.alloc('baremetal', 'node', 'show', 'rf-deploy')
        self.assertEqual('active', shown['provision_state'])
        self.assertEqual('power on', shown['power_state'])
        cd = _virtual_cd(self.bmc)
        self.assertEqual((True, iso_url), (cd['Inserted'], cd['Image']))
        self.assertEqual({'boot_device': 'cdrom', 'persistent': True},
                         self.alloc('baremetal', 'node', 'boot', 'device',
                                    'show', 'rf-deploy'),
                         'the emulator keeps every override Continuous')

        self.alloc('baremetal', 'node', 'undeploy', 'rf-deploy', '--wait',
                   str(POWER_WAIT), fmt=None)
        shown = self.alloc('baremetal', 'node', 'show', 'rf-deploy')
        self.assertEqual('available', shown['provision_state'])
        self.assertEqual('power off', shown['power_state'])
        self.assertFalse(_virtual_cd(self.bmc)['Inserted'])


class TestOpenStackBaremetal(test_clients.BaremetalCommandTestCase):

    def _start_conductor(self):
        # The defaults: a BMC that answers slowly on a loaded machine
        # (an emulator inserting a virtual medium) is not a failure.
        redfish.enable_redfish(self)
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

    def test_deploy_from_virtual_media_and_undeploy(self):
        iso_url = _iso_server(self)
        path = self.bmc.system_path()
        node = json.loads(self.run_cli(
            'baremetal', 'node', 'create', '--driver', 'redfish', '--name',
            'rf-osc', *_driver_info_options('--driver-info', self.bmc, path),
            '-f', 'json'))
        self.assertEqual('ramdisk', node['deploy_interface'])
        self.run_cli('baremetal', 'node', 'manage', 'rf-osc', '--wait', '30')
        self.run_cli('baremetal', 'node', 'provide', 'rf-osc', '--wait',
                     '30')
        failed = self.openstack.run('baremetal', 'node', 'deploy', 'rf-osc')
        self.assertNotEqual(0, failed.returncode)
        self.assertIn('instance_info.boot_iso', failed.stderr)
        self.assertNotIn('Traceback', failed.stderr)

        self.run_cli('baremetal', 'node', 'set', 'rf-osc', '--instance-info',
                     'boot_iso=%s' % iso_url)
        self.run_cli('baremetal', 'node', 'deploy', 'rf-osc', '--wait',
                     str(POWER_WAIT))
        shown = self.show()
        self.assertEqual('active', shown['provision_state'])
        self.assertEqual('power on', shown['power_state'])
        self.assertIsNone(shown['last_error'])
        cd = _virtual_cd(self.bmc)
        self.assertEqual((True, iso_url), (cd['Inserted'], cd['Image']))

        self.run_cli('baremetal', 'node', 'undeploy', 'rf-osc', '--wait',
                     str(POWER_WAIT))
        shown = self.show()
        self.assertEqual('available', shown['provision_state'])
        self.assertEqual('power off', shown['power_state'])
        self.assertFalse(_virtual_cd(self.bmc)['Inserted'])
