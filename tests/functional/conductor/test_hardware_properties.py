"""Verification records what the management interface reports in
``node.properties`` (``ManagementInterface.get_hardware_properties``).

The ``fake`` management interface is replaced by one that answers what
each test gives it, on a conductor of the test process.
"""

import logging

import fixtures

from alloc_framework.common import exception
from alloc_framework.common import states
from alloc_framework.drivers import driver_factory
from alloc_framework.drivers.modules import fake
from tests.functional.conductor import base
from tests.functional.conductor import conductors


class ReportingManagement(fake.FakeManagement):
    """Answers ``answer``, or raises it when it is an exception."""

    def __init__(self, answer):
        self.answer = answer
        self.calls = 0

    def get_hardware_properties(self, task):
        self.calls += 1
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


class HardwarePropertiesTestCase(base.ConductorTestCase):
    # The merge is the conductor's; the node is saved the ordinary way.
    dialect_neutral = True

    def setUp(self):
        super().setUp()
        self.logs = self.useFixture(fixtures.FakeLogger(level=logging.INFO))

    def use_management(self, answer):
        """Restart the conductor with a management interface answering
        ``answer``."""
        self.manager.del_host()
        factory = driver_factory.DriverFactory(self.conf)
        iface = ReportingManagement(answer)
        iface.conf = self.conf
        factory.interfaces['management']['fake'] = iface
        self.manager.driver_factory = factory
        self.manager.init_host()
        return iface

    def manage(self, properties):
        node = self.make_node(properties=properties)
        self.rpc.do_provisioning_action(self.ctx, node.id, 'manage')
        node = conductors.wait_unlocked(self.ctx, node.id)
        self.assertEqual(states.MANAGEABLE, node.provision_state,
                         node.last_error)
        self.assertIsNone(node.last_error)
        return node

    def test_the_default_reports_nothing(self):
        node = self.manage({'cpus': 8, 'gpus': 2})
        self.assertEqual({'cpus': 8, 'gpus': 2}, node.properties)

    def test_only_the_returned_keys_change(self):
        iface = self.use_management({'gpus': 4, 'cpu_arch': 'x86_64'})
        node = self.manage({'cpus': 8, 'gpus': 1})
        self.assertEqual(1, iface.calls)
        self.assertEqual({'cpus': 8, 'gpus': 4, 'cpu_arch': 'x86_64'},
                         node.properties)
        self.assertIn('Node %s: recorded the hardware properties its '
                      'management interface reports: cpu_arch=x86_64, '
                      'gpus=4' % node.uuid, self.logs.output)

    def test_a_node_without_properties_gets_them(self):
        self.use_management({'gpus': 0})
        self.assertEqual({'gpus': 0}, self.manage(None).properties)

    def test_a_hardware_error_is_a_warning_not_a_failure(self):
        self.use_management(exception.RedfishConnectionError(
            error='Redfish BMC of node x did not answer: timed out'))
        node = self.manage({'gpus': 2})
        self.assertEqual({'gpus': 2}, node.properties)
        self.assertIn('Node %s: could not read its hardware properties, '
                      'they stay as they were: Redfish BMC of node x did '
                      'not answer: timed out' % node.uuid, self.logs.output)

    def test_an_unexpected_error_is_logged_with_its_traceback(self):
        self.use_management(RuntimeError('bug in the plugin'))
        node = self.manage({'gpus': 2})
        self.assertEqual({'gpus': 2}, node.properties)
        self.assertIn('Node %s: could not read its hardware properties'
                      % node.uuid, self.logs.output)
        self.assertIn('Traceback', self.logs.output)
        self.assertIn('RuntimeError: bug in the plugin', self.logs.output)

    def test_unsupported_is_silent(self):
        self.use_management(exception.UnsupportedDriverExtension(
            'no hardware properties'))
        node = self.manage({'gpus': 2})
        self.assertEqual({'gpus': 2}, node.properties)
        self.assertNotIn('hardware properties', self.logs.output)

    def test_an_answer_that_is_not_a_dict_of_names_is_ignored(self):
        iface = self.use_management(None)
        for answer in (['gpus', 4], 4, {1: 'one'}):
            iface.answer = answer
            node = self.manage({'gpus': 2})
            self.assertEqual({'gpus': 2}, node.properties)
            self.assertIn('Node %s: its management interface returned %r '
                          'as hardware properties, not a dict keyed by '
                          'names; ignored.' % (node.uuid, answer),
                          self.logs.output)
