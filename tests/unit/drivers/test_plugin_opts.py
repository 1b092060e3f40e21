"""Hardware plugins get the service's configuration and bring options."""

import os
import subprocess
import sys

from alloc_framework.common import exception
from alloc_framework.conf import hardware as hardware_conf
from alloc_framework.conf import ipmi as ipmi_conf
from alloc_framework.conf import opts as conf_opts
from alloc_framework.conf import redfish as redfish_conf
from alloc_framework.drivers import driver_factory
from alloc_framework.objects import baremetal as objects
from tests import base
from tests.unit.drivers import acme
from tests.unit.drivers.acme import fixture as acme_fixture

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))


class _Task:
    def __init__(self, node):
        self.node = node


class PluginConfTestCase(base.TestCase):

    def test_plugins_get_the_service_configuration(self):
        factory = driver_factory.DriverFactory(self.conf)
        self.assertIs(self.conf, factory.hardware_types['fake-hardware'].conf)
        for kind in factory.interfaces.values():
            for iface in kind.values():
                self.assertIs(self.conf, iface.conf)

    def test_only_in_tree_plugin_options_without_other_plugins(self):
        self.assertEqual([('ipmi', ipmi_conf.opts),
                          ('redfish', redfish_conf.opts)],
                         sorted(hardware_conf.plugin_opts()))

    def test_installed_plugin_options_registered_and_used(self):
        self.useFixture(acme_fixture.Installed())
        self.assertEqual([('acme', acme.opts), ('ipmi', ipmi_conf.opts),
                          ('redfish', redfish_conf.opts)],
                         sorted(hardware_conf.plugin_opts()))
        self.assertIn(('acme', acme.opts), conf_opts.list_opts())
        self.config(enabled_hardware_types=['acme-hardware', 'fake-hardware'],
                    enabled_power_interfaces=['acme', 'fake'])
        factory = driver_factory.DriverFactory(self.conf)
        self.config(power_timeout=3, group='acme')
        node = objects.Node(driver='acme-hardware', driver_info={})
        factory.check_and_update_node_interfaces(node)
        driver = factory.build_driver(node)
        self.assertIsInstance(driver.power, acme.AcmePower)
        self.assertEqual(3, driver.power.timeout(_Task(node)))
        # Registering again (another factory) is harmless.
        driver_factory.DriverFactory(self.conf)

    def test_broken_plugin_options_stop_start(self):
        self.useFixture(acme_fixture.Installed({
            'alloc_framework.hardware.opts': {
                'acme': 'tests.unit.drivers.acme:no_such_function'}}))
        exc = self.assertRaises(exception.DriverLoadError,
                                driver_factory.DriverFactory, self.conf)
        self.assertIn(hardware_conf.PLUGIN_OPTS_NAMESPACE, str(exc))

    def test_sample_config_lists_installed_plugin_options(self):
        installed = self.useFixture(acme_fixture.Installed())
        out = os.path.join(self.state_path, 'sample.conf')
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [installed.path, ROOT, os.environ.get('PYTHONPATH', '')]))
        proc = subprocess.run(
            [os.path.join(os.path.dirname(sys.executable),
                          'oslo-config-generator'),
             '--namespace', 'alloc_framework', '--output-file', out],
            capture_output=True, text=True, timeout=120, env=env)
        self.assertEqual(0, proc.returncode, proc.stderr)
        with open(out) as f:
            sample = f.read()
        self.assertIn('[acme]', sample)
        self.assertIn('#power_timeout = 7', sample)
        self.assertIn('#enabled_firmware_interfaces = <the interfaces of '
                      'the enabled hardware types>', sample)
