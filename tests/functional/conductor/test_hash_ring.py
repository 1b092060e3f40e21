"""Hash ring over live conductors and node locks, on a real DB."""

import datetime

from oslo_utils import uuidutils
import sqlalchemy as sa

from alloc_framework.common import exception
from alloc_framework.conductor import hash_ring
from alloc_framework.conductor import task_manager
from alloc_framework.db.sqlalchemy import models
from alloc_framework.drivers import driver_factory
from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import base as obj_base
from tests import base
from tests.functional.objects.baremetal import factories


class HashRingTestCase(base.DBTestCase):

    def setUp(self):
        super().setUp()
        self.ctx = factories.admin_context()
        self.ring = hash_ring.HashRingManager(self.conf, self.ctx)

    def _kill(self, hostname):
        with self.db.engine.begin() as conn:
            conn.execute(sa.update(models.Conductor)
                         .where(models.Conductor.hostname == hostname)
                         .values(updated_at=obj_base.utcnow()
                                 - datetime.timedelta(hours=1)))

    def test_no_conductor(self):
        self.assertRaises(exception.TemporaryFailure,
                          self.ring.get_host_for_node,
                          uuidutils.generate_uuid())
        self.assertRaises(exception.TemporaryFailure,
                          self.ring.get_hosts)

    def test_nodes_spread_and_stable(self):
        for host in ('c1', 'c2', 'c3'):
            objects.Conductor.register(self.ctx, host,
                                       drivers=['fake-hardware'])
        uuids = [uuidutils.generate_uuid() for _ in range(60)]
        first = [self.ring.get_host_for_node(u) for u in uuids]
        self.assertEqual({'c1', 'c2', 'c3'}, set(first))
        self.ring.reset()
        self.assertEqual(first, [self.ring.get_host_for_node(u)
                                 for u in uuids])
        # A dead conductor's nodes move; the others' stay.
        self._kill('c2')
        self.ring.reset()
        after = [self.ring.get_host_for_node(u) for u in uuids]
        self.assertNotIn('c2', after)
        for before, now in zip(first, after):
            if before != 'c2':
                self.assertEqual(before, now)

    def test_groups(self):
        objects.Conductor.register(self.ctx, 'a1', 'rack-a')
        objects.Conductor.register(self.ctx, 'b1', '')
        node = uuidutils.generate_uuid()
        self.assertEqual('a1', self.ring.get_host_for_node(node, 'RACK-A'))
        self.assertEqual('b1', self.ring.get_host_for_node(node, ''))
        self.assertRaises(exception.TemporaryFailure,
                          self.ring.get_host_for_node, node, 'rack-z')

    def test_new_conductor_seen_for_unknown_group(self):
        objects.Conductor.register(self.ctx, 'b1', '')
        self.ring.get_host_for_node(uuidutils.generate_uuid())
        objects.Conductor.register(self.ctx, 'a1', 'rack-a')
        self.assertEqual('a1', self.ring.get_host_for_node(
            uuidutils.generate_uuid(), 'rack-a'))

    def test_hosts_by_driver(self):
        objects.Conductor.register(self.ctx, 'c1', drivers=['x'])
        objects.Conductor.register(self.ctx, 'c2', drivers=['y'])
        self.assertEqual(['c2'], self.ring.get_hosts(driver='y'))
        self.assertRaises(exception.TemporaryFailure,
                          self.ring.get_hosts, driver='z')

    def test_hosts_are_the_live_conductors(self):
        for host in ('c1', 'c2', 'c3'):
            objects.Conductor.register(self.ctx, host)
        self.assertEqual(['c1', 'c2', 'c3'], sorted(self.ring.get_hosts()))
        self._kill('c2')
        self.ring.reset()
        self.assertEqual(['c1', 'c3'], sorted(self.ring.get_hosts()))


class TaskManagerTestCase(base.DBTestCase):

    def setUp(self):
        super().setUp()
        self.ctx = factories.admin_context()
        self.config(node_locked_retry_interval=0, group='conductor')
        self.node = factories.create_node(self.ctx)

    def _reservation(self):
        return objects.Node.get_by_id(self.ctx, self.node.id).reservation

    def test_lock_held_and_released(self):
        factory = driver_factory.DriverFactory(self.conf)
        with task_manager.acquire(self.ctx, self.node.id, host='h1',
                                  driver_factory=factory,
                                  conf=self.conf) as task:
            self.assertEqual('h1', self._reservation())
            self.assertEqual(self.node.uuid, task.node.uuid)
            self.assertIsNotNone(task.driver.power)
        self.assertIsNone(self._reservation())

    def test_released_on_error(self):
        def work():
            with task_manager.acquire(self.ctx, self.node.id, host='h1',
                                      conf=self.conf):
                raise RuntimeError('boom')
        self.assertRaises(RuntimeError, work)
        self.assertIsNone(self._reservation())

    def test_busy_node(self):
        with task_manager.acquire(self.ctx, self.node.id, host='h1',
                                  conf=self.conf):
            exc = self.assertRaises(exception.NodeLocked,
                                    task_manager.acquire, self.ctx,
                                    self.node.id, host='h2', conf=self.conf)
            self.assertIn('h1', str(exc))
            # A shared task takes no lock.
            with task_manager.acquire(self.ctx, self.node.id, shared=True,
                                      host='h2', conf=self.conf) as task:
                self.assertEqual('h1', task.node.reservation)
        self.assertIsNone(self._reservation())

    def test_no_driver_without_hardware_type(self):
        factory = driver_factory.DriverFactory(self.conf)
        node = factories.create_node(self.ctx, driver='not-loaded-here')
        with task_manager.acquire(self.ctx, node.id, host='h1',
                                  driver_factory=factory,
                                  conf=self.conf) as task:
            self.assertIsNone(task.driver)

    def test_missing_node(self):
        self.assertRaises(exception.NodeNotFound, task_manager.acquire,
                          self.ctx, self.node.id + 100, host='h1',
                          conf=self.conf)

    def test_deleted_during_task(self):
        with task_manager.acquire(self.ctx, self.node.id, host='h1',
                                  conf=self.conf) as task:
            task.node.destroy()
