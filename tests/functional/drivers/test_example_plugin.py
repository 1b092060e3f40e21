"""The example third-party plugin of ``tests/plugins/alloc_example_hw``.

The package adds a hardware type and a new interface kind (``led``) with
entry points only; it is enabled by configuration only. These tests load
it through the driver factory and drive a node with it through the bare
metal API and a conductor, as doc/source/plugin-authors.rst describes.
"""

from alloc_framework.common import exception
from alloc_framework.common import states
from alloc_framework.conf import hardware as hardware_conf
from alloc_framework.drivers import base as drivers_base
from alloc_framework.drivers import driver_factory
from alloc_framework.objects.baremetal import node as node_obj
from tests import base as tests_base
from tests.functional.api.baremetal import base
from tests import plugin_package


def _enable_example(test):
    """The configuration an operator writes: nothing else changes."""
    test.useFixture(plugin_package.PluginPackage('alloc_example_hw'))
    hardware_conf.register_plugin_opts(test.conf)
    test.config(enabled_hardware_types=['fake-hardware', 'example-hw'],
                enabled_led_interfaces=['blinky'])


class TestDriverFactory(tests_base.TestCase):
    dialect_neutral = True

    def test_without_the_package_there_is_no_led_kind(self):
        factory = driver_factory.DriverFactory(self.conf)
        self.assertNotIn('led', factory.interfaces)
        self.assertEqual((), drivers_base.plugin_kinds())

    def test_installed_but_not_enabled(self):
        self.useFixture(plugin_package.PluginPackage('alloc_example_hw'))
        factory = driver_factory.DriverFactory(self.conf)
        # The kind exists (with its no-op); the hardware type waits for
        # enabled_hardware_types.
        self.assertEqual(['no-led'], list(factory.interfaces['led']))
        self.assertEqual(['fake-hardware'], factory.names)

    def test_loads_the_kind_the_type_and_the_options(self):
        _enable_example(self)
        factory = driver_factory.DriverFactory(self.conf)
        self.assertEqual(['example-hw', 'fake-hardware'], factory.names)
        self.assertEqual(['blinky', 'no-led'],
                         sorted(factory.interfaces['led']))
        self.assertEqual('blinking', self.conf.example_hw.identify_state)
        # The kind's own options, made like those of our kinds.
        self.assertIsNone(self.conf.default_led_interface)

        node = node_obj.Node(driver='example-hw', driver_info={})
        factory.check_and_update_node_interfaces(node)
        self.assertEqual('fake', node.power_interface)
        self.assertEqual('no-boot', node.boot_interface)
        driver = factory.build_driver(node)
        self.assertEqual('BlinkyLED', type(driver.led).__name__)
        self.assertIs(factory.interfaces['led']['blinky'], driver.led)
        self.assertIn('led', driver.all_interfaces())
        self.assertIn('led_colour',
                      factory.get_properties('example-hw'))

        # Our hardware type knows nothing of the kind: it gets the no-op.
        fake = node_obj.Node(driver='fake-hardware', driver_info={})
        factory.check_and_update_node_interfaces(fake)
        self.assertIs(factory.interfaces['led']['no-led'],
                      factory.build_driver(fake).led)

    def test_node_names_its_led_interface_in_driver_info(self):
        _enable_example(self)
        factory = driver_factory.DriverFactory(self.conf)
        node = node_obj.Node(driver='example-hw',
                             driver_info={'led_interface': 'no-led'})
        factory.check_and_update_node_interfaces(node)
        self.assertIs(factory.interfaces['led']['no-led'],
                      factory.build_driver(node).led)
        node.driver_info = {'led_interface': 'disco'}
        self.assertRaises(exception.InterfaceNotFoundInEntrypoint,
                          factory.check_and_update_node_interfaces, node)
        fake = node_obj.Node(driver='fake-hardware',
                             driver_info={'led_interface': 'blinky'})
        self.assertRaises(exception.IncompatibleInterface,
                          factory.check_and_update_node_interfaces, fake)

    def test_enabled_implementation_missing_stops_the_start(self):
        _enable_example(self)
        self.config(enabled_led_interfaces=['blinky', 'disco'])
        error = self.assertRaises(exception.DriverLoadError,
                                  driver_factory.DriverFactory, self.conf)
        self.assertIn('alloc_framework.hardware.interfaces.led', str(error))

    def test_sample_configuration_lists_the_plugin_options(self):
        self.useFixture(plugin_package.PluginPackage('alloc_example_hw'))
        groups = dict((group, [o.name for o in opts]) for group, opts
                      in hardware_conf.plugin_opts())
        self.assertEqual(['enabled_led_interfaces', 'default_led_interface'],
                         groups['DEFAULT'])
        self.assertEqual(['identify_state'], groups['example_hw'])


class TestPluginKindRules(tests_base.TestCase):
    """What a plugin may not declare as a kind."""
    dialect_neutral = True

    def _kinds(self, **entry_points):
        import importlib.metadata as md

        from stevedore import extension
        eps = [md.EntryPoint(name, value, drivers_base.KIND_NAMESPACE)
               for name, value in entry_points.items()]
        cache = extension.ExtensionManager.ENTRY_POINT_CACHE
        self.addCleanup(cache.pop, drivers_base.KIND_NAMESPACE, None)
        cache[drivers_base.KIND_NAMESPACE] = eps
        return drivers_base.plugin_kinds

    def test_rules(self):
        module = __name__
        for name, value, reason in (
                ('power', 'POWER', 'exists'),
                ('lamp', 'LED', "named 'led'"),
                ('gpu', 'REQUIRED_GPU', 'optional'),
                ('thing', 'NOT_A_KIND', 'not an InterfaceKind')):
            load = self._kinds(**{name: '%s:%s' % (module, value)})
            error = self.assertRaises(exception.DriverLoadError, load)
            self.assertIn(reason, str(error))


POWER = drivers_base.InterfaceKind('power', 'again')
LED = drivers_base.InterfaceKind('led', 'an LED')
REQUIRED_GPU = drivers_base.InterfaceKind('gpu', 'a GPU', required=True)
NOT_A_KIND = object()


class TestNodeThroughTheAPI(base.BaremetalTestCase):
    """A node of the plugin's hardware type, driven over HTTP."""
    dialect_neutral = True

    def _start_conductor(self):
        _enable_example(self)
        return super()._start_conductor()

    def _wait_for(self, node, state):
        def settled():
            body = self.get('/v1/nodes/' + node).json_body
            return (body['provision_state'] == state
                    and not body['target_provision_state']
                    and not body['reservation'])
        tests_base.wait_for(settled, 'node %s to be %s' % (node, state))
        return self.get('/v1/nodes/' + node).json_body

    def test_identify_clean_step(self):
        node = self.post('/v1/nodes', {'driver': 'example-hw',
                                       'name': 'ex-0',
                                       'driver_info': {'led_colour': 'blue'}},
                         status=201).json_body
        self.assertEqual('fake', node['power_interface'])
        self.put('/v1/nodes/ex-0/states/provision', {'target': 'manage'},
                 status=202)
        self._wait_for('ex-0', states.MANAGEABLE)
        steps = [{'interface': 'led', 'step': 'identify',
                  'args': {'state': 'on'}}]
        self.put('/v1/nodes/ex-0/states/provision',
                 {'target': 'clean', 'clean_steps': steps}, status=202)
        node = self._wait_for('ex-0', states.MANAGEABLE)
        self.assertEqual('on', node['driver_internal_info']['led_state'])

        # Without a state the plugin's option decides.
        steps[0]['args'] = {}
        self.put('/v1/nodes/ex-0/states/provision',
                 {'target': 'clean', 'clean_steps': steps}, status=202)
        node = self._wait_for('ex-0', states.MANAGEABLE)
        self.assertEqual('blinking',
                         node['driver_internal_info']['led_state'])

    def test_unknown_led_interface_is_refused(self):
        resp = self.post('/v1/nodes', {'driver': 'example-hw',
                                       'driver_info': {
                                           'led_interface': 'disco'}})
        self.assertError(resp, 400, 'baremetal.interface_not_found_in_'
                         'entrypoint', 'disco')
        self.post('/v1/nodes', {'driver': 'example-hw', 'name': 'ex-1'},
                  status=201)
        resp = self.patch('/v1/nodes/ex-1',
                          [{'op': 'add', 'path': '/driver_info/'
                            'led_interface', 'value': 'disco'}])
        self.assertError(resp, 400, 'baremetal.interface_not_found_in_'
                         'entrypoint', 'disco')

    def test_fake_hardware_node_has_no_identify_step(self):
        self.post('/v1/nodes', {'driver': 'fake-hardware', 'name': 'f-0'},
                  status=201)
        self.put('/v1/nodes/f-0/states/provision', {'target': 'manage'},
                 status=202)
        self._wait_for('f-0', states.MANAGEABLE)
        resp = self.put('/v1/nodes/f-0/states/provision',
                        {'target': 'clean', 'clean_steps': [
                            {'interface': 'led', 'step': 'identify'}]})
        self.assertError(resp, 400, contains='identify')
