"""The health of Redfish nodes (bare metal API 1.109), from a real BMC.

The power state sync reads the ComputerSystem's ``Status.Health`` with
the power state; sushy-emulator's fake system reports ``OK``.
"""

from tests.functional.drivers.redfish import emulators
from tests.functional.drivers.redfish import test_nodes


class TestHealth(test_nodes.RedfishNodeTestCase):

    def setUp(self):
        super().setUp()
        self.bmc = self.useFixture(emulators.SushyEmulator())

    def test_health_read_by_the_power_sync(self):
        node = self.create(self.bmc.driver_info(
            redfish_system_id=self.bmc.system_path()))
        self.provision(node['uuid'], 'manage')
        node = self.settled(node['uuid'])
        self.assertEqual('manageable', node['provision_state'],
                         node['last_error'])
        self.assertIsNone(node['health'])
        self.manager._sync_power_states(self.context)
        node = self.node(node['uuid'])
        self.assertEqual('OK', node['health'])
        self.assertNotIn('health', self.get(
            '/v1/nodes/%s' % node['uuid'], version='1.108',
            status=200).json_body)
        self.assertNoSecret(emulators.PASSWORD)
