"""The ``oslo`` RPC transport against the real RabbitMQ of the machine.

The broker is ``ALLOC_TEST_TRANSPORT_URL`` (default
``rabbit://guest:guest@127.0.0.1:5672/``). When it cannot be reached the
tests are skipped, except in CI (``CI=true``) where they fail.
"""

import os
import socket
import urllib.parse

from oslo_utils import uuidutils

from alloc_framework.common import exception
from alloc_framework.common import states
from alloc_framework.conductor import manager as manager_mod
from alloc_framework.conductor import rpcapi
from alloc_framework.objects import baremetal as objects
from tests import base
from tests.functional.conductor import base as conductor_base
from tests.functional.conductor import conductors
from tests.functional.objects.baremetal import factories

TRANSPORT_URL = os.environ.get('ALLOC_TEST_TRANSPORT_URL',
                               'rabbit://guest:guest@127.0.0.1:5672/')


def broker_error():
    """Why the broker cannot be reached, or None when it can."""
    parsed = urllib.parse.urlparse(TRANSPORT_URL)
    try:
        with socket.create_connection((parsed.hostname, parsed.port or 5672),
                                      timeout=2):
            return None
    except OSError as exc:
        return 'RabbitMQ at %s unreachable: %s' % (TRANSPORT_URL, exc)


class OsloTransportTestCase(base.DBTestCase):

    def setUp(self):
        super().setUp()
        error = broker_error()
        if error:
            if base.IN_CI:
                self.fail(error)
            self.skipTest(error)
        self.config(rpc_transport='oslo', transport_url=TRANSPORT_URL)
        self.config(check_allocations_interval=0, group='conductor')
        self.config(node_locked_retry_interval=0, group='conductor')
        self.ctx = factories.admin_context()
        # A host name of its own: concurrent test runs share the broker.
        self.host = 'rpc-test-%s' % uuidutils.generate_uuid()[:12]
        self.manager = manager_mod.ConductorManager(self.host, self.conf)
        self.manager.init_host()
        self.addCleanup(self.manager.del_host)
        self.rpc = rpcapi.ConductorAPI(self.conf)
        self.addCleanup(self.rpc.transport.cleanup)

    def test_calls_and_objects_travel(self):
        node = self.rpc.create_node(self.ctx, objects.Node(
            self.ctx, driver='fake-hardware', name='over-rabbit',
            properties={'cpus': 4}))
        self.assertIsInstance(node, objects.Node)
        self.assertEqual('fake', node.power_interface)
        self.assertEqual({'cpus': 4}, node.properties)
        self.rpc.do_provisioning_action(self.ctx, node.id, 'manage')
        conductors.wait_unlocked(self.ctx, node.id)
        self.rpc.change_node_power_state(self.ctx, node.id, states.POWER_ON)
        node = conductors.wait_unlocked(self.ctx, node.id)
        self.assertEqual(states.MANAGEABLE, node.provision_state)
        self.assertEqual(states.POWER_ON, node.power_state)
        node.extra = {'via': 'rpc'}
        updated = self.rpc.update_node(self.ctx, node)
        self.assertEqual({'via': 'rpc'}, updated.extra)
        self.rpc.add_node_traits(self.ctx, node.id, ['CUSTOM_RPC'])
        self.assertEqual(['CUSTOM_RPC'], objects.Node.get_by_id(
            self.ctx, node.id).traits)

    def test_validation_and_driver_details_travel(self):
        node = factories.create_node(self.ctx)
        verdicts = self.rpc.validate_driver_interfaces(self.ctx, node.id)
        self.assertEqual({'result': True, 'reason': None},
                         verdicts['power'])
        details = self.rpc.get_driver_details(self.ctx, 'fake-hardware')
        self.assertEqual('fake', details['power']['default'])
        self.assertIn('fake', details['power']['enabled'])
        self.assertIn('fake_fail_power', self.rpc.get_driver_properties(
            self.ctx, 'fake-hardware'))
        self.assertRaises(exception.DriverNotFound,
                          self.rpc.get_driver_properties, self.ctx, 'nope')

    def test_call_returns_while_worker_works(self):
        # Not held for the whole power change: the call answers once a
        # worker has it, well before rpc_response_timeout.
        gate = conductor_base.Gate(self)
        self.manager.driver_factory.interfaces['power']['fake'] = (
            conductor_base.SlowPower(gate))
        node = factories.create_node(self.ctx, power_state=states.POWER_OFF)
        self.rpc.change_node_power_state(self.ctx, node.id, states.POWER_ON)
        self.assertTrue(gate.entered.wait(30))
        fresh = objects.Node.get_by_id(self.ctx, node.id)
        self.assertEqual(states.POWER_ON, fresh.target_power_state)
        self.assertEqual(self.host, fresh.reservation)
        gate.opened.set()
        fresh = conductors.wait_unlocked(self.ctx, node.id)
        self.assertEqual(states.POWER_ON, fresh.power_state)
        self.assertIsNone(fresh.target_power_state)

    def test_domain_errors_come_back(self):
        node = factories.create_node(self.ctx)
        exc = self.assertRaises(exception.InvalidStateRequested,
                                self.rpc.do_provisioning_action, self.ctx,
                                node.id, 'provide')
        self.assertEqual(400, exc.code)
        self.assertIn('enroll', str(exc))
        # The very class (the API derives error codes from class names),
        # and no conductor traceback in the message.
        self.assertIs(exception.InvalidStateRequested, type(exc))
        self.assertNotIn('Traceback', str(exc))
        self.assertEqual(node.uuid, exc.kwargs['node'])
        objects.Node.reserve(self.ctx, node.id, 'somebody')
        exc = self.assertRaises(exception.NodeLocked, self.rpc.destroy_node,
                                self.ctx, node.id)
        self.assertEqual(409, exc.code)

    def test_allocation_over_rpc(self):
        node = factories.create_node(self.ctx, provision_state='available',
                                     power_state='power off',
                                     resource_class='rpc-class')
        alloc = self.rpc.create_allocation(self.ctx, objects.Allocation(
            self.ctx, resource_class='rpc-class'))
        self.assertIsInstance(alloc, objects.Allocation)
        self.assertEqual(self.manager.conductor.id, alloc.conductor_affinity)
        # The worker finishes the allocation; wait on the pool, not on time.
        self.manager._executor.shutdown(wait=True)
        alloc.refresh(self.ctx)
        self.assertEqual('active', alloc.state)
        self.assertEqual(node.id, alloc.node_id)
