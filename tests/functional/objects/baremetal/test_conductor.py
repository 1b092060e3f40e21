"""Conductor and NodeHistory objects on the selected database backend."""

import datetime
import threading

import sqlalchemy as sa

from alloc_framework.common import exception
from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import base as obj_base
from tests import base
from tests.functional.objects.baremetal import factories


class ConductorTestCase(base.DBTestCase):

    def setUp(self):
        super().setUp()
        self.ctx = factories.admin_context()

    def _age(self, hostname, seconds):
        with self.db.engine.begin() as conn:
            conn.execute(sa.update(models.Conductor)
                         .where(models.Conductor.hostname == hostname)
                         .values(updated_at=obj_base.utcnow()
                                 - datetime.timedelta(seconds=seconds)))

    def test_register_and_get(self):
        cond = objects.Conductor.register(self.ctx, 'c1', 'G1',
                                          ['fake-hardware'])
        self.assertTrue(cond.online)
        self.assertEqual('g1', cond.conductor_group)
        self.assertEqual(['fake-hardware'], cond.drivers)
        self.assertEqual(cond.id, objects.Conductor.get_by_hostname(
            self.ctx, 'c1').id)
        self.assertEqual('c1', objects.Conductor.get_by_id(
            self.ctx, cond.id).hostname)

    def test_reregister_keeps_id(self):
        first = objects.Conductor.register(self.ctx, 'c1')
        first.unregister()
        second = objects.Conductor.register(self.ctx, 'c1', drivers=['x'])
        self.assertEqual(first.id, second.id)
        self.assertTrue(second.online)
        self.assertEqual(['x'], second.drivers)

    def test_not_found(self):
        self.assertRaises(exception.ConductorNotFound,
                          objects.Conductor.get_by_hostname, self.ctx, 'x')
        self.assertRaises(exception.ConductorNotFound,
                          objects.Conductor.get_by_id, self.ctx, 12345)

    def test_list_alive(self):
        objects.Conductor.register(self.ctx, 'alive')
        objects.Conductor.register(self.ctx, 'stale')
        off = objects.Conductor.register(self.ctx, 'off', 'g2')
        off.unregister()
        self._age('stale', 120)
        alive = objects.Conductor.list_alive(self.ctx, 60)
        self.assertEqual(['alive'], [c.hostname for c in alive])
        self.assertEqual(['alive', 'stale'], [
            c.hostname for c in objects.Conductor.list_alive(self.ctx, 600)])
        self.assertEqual([], objects.Conductor.list_alive(
            self.ctx, 600, conductor_group='g2'))
        self.assertEqual(3, len(objects.Conductor.list(self.ctx)))

    def test_touch_revives(self):
        cond = objects.Conductor.register(self.ctx, 'c1')
        self._age('c1', 120)
        self.assertEqual([], objects.Conductor.list_alive(self.ctx, 60))
        cond.touch()
        self.assertEqual(['c1'], [
            c.hostname for c in objects.Conductor.list_alive(self.ctx, 60)])

    def test_alive_registration_is_refused(self):
        first = objects.Conductor.register(self.ctx, 'c1', timeout=60)
        self._age('c1', 30)
        exc = self.assertRaises(exception.ConductorAlreadyRegistered,
                                objects.Conductor.register, self.ctx, 'c1',
                                timeout=60)
        self.assertIn('c1', str(exc))
        self.assertIn('[DEFAULT]host', str(exc))
        # The first one keeps its registration: heartbeat and stop.
        first.touch()
        first.unregister()
        self.assertFalse(objects.Conductor.get_by_hostname(
            self.ctx, 'c1').online)

    def test_own_registration_is_registered_again(self):
        # A restart of the process that holds the registration.
        first = objects.Conductor.register(self.ctx, 'c1')
        again = objects.Conductor.register(
            self.ctx, 'c1', registration=first.registration)
        self.assertEqual(first.registration, again.registration)
        self.assertEqual(first.id, again.id)

    def test_dead_registration_is_taken_over(self):
        dead = objects.Conductor.register(self.ctx, 'c1', timeout=60)
        self._age('c1', 61)
        new = objects.Conductor.register(self.ctx, 'c1', drivers=['x'],
                                         timeout=60)
        self.assertNotEqual(dead.registration, new.registration)
        self.assertEqual(dead.id, new.id)
        self.assertTrue(new.previous.online)
        self.assertEqual(dead.registration, new.previous.registration)
        # The dead one, should it come back, touches nothing of it.
        self.assertRaises(exception.ConductorNotFound, dead.touch)
        self.assertRaises(exception.ConductorNotFound, dead.unregister)
        row = objects.Conductor.get_by_hostname(self.ctx, 'c1')
        self.assertTrue(row.online)
        self.assertEqual(new.registration, row.registration)
        new.unregister()
        self.assertFalse(objects.Conductor.get_by_hostname(
            self.ctx, 'c1').online)

    def test_offline_registration_is_taken(self):
        first = objects.Conductor.register(self.ctx, 'c1')
        first.unregister()
        second = objects.Conductor.register(self.ctx, 'c1')
        self.assertFalse(second.previous.online)
        self.assertNotEqual(first.registration, second.registration)

    def _race(self, count=4):
        """``count`` registrations of c1 at once: [(conductor, error)]."""
        barrier = threading.Barrier(count)
        results = []

        def claim():
            barrier.wait()
            try:
                results.append((objects.Conductor.register(
                    self.ctx, 'c1', timeout=60), None))
            except exception.ConductorAlreadyRegistered as exc:
                results.append((None, exc))
        threads = [threading.Thread(target=claim) for _ in range(count)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return results

    def _assert_one_won(self, results):
        winners = [c for c, _error in results if c is not None]
        self.assertEqual(1, len(winners), results)
        self.assertEqual(winners[0].registration,
                         objects.Conductor.get_by_hostname(
                             self.ctx, 'c1').registration)

    def test_concurrent_first_registrations_one_wins(self):
        self._assert_one_won(self._race())

    def test_concurrent_take_overs_one_wins(self):
        objects.Conductor.register(self.ctx, 'c1')
        self._age('c1', 120)
        self._assert_one_won(self._race())


class NodeHistoryTestCase(base.DBTestCase):

    def setUp(self):
        super().setUp()
        self.ctx = factories.admin_context()
        self.node = factories.create_node(self.ctx)

    def test_record_list_get(self):
        events = [objects.NodeHistory.record(self.ctx, self.node, 'e%d' % i,
                                             conductor='c1')
                  for i in range(3)]
        listed = objects.NodeHistory.list_by_node_id(self.ctx, self.node.id)
        self.assertEqual(['e0', 'e1', 'e2'], [e.event for e in listed])
        self.assertEqual('ERROR', listed[0].severity)
        self.assertEqual('c1', listed[0].conductor)
        page = objects.NodeHistory.list_by_node_id(
            self.ctx, self.node.id, limit=1, marker=events[0].uuid)
        self.assertEqual(['e1'], [e.event for e in page])
        got = objects.NodeHistory.get_by_uuid(self.ctx, events[2].uuid)
        self.assertEqual(self.node.id, got.node_id)
        self.assertIsNotNone(got.created_at)

    def test_not_found(self):
        self.assertRaises(exception.NodeHistoryNotFound,
                          objects.NodeHistory.get_by_uuid, self.ctx,
                          '3b1e2d6c-62a4-4a55-9e10-2b5b3b0b6d11')
        self.assertRaises(exception.InvalidParameterValue,
                          objects.NodeHistory.list_by_node_id, self.ctx,
                          self.node.id,
                          marker='3b1e2d6c-62a4-4a55-9e10-2b5b3b0b6d11')
