"""Loading hardware plugins and composing node drivers."""

from unittest import mock

from alloc_framework.objects.baremetal import exception
from alloc_framework.objects.baremetal import states
from alloc_framework.drivers import driver_factory
from alloc_framework.drivers import fake_hardware
from alloc_framework.drivers.modules import fake
from alloc_framework.objects import baremetal as objects
from tests import base


class _Task:
    def __init__(self, node):
        self.node = node


class DriverFactoryTestCase(base.TestCase):

    def test_loads_fake_hardware_from_entry_points(self):
        factory = driver_factory.DriverFactory(self.conf)
        self.assertEqual(['fake-hardware'], factory.names)
        self.assertIsInstance(factory.hardware_types['fake-hardware'],
                              fake_hardware.FakeHardware)
        self.assertIsInstance(factory.interfaces['power']['fake'],
                              fake.FakePower)

    def test_unknown_enabled_plugin_stops_start(self):
        self.config(enabled_power_interfaces=['fake', 'nope'])
        exc = self.assertRaises(exception.DriverLoadError,
                                driver_factory.DriverFactory, self.conf)
        self.assertIn('nope', str(exc))
        self.assertIn('alloc_framework.hardware.interfaces.power', str(exc))

    def test_broken_plugin_stops_start(self):
        with mock.patch.object(fake_hardware.FakeHardware, '__init__',
                               side_effect=RuntimeError('broken')):
            exc = self.assertRaises(exception.DriverLoadError,
                                    driver_factory.DriverFactory, self.conf)
        self.assertIn('broken', str(exc))

    def test_hardware_type_without_enabled_interface(self):
        self.config(enabled_deploy_interfaces=[])
        exc = self.assertRaises(exception.DriverLoadError,
                                driver_factory.DriverFactory, self.conf)
        self.assertIn('deploy', str(exc))

    def test_node_interfaces(self):
        factory = driver_factory.DriverFactory(self.conf)
        node = objects.Node(driver='fake-hardware')
        self.assertTrue(factory.check_and_update_node_interfaces(node))
        self.assertEqual('fake', node.power_interface)
        self.assertFalse(factory.check_and_update_node_interfaces(node))
        node.deploy_interface = 'direct'
        self.assertRaises(exception.InterfaceNotFoundInEntrypoint,
                          factory.check_and_update_node_interfaces, node)
        node = objects.Node(driver='ipmi')
        exc = self.assertRaises(exception.DriverNotFound,
                                factory.check_and_update_node_interfaces,
                                node)
        self.assertEqual(404, exc.code)

    def test_build_driver_and_properties(self):
        factory = driver_factory.DriverFactory(self.conf)
        driver = factory.build_driver(objects.Node(driver='fake-hardware'))
        self.assertIsInstance(driver.deploy, fake.FakeDeploy)
        self.assertIn('fake_fail_deploy',
                      factory.get_properties('fake-hardware'))


class FakeInterfacesTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.node = objects.Node(driver='fake-hardware', driver_info={},
                                 driver_internal_info={},
                                 power_state=states.POWER_OFF)
        self.task = _Task(self.node)

    def test_power_recorded(self):
        power = fake.FakePower()
        power.set_power_state(self.task, states.POWER_ON)
        power.reboot(self.task)
        power.set_power_state(self.task, states.POWER_OFF)
        self.assertEqual(states.POWER_OFF,
                         power.get_power_state(self.task))
        self.assertEqual(['power on', 'rebooting', 'power off'],
                         self.node.driver_internal_info[
                             'fake_power_actions'])

    def test_power_failure(self):
        self.node.driver_info = {'fake_fail_power': True}
        self.assertRaises(exception.PowerStateFailure,
                          fake.FakePower().set_power_state, self.task,
                          states.POWER_ON)
        self.assertEqual(states.POWER_OFF, self.node.power_state)

    def test_clean_steps(self):
        deploy = fake.FakeDeploy()
        steps = deploy.get_clean_steps(self.task)
        self.assertEqual(['erase_devices_metadata', 'erase_devices'],
                         [s['step'] for s in steps])
        self.assertEqual('deploy', steps[0]['interface'])
        deploy.execute_clean_step(self.task, {'step': 'erase_devices',
                                              'args': {'passes': 2}})
        self.assertEqual('erase_devices:2',
                         self.node.driver_internal_info['fake_cleaned'])

    def test_management(self):
        mgmt = fake.FakeManagement()
        mgmt.set_boot_device(self.task, 'pxe', persistent=True)
        self.assertEqual({'boot_device': 'pxe', 'persistent': True},
                         mgmt.get_boot_device(self.task))
        self.assertRaises(exception.InvalidParameterValue,
                          mgmt.set_boot_device, self.task, 'floppy')
