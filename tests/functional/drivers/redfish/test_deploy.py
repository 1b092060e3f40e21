"""Deploying Redfish nodes: the ``ramdisk`` deploy interface booting
``instance_info/boot_iso`` from virtual media (``redfish-virtual-media``).

Through the bare metal API, a real conductor and Redfish BMCs in their
own processes: :mod:`.firmware_bmc` (which keeps one-time boot overrides
and records what each power on booted) and sushy-emulator (upstream's
emulator, whose virtual media fetch the image). The ISO is served by a
local HTTP server on 127.0.0.1.
"""

import requests

from tests.functional.drivers.ipmi import fixture as ipmi_fixture
from tests.functional.drivers.redfish import emulators
from tests.functional.drivers.redfish import test_nodes

ISO = b'CD001' + b'\0' * 2043
ISO_PATH = '/images/instance.iso'
OLD_ISO_PATH = '/images/old.iso'


class DeployTestCase(test_nodes.RedfishNodeTestCase):

    def setUp(self):
        super().setUp()
        self.images = self.useFixture(ipmi_fixture.ImageServer(
            {ISO_PATH: ISO, OLD_ISO_PATH: ISO}))
        self.iso_url = self.images.url + ISO_PATH

    def available_node(self, name, driver_info):
        self.create(driver_info, name=name)
        self.provision(name, 'manage')
        node = self.settled(name, timeout=test_nodes.POWER_WAIT)
        self.assertEqual('manageable', node['provision_state'],
                         node['last_error'])
        self.provision(name, 'provide')
        node = self.settled(name, timeout=test_nodes.POWER_WAIT)
        self.assertEqual('available', node['provision_state'],
                         node['last_error'])
        self.assertEqual('ramdisk', node['deploy_interface'])
        self.assertEqual('redfish-virtual-media', node['boot_interface'])
        return node

    def set_boot_iso(self, name, value):
        self.patch('/v1/nodes/%s' % name, [
            {'op': 'add', 'path': '/instance_info/boot_iso',
             'value': value}], status=200)


class TestVirtualMediaDeploy(DeployTestCase):
    """Against :mod:`.firmware_bmc`: what the node booted, and how often."""

    def setUp(self):
        super().setUp()
        self.bmc = self.useFixture(emulators.FirmwareBMC())

    def system(self):
        return self.bmc.counters()['systems']['fw-system']

    def test_deploy_boots_the_iso_once_and_undeploy_ejects_it(self):
        self.available_node('vm-0', self.bmc.driver_info())
        # Someone left an image in the virtual CD: it is ejected first
        # (this BMC refuses to insert over it).
        media = self.bmc.address + '/redfish/v1/Managers/bmc/VirtualMedia/Cd'
        requests.post(media + '/Actions/VirtualMedia.InsertMedia',
                      json={'Image': self.images.url + OLD_ISO_PATH},
                      auth=(emulators.USERNAME, emulators.PASSWORD),
                      timeout=10).raise_for_status()
        self.set_boot_iso('vm-0', self.iso_url)

        self.provision('vm-0', 'active')
        node = self.settled('vm-0')
        self.assertEqual('active', node['provision_state'],
                         node['last_error'])
        self.assertIsNone(node['last_error'])
        self.assertEqual('power on', node['power_state'])
        system = self.system()
        self.assertEqual('On', system['power'])
        self.assertEqual({'Image': self.iso_url, 'Inserted': True},
                         system['media']['Cd'])
        # It booted the ISO from the CD once; the override is spent.
        self.assertEqual([{'device': 'Cd', 'image': self.iso_url}],
                         system['boots'])
        self.assertEqual('Disabled',
                         system['boot']['BootSourceOverrideEnabled'])
        self.assertEqual(1, self.images.requests[ISO_PATH])

        # The next power cycle boots the disk, the ISO still inserted.
        node = self.power('vm-0', 'rebooting')
        self.assertIsNone(node['last_error'])
        self.assertEqual({'device': 'Hdd', 'image': None},
                         self.system()['boots'][-1])

        self.provision('vm-0', 'deleted')
        node = self.settled('vm-0')
        self.assertEqual('available', node['provision_state'],
                         node['last_error'])
        self.assertEqual('power off', node['power_state'])
        self.assertEqual({}, node['instance_info'])
        system = self.system()
        self.assertEqual('Off', system['power'])
        self.assertEqual({'Image': None, 'Inserted': False},
                         system['media']['Cd'])
        self.assertNoSecret(emulators.PASSWORD)

    def test_missing_or_bad_boot_iso_is_refused(self):
        self.available_node('vm-1', self.bmc.driver_info())
        resp = self.provision('vm-1', 'active', status=400)
        self.assertError(resp, 400, code='baremetal.missing_parameter_value',
                         contains='instance_info.boot_iso')
        for value, why in (('ftp://images/x.iso', 'http or https URL'),
                           ('https://u:Pw-0@images/x.iso',
                            'must not carry credentials')):
            self.set_boot_iso('vm-1', value)
            resp = self.provision('vm-1', 'active', status=400)
            self.assertError(resp, 400,
                             code='baremetal.invalid_parameter_value',
                             contains='instance_info.boot_iso')
            self.assertIn(why, resp.text)
            self.assertNotIn('Pw-0', resp.text)
        # Nothing happened to the node or its BMC.
        node = self.node('vm-1')
        self.assertEqual('available', node['provision_state'])
        self.assertEqual([], self.system()['boots'])
        self.assertEqual(0, sum(self.images.requests.values()))
        validate = self.get('/v1/nodes/vm-1/validate',
                            status=200).json_body
        self.assertFalse(validate['boot']['result'])
        self.assertIn('instance_info.boot_iso', validate['boot']['reason'])


class TestRefusedMedia(DeployTestCase):

    def setUp(self):
        super().setUp()
        self.bmc = self.useFixture(emulators.FirmwareBMC(refuse_media=True))

    def test_bmc_refusing_the_media_fails_the_deploy(self):
        self.available_node('vm-2', self.bmc.driver_info())
        self.set_boot_iso('vm-2', self.iso_url)
        self.provision('vm-2', 'active')
        node = self.settled('vm-2')
        self.assertEqual('deploy failed', node['provision_state'])
        self.assertIn('preparing the instance\'s boot failed',
                      node['last_error'])
        self.assertIn('refused to insert the image of instance_info.boot_iso '
                      'into its virtual media Cd', node['last_error'])
        self.assertIn('The virtual media service is unavailable',
                      node['last_error'])
        self.assertNotIn(self.iso_url, node['last_error'])
        # The node was not powered on to boot whatever it had.
        self.assertEqual('power off', node['power_state'])
        system = self.bmc.counters()['systems']['fw-system']
        self.assertEqual([], system['boots'])
        history = self.get('/v1/nodes/vm-2/history', status=200).json_body
        self.assertTrue(any('refused to insert' in event['event']
                            for event in history['history']))

        # The operator gives up on it: undeploying brings it back.
        self.provision('vm-2', 'deleted')
        node = self.settled('vm-2')
        self.assertEqual('available', node['provision_state'],
                         node['last_error'])
        self.assertEqual('power off', node['power_state'])


class TestNoCDMedia(DeployTestCase):

    def setUp(self):
        super().setUp()
        self.bmc = self.useFixture(emulators.FirmwareBMC(cd_media=False))

    def test_a_bmc_without_cd_media_fails_the_deploy(self):
        self.available_node('vm-3', self.bmc.driver_info())
        self.set_boot_iso('vm-3', self.iso_url)
        self.provision('vm-3', 'active')
        node = self.settled('vm-3')
        self.assertEqual('deploy failed', node['provision_state'])
        self.assertIn('has no virtual media device that accepts a CD or '
                      'DVD', node['last_error'])
        self.assertEqual('power off', node['power_state'])
        self.assertEqual(
            [], self.bmc.counters()['systems']['fw-system']['boots'])


class TestSushyEmulatorDeploy(DeployTestCase):
    """Against sushy-emulator, whose virtual media fetch the image."""

    def setUp(self):
        super().setUp()
        self.bmc = self.useFixture(emulators.SushyEmulator())

    def bmc_get(self, path):
        return requests.get(self.bmc.address + path, timeout=10, auth=(
            emulators.USERNAME, emulators.PASSWORD)).json()

    def cd(self):
        """The virtual CD the system's Manager links to."""
        manager = self.bmc_get(self.bmc_get(
            '/redfish/v1/Managers')['Members'][0]['@odata.id'])
        return self.bmc_get(manager['VirtualMedia']['@odata.id'] + '/Cd')

    def test_deploy_and_undeploy(self):
        path = self.bmc.system_path()
        self.available_node('sushy-0',
                            self.bmc.driver_info(redfish_system_id=path))
        self.set_boot_iso('sushy-0', self.iso_url)
        self.provision('sushy-0', 'active')
        node = self.settled('sushy-0', timeout=test_nodes.POWER_WAIT)
        self.assertEqual('active', node['provision_state'],
                         node['last_error'])
        self.assertEqual('power on', node['power_state'])
        cd = self.cd()
        self.assertTrue(cd['Inserted'])
        self.assertEqual(self.iso_url, cd['Image'])
        system = self.bmc_get(path)
        self.assertEqual('On', system['PowerState'])
        self.assertEqual('Cd', system['Boot']['BootSourceOverrideTarget'])
        self.assertEqual(1, self.images.requests[ISO_PATH])

        self.provision('sushy-0', 'deleted')
        node = self.settled('sushy-0', timeout=test_nodes.POWER_WAIT)
        self.assertEqual('available', node['provision_state'],
                         node['last_error'])
        self.assertEqual('power off', node['power_state'])
        self.assertFalse(self.cd()['Inserted'])
        self.assertEqual('Off', self.bmc_get(path)['PowerState'])

    def test_image_the_bmc_cannot_fetch(self):
        path = self.bmc.system_path()
        self.available_node('sushy-1',
                            self.bmc.driver_info(redfish_system_id=path))
        self.set_boot_iso('sushy-1', self.images.url + '/images/gone.iso')
        self.provision('sushy-1', 'active')
        node = self.settled('sushy-1', timeout=test_nodes.POWER_WAIT)
        self.assertEqual('deploy failed', node['provision_state'])
        self.assertIn('refused to insert the image of instance_info.boot_iso',
                      node['last_error'])
        self.assertIn('404', node['last_error'])
        self.assertEqual('power off', node['power_state'])
        self.assertFalse(self.cd()['Inserted'])
