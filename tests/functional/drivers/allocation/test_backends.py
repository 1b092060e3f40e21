"""Loading allocation backends and the behaviour of the shipped ones."""

import threading
import time
from unittest import mock

from alloc_framework.common import exception
from alloc_framework.drivers.allocation import base as backend_base
from alloc_framework.drivers.allocation import database
from alloc_framework.drivers.allocation import fake
from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import allocation as alloc_obj
from alloc_framework.objects.baremetal import node_reservation
from tests import base
from tests.functional.objects.baremetal import factories as f


class TestLoadBackend(base.TestCase):
    dialect_neutral = True

    def test_default_is_database(self):
        backend = backend_base.load_backend(self.conf)
        self.assertIsInstance(backend, database.DatabaseBackend)
        self.assertIs(self.conf, backend.conf)

    def test_fake(self):
        self.config(backend='fake', group='allocation')
        self.assertIsInstance(backend_base.load_backend(self.conf),
                              fake.FakeBackend)

    def test_unknown_fails_fast(self):
        self.config(backend='no-such-backend', group='allocation')
        exc = self.assertRaises(exception.DriverLoadError,
                                backend_base.load_backend, self.conf)
        self.assertIn('no-such-backend', str(exc))
        self.assertIn(backend_base.NAMESPACE, str(exc))

    def test_interface_is_abstract(self):
        self.assertRaises(TypeError, backend_base.AllocationBackend,
                          self.conf)

    def test_groups_are_refused_unless_served(self):
        class Singles(backend_base.AllocationBackend):
            allocate = backfill = deallocate = None

        self.config(backend='singles', group='allocation')
        exc = self.assertRaises(exception.InvalidParameterValue,
                                Singles(self.conf).validate_group, None,
                                objects.AllocationGroup())
        self.assertEqual(400, exc.code)
        self.assertIn('singles allocation backend does not serve '
                      'allocation groups', str(exc))
        # Both real backends serve them.
        from alloc_framework.drivers.allocation import placement
        self.assertIsNone(database.DatabaseBackend(self.conf).validate_group(
            None, objects.AllocationGroup()))
        self.assertIsNone(placement.PlacementBackend(
            self.conf).validate_group(None, objects.AllocationGroup()))


class TestBackends(base.DBTestCase):

    def setUp(self):
        super().setUp()
        self.ctx = f.admin_context()

    def test_fake_is_deterministic(self):
        nodes = [f.make_node(self.ctx) for _ in range(3)]
        backend = fake.FakeBackend(self.conf)
        for node in nodes:
            a = f.make_allocation(self.ctx)
            self.assertEqual(node.uuid, backend.allocate(self.ctx, a))
            self.assertEqual(alloc_obj.ACTIVE, a.state)

    def test_database_retries_while_free_nodes_are_busy(self):
        node = f.make_node(self.ctx)
        backend = database.DatabaseBackend(self.conf)
        a = f.make_allocation(self.ctx)
        real_reserve = node_reservation.reserve_node_or_explain
        calls = []

        def reserve(context, allocation, randomize=True):
            # The free node is locked by others for the first two tries.
            calls.append(1)
            if len(calls) < 3:
                return None, node_reservation.BUSY_ERROR
            return real_reserve(context, allocation, randomize=randomize)

        with mock.patch.object(node_reservation, 'reserve_node_or_explain',
                               reserve), \
                mock.patch.object(backend, 'stop_event') as stop_event:
            self.assertEqual(node.uuid, backend.allocate(self.ctx, a))
        self.assertEqual(3, len(calls))
        # A random pause growing with each try, none after the last: a
        # wait on the stop event, never a sleep.
        sleep = stop_event.wait
        self.assertEqual(2, sleep.call_count)
        first, second = (c.args[0] for c in sleep.call_args_list)
        pause = backend.busy_pause
        self.assertTrue(0.5 * pause <= first <= 1.5 * pause, first)
        self.assertTrue(1.0 * pause <= second <= 3.0 * pause, second)

    def test_database_gives_up_when_always_busy(self):
        f.make_node(self.ctx)
        backend = database.DatabaseBackend(self.conf)
        a = f.make_allocation(self.ctx)
        busy = node_reservation.BUSY_ERROR + ' of resource class baremetal'
        with mock.patch.object(node_reservation, 'reserve_node_or_explain',
                               return_value=(None, busy)) as reserve, \
                mock.patch.object(backend, 'stop_event') as stop_event:
            exc = self.assertRaises(exception.AllocationFailed,
                                    backend.allocate, self.ctx, a)
        self.assertEqual(backend.busy_attempts, reserve.call_count)
        self.assertEqual(backend.busy_attempts - 1,
                         stop_event.wait.call_count)
        self.assertIn(node_reservation.BUSY_ERROR, exc.kwargs['error'])

    def test_database_stopping_conductor_does_not_wait(self):
        f.make_node(self.ctx)
        backend = database.DatabaseBackend(self.conf)
        backend.busy_pause = 60
        backend.stop_event.set()
        a = f.make_allocation(self.ctx)
        busy = node_reservation.BUSY_ERROR
        started = time.monotonic()
        with mock.patch.object(node_reservation, 'reserve_node_or_explain',
                               return_value=(None, busy)) as reserve:
            self.assertRaises(exception.AllocationFailed,
                              backend.allocate, self.ctx, a)
        self.assertLess(time.monotonic() - started, 5)
        self.assertEqual(backend.busy_attempts, reserve.call_count)

    def test_backend_gets_the_conductor_stop_event(self):
        stop_event = threading.Event()
        backend = backend_base.load_backend(self.conf, stop_event)
        self.assertIs(stop_event, backend.stop_event)
        self.assertFalse(
            backend_base.load_backend(self.conf).stop_event.is_set())

    def test_database_failure_names_the_filter(self):
        f.make_node(self.ctx, traits=['CUSTOM_A'])
        backend = database.DatabaseBackend(self.conf)
        a = f.make_allocation(self.ctx, traits=['CUSTOM_B'])
        exc = self.assertRaises(exception.AllocationFailed,
                                backend.allocate, self.ctx, a)
        self.assertIn('traits CUSTOM_B', exc.kwargs['error'])
        a = f.make_allocation(self.ctx, resource_class='gpu')
        exc = self.assertRaises(exception.AllocationFailed,
                                backend.allocate, self.ctx, a)
        self.assertIn('resource class gpu', exc.kwargs['error'])

    def test_database_deallocate(self):
        node = f.make_node(self.ctx)
        backend = database.DatabaseBackend(self.conf)
        a = f.make_allocation(self.ctx)
        backend.allocate(self.ctx, a)
        backend.deallocate(self.ctx, a)
        node.refresh()
        self.assertIsNone(node.instance_uuid)
        self.assertEqual([], objects.Allocation.list(self.ctx))
