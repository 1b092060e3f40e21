"""Deploying IPMI nodes with the ``external`` deploy interface: the boot
device is set once and the node powered on, through the bare metal API
against the IPMI BMC emulator."""

from tests import base as tests_base
from tests.functional.drivers.ipmi import fixture
from tests.functional.drivers.ipmi import test_api


class TestExternalDeploy(test_api.IPMIAPITestCase):

    def available(self, bmc, **kw):
        node = self.create(bmc.driver_info(), **kw)
        self.assertEqual('external', node['deploy_interface'])
        self.provision(node['uuid'], 'manage')
        self.wait_state(node['uuid'], 'provision_state', 'manageable')
        self.provision(node['uuid'], 'provide')
        self.wait_state(node['uuid'], 'provision_state', 'available')
        return node['uuid']

    def test_deploy_sets_the_boot_device_once_and_powers_on(self):
        bmc = self.useFixture(fixture.BMC(power_delay=0.5))
        uuid = self.available(bmc)
        self.provision(uuid, 'active')
        node = self.wait_state(uuid, 'provision_state', 'active')
        self.assertIsNone(node['last_error'])
        self.assertEqual('power on', node['power_state'])
        state = bmc.state()
        self.assertEqual('on', state['power'])
        # pxe by default, for this boot only.
        self.assertEqual(('network', False),
                         (state['boot_device'], state['persistent']))

        self.provision(uuid, 'deleted')
        node = self.wait_state(uuid, 'provision_state', 'available')
        self.assertIsNone(node['last_error'])
        self.assertEqual('power off', node['power_state'])
        self.assertEqual('off', bmc.state()['power'])

    def test_boot_device_from_instance_info(self):
        bmc = self.useFixture(fixture.BMC())
        uuid = self.available(bmc)
        path = '/v1/nodes/%s' % uuid
        self.patch(path, [{'op': 'add', 'path': '/instance_info/boot_device',
                           'value': 'floppy'}], status=200)
        resp = self.put(path + '/states/provision', {'target': 'active'})
        self.assertError(resp, 400, 'baremetal.invalid_parameter_value',
                         'instance_info.boot_device')
        self.assertEqual('available',
                         self.get(path).json_body['provision_state'])
        self.patch(path, [{'op': 'replace',
                           'path': '/instance_info/boot_device',
                           'value': 'disk'}], status=200)
        self.provision(uuid, 'active')
        self.wait_state(uuid, 'provision_state', 'active')
        self.assertEqual(('hd', False), (bmc.state()['boot_device'],
                                         bmc.state()['persistent']))

    def test_a_bmc_that_does_not_power_on_fails_the_deploy(self):
        self.config(group='conductor', power_state_change_timeout=2)
        bmc = self.useFixture(fixture.BMC(stuck_power=True))
        uuid = self.available(bmc)
        self.provision(uuid, 'active')
        node = tests_base.wait_for(
            lambda: (lambda n: n if n['provision_state'] == 'deploy failed'
                     and not n['reservation'] else None)(
                self.get('/v1/nodes/%s' % uuid).json_body),
            'the deploy to fail', timeout=30)
        self.assertIn('powering the node on failed', node['last_error'])
        self.assertIn('within 2s', node['last_error'])
        self.assertEqual('power off', node['power_state'])
