"""Redfish firmware updates on a service that manages several systems.

:mod:`.firmware_bmc` serves N systems, each with its own Manager and its
own ``BMC-<k>`` and ``BIOS-<k>`` inventory members, all *named* ``BMC``
and ``BIOS``. One node per system: an update of node k must target only
system k's member (or, lacking one, system k or its Manager), change only
system k's firmware, and versions must be read from system k's members.
Members that could be any system's make the update fail before the BMC
is asked anything.
"""

from alloc_framework.conductor import task_manager
from alloc_framework.objects.baremetal import deferred_action as da
from tests.functional.drivers.redfish import test_firmware

BMC_IMAGE = test_firmware.BMC_IMAGE
BIOS_IMAGE = test_firmware.BIOS_IMAGE
OLD = {'bmc': '1.0.0', 'bios': 'U30 v1.00'}
NEW = {'bmc': '2.1.0', 'bios': '2.00'}
INVENTORY = '/redfish/v1/UpdateService/FirmwareInventory/'


class SeveralSystemsTestCase(test_firmware.FirmwareUpdateTestCase):

    systems = 4
    bmc_options = {}

    def setUp(self):
        self.bmc_options = dict(self.bmc_options, systems=self.systems,
                                task_polls=0, bmc_reset=0.5)
        super().setUp()
        self.nodes = [
            self.make_node(driver='redfish',
                           driver_info=self.bmc.driver_info(
                               redfish_system_id='fw-system-%d' % k))
            for k in range(1, self.systems + 1)]

    def versions_of(self, node):
        with task_manager.acquire(
                self.ctx, node.id, shared=True,
                driver_factory=self.manager.driver_factory) as task:
            return {c['component']: c['current_version']
                    for c in task.driver.firmware.get_components(task)}

    def identity_of(self, node):
        with task_manager.acquire(
                self.ctx, node.id, shared=True,
                driver_factory=self.manager.driver_factory) as task:
            return {c['component']: (c['vendor'], c['model'],
                                     c['serial_number'])
                    for c in task.driver.firmware.get_components(task)}

    def update_node(self, node, settings):
        self.node = node
        action = self.update(settings)
        return self.run_to_end(action)[0]

    def bmc_systems(self):
        return self.bmc.counters()['systems']


class TestRelatedItems(SeveralSystemsTestCase):
    """Members tied to their owner by ``RelatedItem``; the inventory is
    the only place that tells versions."""

    bmc_options = {'firmware_links': 'related',
                   'inventory_versions_only': True}

    def test_each_node_tells_its_own_devices(self):
        for k in (1, 3):
            self.assertEqual(
                {'bmc': ('Emulated BMC Vendor', 'Emulated BMC',
                         'SN-bmc-%d' % k),
                 'bios': ('Emulated BIOS Vendor', 'Emulated System',
                          'SN-fw-system-%d' % k)},
                self.identity_of(self.nodes[k - 1]))

    def test_an_update_reaches_only_its_own_system(self):
        for node in self.nodes:
            self.assertEqual(OLD, self.versions_of(node))
        got = self.update_node(self.nodes[2], [
            {'component': 'bmc', 'url': BMC_IMAGE},
            {'component': 'bios', 'url': BIOS_IMAGE}])
        self.assertEqual(da.COMPLETED, got.state, got.result)

        systems = self.bmc_systems()
        self.assertEqual([INVENTORY + 'BMC-3', INVENTORY + 'BIOS-3'],
                         systems['fw-system-3']['targets'])
        self.assertEqual(NEW, systems['fw-system-3']['versions'])
        # Only system 3 was rebooted for its BIOS.
        self.assertEqual('On', systems['fw-system-3']['power'])
        for k in (1, 2, 4):
            name = 'fw-system-%d' % k
            self.assertEqual([], systems[name]['targets'])
            self.assertEqual(OLD, systems[name]['versions'])
            self.assertEqual('Off', systems[name]['power'])
        # Each node reads its own members.
        self.assertEqual(NEW, self.versions_of(self.nodes[2]))
        for index in (0, 1, 3):
            self.assertEqual(OLD, self.versions_of(self.nodes[index]))

    def test_updates_of_two_nodes_each_reach_their_system(self):
        for index in (3, 0):
            got = self.update_node(self.nodes[index], [
                {'component': 'bios', 'url': BIOS_IMAGE}])
            self.assertEqual(da.COMPLETED, got.state, got.result)
        systems = self.bmc_systems()
        self.assertEqual([INVENTORY + 'BIOS-4'],
                         systems['fw-system-4']['targets'])
        self.assertEqual([INVENTORY + 'BIOS-1'],
                         systems['fw-system-1']['targets'])
        self.assertEqual('2.00', self.versions_of(self.nodes[0])['bios'])
        self.assertEqual('2.00', self.versions_of(self.nodes[3])['bios'])
        self.assertEqual('U30 v1.00',
                         self.versions_of(self.nodes[1])['bios'])


class TestActiveSoftwareImage(SeveralSystemsTestCase):
    """Members linked from their Manager and Bios only."""

    systems = 3
    bmc_options = {'firmware_links': 'active',
                   'inventory_versions_only': True}

    def test_the_owners_own_link_is_followed(self):
        got = self.update_node(self.nodes[1], [
            {'component': 'bmc', 'url': BMC_IMAGE}])
        self.assertEqual(da.COMPLETED, got.state, got.result)
        systems = self.bmc_systems()
        self.assertEqual([INVENTORY + 'BMC-2'],
                         systems['fw-system-2']['targets'])
        self.assertEqual({'bmc': '2.1.0', 'bios': 'U30 v1.00'},
                         self.versions_of(self.nodes[1]))
        self.assertEqual(OLD, self.versions_of(self.nodes[0]))
        self.assertEqual(OLD, self.versions_of(self.nodes[2]))


class TestNoInventory(SeveralSystemsTestCase):
    """No inventory member: the system and its Manager are the targets."""

    systems = 2
    bmc_options = {'empty_inventory': True}

    def test_the_system_and_its_manager_are_targeted(self):
        got = self.update_node(self.nodes[1], [
            {'component': 'bmc', 'url': BMC_IMAGE},
            {'component': 'bios', 'url': BIOS_IMAGE}])
        self.assertEqual(da.COMPLETED, got.state, got.result)
        systems = self.bmc_systems()
        self.assertEqual(['/redfish/v1/Managers/bmc-2',
                          '/redfish/v1/Systems/fw-system-2'],
                         systems['fw-system-2']['targets'])
        self.assertEqual(NEW, self.versions_of(self.nodes[1]))
        self.assertEqual(OLD, self.versions_of(self.nodes[0]))
        self.assertEqual([], systems['fw-system-1']['targets'])

    def test_no_member_no_vendor(self):
        self.assertEqual(
            {'bmc': (None, 'Emulated BMC', 'SN-bmc-2'),
             'bios': (None, 'Emulated System', 'SN-fw-system-2')},
            self.identity_of(self.nodes[1]))


class TestUnlinkedMembers(SeveralSystemsTestCase):
    """Members named alike and tied to nothing: no guess."""

    systems = 3
    bmc_options = {'firmware_links': 'none'}

    def test_the_update_is_refused(self):
        node = self.nodes[1]
        got = self.update_node(node, [{'component': 'bios',
                                       'url': BIOS_IMAGE}])
        self.assertEqual(da.FAILED, got.state)
        error = self.node_now().last_error
        self.assertIn(
            'The Redfish BMC of node %s lists several FirmwareInventory '
            'members that could be the BIOS firmware of '
            '/redfish/v1/Systems/fw-system-2 (%sBIOS-1, %sBIOS-2, '
            '%sBIOS-3) and none that its Bios links as its own: refusing '
            'to guess.' % (node.uuid, INVENTORY, INVENTORY, INVENTORY),
            error)
        self.assertEqual(0, self.bmc.counters()['simple_updates'])
        # Versions the system and the Manager show need no member; the
        # vendor, which only a member tells, is then unknown.
        self.assertEqual(OLD, self.versions_of(node))
        self.assertEqual(
            {'bmc': (None, 'Emulated BMC', 'SN-bmc-2'),
             'bios': (None, 'Emulated System', 'SN-fw-system-2')},
            self.identity_of(node))
