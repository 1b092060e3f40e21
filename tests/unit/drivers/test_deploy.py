"""The deploy interfaces of real hardware and the virtual media boot
interface: what they check before touching a BMC, and the defaults and
deprecations of the hardware types that use them."""

import logging
import types

import fixtures
from oslo_utils import uuidutils

from alloc_framework.common import exception
from alloc_framework.conf import hardware as hardware_conf
from alloc_framework.drivers import driver_factory
from alloc_framework.drivers.modules import deploy
from alloc_framework.drivers.modules import noop
from alloc_framework.drivers.modules.redfish import boot
from alloc_framework.objects import baremetal as objects
from tests import base

_BMC = {'redfish_address': 'https://bmc.example.org'}


def _task(instance_info=None, driver_info=None, boot_iface=None):
    node = types.SimpleNamespace(uuid='node-1',
                                 driver_info=dict(driver_info or _BMC),
                                 instance_info=instance_info or {})
    return types.SimpleNamespace(node=node, driver=types.SimpleNamespace(
        boot=boot_iface))


class VirtualMediaValidateTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        hardware_conf.register_plugin_opts(self.conf)
        self.iface = boot.RedfishVirtualMediaBoot()
        self.iface.conf = self.conf

    def test_valid(self):
        self.iface.validate(_task({'boot_iso': 'https://img/x.iso'}))
        self.iface.validate(_task(
            {'boot_iso': 'http://img:8080/x.iso',
             'deploy_iso': 'http://img/ipa.iso'}))

    def test_missing_boot_iso_names_the_field(self):
        for info in ({}, {'boot_iso': ''}, {'boot_iso': None}):
            exc = self.assertRaises(exception.MissingParameterValue,
                                    self.iface.validate, _task(info))
            self.assertIn('instance_info.boot_iso', str(exc))
            self.assertIn('node-1', str(exc))

    def test_bad_boot_iso_names_the_field(self):
        for value in ('ftp://img/x.iso', '/srv/x.iso', 'http://', 42,
                      'http://img:99999/x.iso'):
            exc = self.assertRaises(exception.InvalidParameterValue,
                                    self.iface.validate,
                                    _task({'boot_iso': value}))
            self.assertIn('instance_info.boot_iso', str(exc))
            self.assertEqual(400, exc.code)

    def test_credentials_in_the_url_are_refused_unechoed(self):
        exc = self.assertRaises(
            exception.InvalidParameterValue, self.iface.validate,
            _task({'boot_iso': 'https://u:S3cr3t@img/x.iso'}))
        self.assertIn('must not carry credentials', str(exc))
        self.assertNotIn('S3cr3t', str(exc))

    def test_deploy_iso_of_driver_info_is_checked(self):
        exc = self.assertRaises(
            exception.InvalidParameterValue, self.iface.validate,
            _task({'boot_iso': 'https://img/x.iso'},
                  driver_info=dict(_BMC, redfish_deploy_iso='nfs://a/b')))
        self.assertIn('driver_info.redfish_deploy_iso', str(exc))

    def test_deploy_iso_of_instance_info_comes_first(self):
        node = _task({'deploy_iso': 'http://a/1.iso'}, driver_info=dict(
            _BMC, redfish_deploy_iso='http://a/2.iso')).node
        self.assertEqual(('instance_info.deploy_iso', 'http://a/1.iso'),
                         boot.deploy_iso(node))
        node.instance_info = {}
        self.assertEqual(('driver_info.redfish_deploy_iso',
                          'http://a/2.iso'), boot.deploy_iso(node))
        node.driver_info = dict(_BMC)
        self.assertEqual((None, None), boot.deploy_iso(node))

    def test_prepare_ramdisk_without_deploy_iso(self):
        exc = self.assertRaises(exception.MissingParameterValue,
                                self.iface.prepare_ramdisk, _task(), {})
        self.assertIn('redfish_deploy_iso', str(exc))

    def test_driver_info_is_checked(self):
        self.assertRaises(exception.MissingParameterValue,
                          self.iface.validate,
                          _task({'boot_iso': 'https://img/x.iso'},
                                driver_info={'other': 1}))


class DeployValidateTestCase(base.TestCase):

    def test_ramdisk_needs_a_boot_interface_that_boots(self):
        iface = deploy.RamdiskDeploy()
        exc = self.assertRaises(exception.InvalidParameterValue,
                                iface.validate,
                                _task(boot_iface=noop.NoBoot()))
        self.assertIn('no-boot', str(exc))
        iface.validate(_task(boot_iface=boot.RedfishVirtualMediaBoot()))

    def test_external_boot_device(self):
        iface = deploy.ExternalDeploy()
        task = _task()
        self.assertEqual('pxe', iface._device(task))
        task.node.instance_info = {'boot_device': 'disk'}
        iface.validate(task)
        self.assertEqual('disk', iface._device(task))
        task.node.instance_info = {'boot_device': 'floppy'}
        exc = self.assertRaises(exception.InvalidParameterValue,
                                iface.validate, task)
        self.assertIn('instance_info.boot_device', str(exc))
        self.assertIn('floppy', str(exc))


class HardwareTypeDefaultsTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.config(enabled_hardware_types=['fake-hardware', 'redfish',
                                            'ipmi'])
        self.factory = driver_factory.DriverFactory(self.conf)

    def test_defaults(self):
        node = objects.Node(driver='redfish', driver_info=dict(_BMC))
        self.factory.check_and_update_node_interfaces(node)
        self.assertEqual(('ramdisk', 'redfish-virtual-media'),
                         (node.deploy_interface, node.boot_interface))
        node = objects.Node(driver='ipmi', driver_info={})
        self.factory.check_and_update_node_interfaces(node)
        self.assertEqual(('external', 'no-boot'),
                         (node.deploy_interface, node.boot_interface))
        node = objects.Node(driver='fake-hardware')
        self.factory.check_and_update_node_interfaces(node)
        self.assertEqual('fake', node.deploy_interface)
        self.assertIsInstance(self.factory.interfaces['deploy']['ramdisk'],
                              deploy.RamdiskDeploy)

    def test_fake_deploy_of_existing_nodes_is_deprecated(self):
        logs = self.useFixture(fixtures.FakeLogger(level=logging.WARNING))
        for driver, replacement in (('redfish', 'ramdisk'),
                                    ('ipmi', 'external')):
            node = objects.Node(driver=driver,
                                uuid=uuidutils.generate_uuid(),
                                driver_info=dict(_BMC),
                                deploy_interface='fake')
            # Still supported: the node keeps its deploy interface.
            self.factory.check_and_update_node_interfaces(node)
            self.assertEqual('fake', node.deploy_interface)
            self.factory.build_driver(node)
            self.factory.build_driver(node)
            self.assertEqual(1, logs.output.count(
                'Node %s: the fake deploy interface of the %s hardware '
                'type is deprecated' % (node.uuid, driver)))
            self.assertIn('set deploy_interface to %s' % replacement,
                          logs.output)
        node = objects.Node(driver='fake-hardware',
                            uuid=uuidutils.generate_uuid(),
                            deploy_interface='fake')
        self.factory.build_driver(node)
        self.assertNotIn(node.uuid, logs.output)
