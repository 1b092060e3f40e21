"""The redfish BIOS interface against a BMC with a Bios resource."""

from alloc_framework.common import exception
from alloc_framework.conductor import task_manager
from alloc_framework.drivers.modules.redfish import bios as redfish_bios
from alloc_framework.objects import baremetal as objects
from tests.functional.conductor import base
from tests.functional.drivers import redfish
from tests.functional.drivers.redfish import emulators


class TestRedfishBIOS(base.ConductorTestCase):
    # An emulated BMC: nothing here depends on the database.
    dialect_neutral = True

    def start_conductor(self, host):
        # The defaults: a BMC that answers slowly on a loaded machine
        # (an emulator inserting a virtual medium) is not a failure.
        redfish.enable_redfish(self)
        return super().start_conductor(host)

    def setUp(self):
        super().setUp()
        self.bmc = self.useFixture(emulators.FirmwareBMC())
        self.node = self.make_node(driver='redfish',
                                   driver_info=self.bmc.driver_info())

    def task(self):
        return task_manager.acquire(
            self.ctx, self.node.id, purpose='test',
            driver_factory=self.manager.driver_factory, conf=self.conf)

    def test_read_apply_at_reboot_cache_and_reset(self):
        with self.task() as task:
            bios = task.driver.bios
            self.assertIsInstance(bios, redfish_bios.RedfishBIOS)
            self.assertEqual('Enabled',
                             bios.get_settings(task)['ProcTurboMode'])
            bios.apply_configuration(task, [
                {'name': 'ProcTurboMode', 'value': 'Disabled'}])
            # Pending until the node boots.
            self.assertEqual('Enabled',
                             bios.get_settings(task)['ProcTurboMode'])
            task.driver.power.reboot(task)
            self.assertEqual('Disabled',
                             bios.get_settings(task)['ProcTurboMode'])
            bios.cache_bios_settings(task)
        node = objects.Node.get_by_id(self.ctx, self.node.id)
        self.assertEqual('Disabled', node.driver_internal_info[
            'bios_settings']['ProcTurboMode'])

        with self.task() as task:
            task.driver.bios.factory_reset(task)
            task.driver.power.reboot(task)
            self.assertEqual('Enabled', task.driver.bios.get_settings(
                task)['ProcTurboMode'])

    def test_bad_settings(self):
        with self.task() as task:
            exc = self.assertRaises(
                exception.InvalidParameterValue,
                task.driver.bios.apply_configuration, task,
                [{'name': 'ProcTurboMode'}])
            self.assertIn('settings[0] must be an object with a non-empty '
                          '"name" and a "value"', str(exc))
            exc = self.assertRaises(
                exception.RedfishError,
                task.driver.bios.apply_configuration, task,
                [{'name': 'NoSuchSetting', 'value': '1'}])
            self.assertIn('Unknown BIOS attributes: NoSuchSetting', str(exc))
