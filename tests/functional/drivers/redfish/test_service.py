"""Firmware updates of Redfish nodes as operators start them.

The whole path: the bare metal API's ``service`` verb on an ``active``
node, or ``clean`` on a ``manageable`` one, with the ``firmware.update``
step; the conductor turns the step into a deferred action; the launcher
periodic (running on its own, as in a deployment) drives it against a
firmware-capable Redfish BMC in its own process; the node returns to its
stable state and ``GET /v1/nodes/{node}/firmware`` shows what was
flashed.
"""

from alloc_framework.common import states
from tests import base as tests_base
from tests.functional.drivers.ipmi import fixture as ipmi_fixture
from tests.functional.drivers.redfish import emulators
from tests.functional.drivers.redfish import test_nodes

BMC_IMAGE = 'http://images.example.org/bmc-2.1.0.bin'
BIOS_IMAGE = 'http://images.example.org/bios-2.00.bin'
# The BMC emulator refuses images with "corrupt" in their name.
CORRUPT_IMAGE = 'http://images.example.org/bmc-corrupt-3.0.bin'


def update_step(*settings):
    return {'interface': 'firmware', 'step': 'update',
            'args': {'settings': [{'component': c, 'url': u}
                                  for c, u in settings]}}


class TestFirmwareThroughTheAPI(test_nodes.RedfishNodeTestCase):

    redfish_options = {'read_timeout': 10, 'connection_timeout': 10,
                       'firmware_update_status_interval': 0}

    def _start_conductor(self):
        # The launcher periodic runs by itself, often.
        self.config(launcher_interval=0.2, group='deferred_actions')
        return super()._start_conductor()

    def setUp(self):
        super().setUp()
        self.bmc = self.useFixture(emulators.FirmwareBMC(
            task_polls=1, bmc_reset=1.0))

    def firmware(self, uuid):
        body = self.get('/v1/nodes/%s/firmware' % uuid, status=200,
                        version='1.86').json_body
        return {c['component']: c for c in body['firmware']}

    def wait_state(self, uuid, state, timeout=60):
        def check():
            node = self.node(uuid)
            if node['provision_state'] == state and not node['reservation']:
                return node
            return None
        return tests_base.wait_for(check, 'node %s in %s' % (uuid, state),
                                   timeout=timeout, interval=0.2)

    def test_service_an_active_node(self):
        # The node is deployed for real: an ISO from virtual media.
        images = self.useFixture(ipmi_fixture.ImageServer(
            {'/instance.iso': b'CD001'}))
        node = self.create(self.bmc.driver_info(), instance_info={
            'boot_iso': images.url + '/instance.iso'})
        uuid = node['uuid']
        self.provision(uuid, 'manage')
        self.wait_state(uuid, states.MANAGEABLE)
        before = self.firmware(uuid)
        self.assertEqual('1.0.0', before['bmc']['current_version'])
        self.assertEqual('U30 v1.00', before['bios']['current_version'])
        self.provision(uuid, 'provide')
        self.wait_state(uuid, states.AVAILABLE)
        self.provision(uuid, 'active')
        self.wait_state(uuid, states.ACTIVE)

        self.put('/v1/nodes/%s/states/provision' % uuid,
                 {'target': 'service',
                  'service_steps': [update_step(('bmc', BMC_IMAGE),
                                                ('bios', BIOS_IMAGE))]},
                 status=202, version='1.87')
        waiting = self.wait_state(uuid, states.SERVICEWAIT)
        self.assertEqual('update', waiting['service_step']['step'])
        # Each wait of the update is an action the launcher reschedules.
        actions = self.get('/v1/deferred_actions?node=%s' % uuid,
                           status=200).json_body['deferred_actions']
        self.assertEqual(['task.driver.firmware.update'],
                         [a['call'] for a in actions])

        done = self.wait_state(uuid, states.ACTIVE, timeout=90)
        self.assertIsNone(done['last_error'])
        self.assertEqual({}, done['service_step'])
        after = self.firmware(uuid)
        self.assertEqual(('1.0.0', '2.1.0', '2.1.0'),
                         (after['bmc']['initial_version'],
                          after['bmc']['current_version'],
                          after['bmc']['last_version_flashed']))
        self.assertEqual('2.00', after['bios']['current_version'])
        self.assertNoSecret(emulators.PASSWORD, str(actions))

    def test_clean_a_manageable_node_with_a_failing_image(self):
        node = self.create(self.bmc.driver_info())
        uuid = node['uuid']
        self.provision(uuid, 'manage')
        self.wait_state(uuid, states.MANAGEABLE)
        self.put('/v1/nodes/%s/states/provision' % uuid,
                 {'target': 'clean',
                  'clean_steps': [update_step(('bmc', CORRUPT_IMAGE))]},
                 status=202)
        failed = self.wait_state(uuid, states.CLEANFAIL, timeout=90)
        self.assertIn('signature check failed',
                      failed['last_error'])
        self.assertEqual('1.0.0',
                         self.firmware(uuid)['bmc']['current_version'])
