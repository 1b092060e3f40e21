"""Loading hardware plugins and composing node drivers."""

from unittest import mock

from alloc_framework.common import exception
from alloc_framework.common import states
from alloc_framework.conf import hardware as hardware_conf
from alloc_framework.drivers import base as drivers_base
from alloc_framework.drivers import driver_factory
from alloc_framework.drivers import fake_hardware
from alloc_framework.drivers.modules import fake
from alloc_framework.drivers.modules import noop
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


class _LegacyHardware(drivers_base.HardwareType):
    """A hardware type written when only three kinds existed."""

    supported_power_interfaces = ['fake']
    supported_deploy_interfaces = ['fake']
    supported_management_interfaces = ['fake']


class InterfaceKindsTestCase(base.TestCase):

    def test_options_for_every_kind(self):
        opts = {opt.name: opt for opt in hardware_conf.opts}
        for kind in drivers_base.INTERFACE_KINDS:
            enabled = opts['enabled_%s_interfaces' % kind.name]
            self.assertIn('alloc_framework.hardware.interfaces.%s'
                          % kind.name, enabled.help)
            # Unset: the interfaces of the enabled hardware types.
            self.assertIsNone(enabled.default)
            self.assertIsNone(opts['default_%s_interface'
                                   % kind.name].default)
        factory = driver_factory.DriverFactory(self.conf)
        for kind in drivers_base.INTERFACE_KINDS:
            self.assertIn('fake', factory.interfaces[kind.name])

    def test_only_the_first_three_kinds_are_required(self):
        self.assertEqual(
            ['power', 'deploy', 'management'],
            [k.name for k in drivers_base.INTERFACE_KINDS if k.required])
        self.assertEqual('no-firmware', drivers_base.KINDS['firmware'].noop)
        self.assertIsNone(drivers_base.KINDS['power'].noop)

    def test_supported_interfaces_defaults(self):
        legacy = _LegacyHardware()
        self.assertEqual(['fake'], legacy.supported_interfaces('power'))
        self.assertEqual(['no-bios'], legacy.supported_interfaces('bios'))
        self.assertEqual(['fake', 'no-boot'],
                         fake_hardware.FakeHardware().supported_interfaces(
                             'boot'))
        # A kind it knows nothing of (a plugin's) is optional: only its
        # no-op is supported.
        self.assertEqual(['no-nope'], legacy.supported_interfaces('nope'))

    def test_noop_interfaces_registered(self):
        factory = driver_factory.DriverFactory(self.conf)
        self.assertIsInstance(factory.interfaces['boot']['no-boot'],
                              noop.NoBoot)
        self.assertIsInstance(factory.interfaces['bios']['no-bios'],
                              noop.NoBIOS)
        self.assertIsInstance(factory.interfaces['firmware']['no-firmware'],
                              noop.NoFirmware)


class EnabledInterfacesTestCase(base.TestCase):
    """Unset interface lists follow the enabled hardware types."""

    def setUp(self):
        super().setUp()
        self.config(enabled_hardware_types=['fake-hardware', 'redfish',
                                            'ipmi'])

    def test_enabling_a_type_enables_its_interfaces(self):
        factory = driver_factory.DriverFactory(self.conf)
        self.assertEqual(['fake-hardware', 'ipmi', 'redfish'], factory.names)
        self.assertEqual(['fake', 'redfish', 'ipmi'],
                         list(factory.interfaces['power']))
        self.assertEqual(['fake', 'no-bios', 'redfish'],
                         list(factory.interfaces['bios']))
        self.assertEqual({'fake', 'ipmi', 'redfish', 'no-firmware'},
                         set(factory.interfaces['firmware']))
        for driver in ('redfish', 'ipmi'):
            node = objects.Node(driver=driver)
            factory.check_and_update_node_interfaces(node)
            self.assertEqual(driver, node.power_interface)
            self.assertEqual(driver, node.firmware_interface)

    def test_a_set_list_restricts(self):
        self.config(enabled_bios_interfaces=['fake'],
                    enabled_firmware_interfaces=['fake', 'redfish'])
        factory = driver_factory.DriverFactory(self.conf)
        self.assertEqual(['fake', 'no-bios'], list(factory.interfaces['bios']))
        node = objects.Node(driver='redfish')
        factory.check_and_update_node_interfaces(node)
        self.assertEqual('no-bios', node.bios_interface)
        node = objects.Node(driver='ipmi')
        factory.check_and_update_node_interfaces(node)
        self.assertEqual('no-firmware', node.firmware_interface)

    def test_a_restriction_leaving_a_type_unusable_stops_start(self):
        self.config(enabled_power_interfaces=['fake', 'ipmi'])
        exc = self.assertRaises(exception.DriverLoadError,
                                driver_factory.DriverFactory, self.conf)
        self.assertEqual(
            'Plugin "redfish" of the "alloc_framework.hardware.types" '
            'namespace could not be loaded: none of its power interfaces '
            '(redfish) is enabled: [DEFAULT]enabled_power_interfaces = '
            'fake,ipmi. Add one of them to the list, or remove the option '
            'to enable the power interfaces of every enabled hardware type',
            str(exc))

    def test_a_type_declaring_no_required_interface(self):
        class _NoPower(drivers_base.HardwareType):
            supported_deploy_interfaces = ['fake']
            supported_management_interfaces = ['fake']

        exc = self.assertRaises(
            exception.DriverLoadError, driver_factory.DriverFactory,
            self.conf, hardware_types={'no-power': _NoPower()})
        self.assertIn('"no-power"', str(exc))
        self.assertIn('it supports no power interface', str(exc))


class OptionalKindsTestCase(base.TestCase):

    def _factory(self):
        return driver_factory.DriverFactory(
            self.conf, hardware_types={
                'legacy': _LegacyHardware(),
                'fake-hardware': fake_hardware.FakeHardware()})

    def test_hardware_type_unaware_of_new_kinds_loads(self):
        factory = self._factory()
        node = objects.Node(driver='legacy')
        factory.check_and_update_node_interfaces(node)
        self.assertEqual(('fake', 'fake', 'fake', 'no-boot', 'no-bios',
                          'no-firmware'),
                         tuple(getattr(node, '%s_interface' % t)
                               for t in drivers_base.INTERFACE_TYPES))
        driver = factory.build_driver(node)
        self.assertIsInstance(driver.firmware, noop.NoFirmware)
        self.assertEqual(set(drivers_base.INTERFACE_TYPES),
                         set(driver.all_interfaces()))

    def test_legacy_hardware_refuses_a_real_optional_interface(self):
        factory = self._factory()
        node = objects.Node(driver='legacy', bios_interface='fake')
        self.assertRaises(exception.IncompatibleInterface,
                          factory.check_and_update_node_interfaces, node)

    def test_optional_kind_without_enabled_implementation(self):
        # Nothing of the kind enabled: the no-op is still there.
        self.config(enabled_firmware_interfaces=[])
        factory = driver_factory.DriverFactory(self.conf)
        self.assertEqual(['no-firmware'], list(factory.interfaces['firmware']))
        node = objects.Node(driver='fake-hardware')
        factory.check_and_update_node_interfaces(node)
        self.assertEqual('no-firmware', node.firmware_interface)
        self.assertEqual('fake', node.bios_interface)

    def test_required_kind_without_enabled_implementation(self):
        self.config(enabled_power_interfaces=[])
        exc = self.assertRaises(exception.DriverLoadError,
                                self._factory)
        self.assertIn('power', str(exc))

    def test_default_interface_option(self):
        self.config(default_bios_interface='no-bios')
        factory = driver_factory.DriverFactory(self.conf)
        self.assertEqual('no-bios',
                         factory.default_interface('fake-hardware', 'bios'))
        # Not supported by the hardware type: ignored.
        self.config(default_power_interface='ipmitool')
        self.assertEqual('fake',
                         factory.default_interface('fake-hardware', 'power'))

    def test_explicit_noop(self):
        factory = driver_factory.DriverFactory(self.conf)
        node = objects.Node(driver='fake-hardware', boot_interface='no-boot')
        factory.check_and_update_node_interfaces(node)
        self.assertEqual('no-boot', node.boot_interface)
        self.assertEqual('fake', node.firmware_interface)


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

    def test_boot(self):
        boot = fake.FakeBoot()
        boot.prepare_ramdisk(self.task, {})
        self.assertEqual('ramdisk', self.node.driver_internal_info[
            'fake_boot'])
        boot.prepare_instance(self.task)
        self.assertEqual('instance', self.node.driver_internal_info[
            'fake_boot'])
        boot.clean_up_instance(self.task)
        self.assertIsNone(self.node.driver_internal_info['fake_boot'])

    def test_bios(self):
        bios = fake.FakeBIOS()
        bios.apply_configuration(self.task, [{'name': 'ProcTurbo',
                                              'value': 'Enabled'}])
        self.assertEqual({'ProcTurbo': 'Enabled'},
                         self.node.driver_internal_info[
                             'fake_bios_settings'])
        bios.factory_reset(self.task)
        self.assertEqual({}, self.node.driver_internal_info[
            'fake_bios_settings'])

    def test_firmware(self):
        fake.FakeFirmware().update(self.task, [{'component': 'bmc',
                                                'url': 'http://x/fw'}])
        self.assertEqual([['bmc']], self.node.driver_internal_info[
            'fake_firmware_updates'])


class NoopInterfacesTestCase(base.TestCase):

    def test_actions_unsupported(self):
        task = _Task(objects.Node(driver='fake-hardware'))
        for iface, call in ((noop.NoBIOS(), 'apply_configuration'),
                            (noop.NoBIOS(), 'factory_reset'),
                            (noop.NoFirmware(), 'update')):
            args = () if call == 'factory_reset' else ([],)
            exc = self.assertRaises(exception.UnsupportedDriverExtension,
                                    getattr(iface, call), task, *args)
            self.assertEqual(400, exc.code)
            self.assertIn(iface.interface_type, str(exc))
        noop.NoBIOS().cache_bios_settings(task)
        noop.NoFirmware().cache_firmware_components(task)
        noop.NoBoot().prepare_ramdisk(task, {})
        self.assertEqual({}, noop.NoBoot().get_properties())
