"""Deferred actions on a real database: creation, states, the claim race."""

import collections
import datetime
import threading

from alloc_framework.common import exception
from alloc_framework.conductor import hash_ring
from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import base as obj_base
from alloc_framework.objects.baremetal import deferred_action as da
from tests import base
from tests.functional.objects.baremetal import factories as f

CALL = 'task.driver.power.poll'


def _new(ctx, node, **kw):
    action = objects.DeferredAction.new(ctx, node.id, CALL, **kw)
    action.create()
    return action


def _run_conductors(conductor, count):
    """Run ``conductor(host)`` in ``count`` threads (hosts c0, c1...) and
    wait for them."""
    threads = [threading.Thread(target=conductor, args=('c%d' % i,))
               for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


class TestCreate(base.DBTestCase):

    def setUp(self):
        super().setUp()
        self.ctx = f.admin_context()
        self.node = f.make_node(self.ctx)

    def test_create_and_get(self):
        action = _new(self.ctx, self.node, arguments={'step': 1}, retries=2,
                      created_by='project-a', timeout=60)
        got = objects.DeferredAction.get_by_uuid(self.ctx, action.uuid)
        self.assertEqual(da.CREATED, got.state)
        self.assertEqual({'step': 1}, got.arguments)
        self.assertEqual(2, got.retry_remaining)
        self.assertEqual('project-a', got.created_by)
        self.assertEqual(0, got.reschedule_count)
        self.assertIsNotNone(got.deadline)
        self.assertIsNone(got.start_after)
        self.assertEqual(got.id, objects.DeferredAction.get_by_id(
            self.ctx, got.id).id)

    def test_not_found(self):
        self.assertRaises(exception.DeferredActionNotFound,
                          objects.DeferredAction.get_by_uuid, self.ctx,
                          'c0ffee00-0000-0000-0000-000000000000')

    def test_created_with_node_change_atomically(self):
        self.node.last_error = 'asked for later'
        action = objects.DeferredAction.new(self.ctx, self.node.id, CALL)
        da.create_actions(self.ctx, [action], node=self.node)
        self.node.refresh()
        self.assertEqual('asked for later', self.node.last_error)
        self.assertEqual([action.uuid], [a.uuid for a in
                                         objects.DeferredAction.list(
                                             self.ctx)])

    def test_node_change_rolled_back_with_failed_insert(self):
        self.node.last_error = 'never saved'
        first = _new(self.ctx, self.node)
        dup = objects.DeferredAction.new(self.ctx, self.node.id, CALL)
        dup.uuid = first.uuid
        self.assertRaises(Exception, da.create_actions, self.ctx, [dup],
                          node=self.node)
        self.node.refresh()
        self.assertIsNone(self.node.last_error)

    def test_list_filters_and_marker(self):
        other = f.make_node(self.ctx)
        a1 = _new(self.ctx, self.node)
        a2 = _new(self.ctx, other)
        a3 = _new(self.ctx, self.node)
        self.assertEqual([a1.uuid, a3.uuid], [
            a.uuid for a in objects.DeferredAction.list(
                self.ctx, filters={'node_id': self.node.id})])
        self.assertEqual([a2.uuid, a3.uuid], [
            a.uuid for a in objects.DeferredAction.list(
                self.ctx, marker=a1.uuid)])
        self.assertEqual([a1.uuid], [
            a.uuid for a in objects.DeferredAction.list(self.ctx, limit=1)])
        self.assertRaises(exception.InvalidParameterValue,
                          objects.DeferredAction.list, self.ctx,
                          marker='c0ffee00-0000-0000-0000-000000000000')

    def test_deleted_with_node(self):
        _new(self.ctx, self.node)
        self.node.destroy()
        self.assertEqual([], objects.DeferredAction.list(self.ctx))


class TestStateMachine(base.DBTestCase):

    def setUp(self):
        super().setUp()
        self.ctx = f.admin_context()
        self.node = f.make_node(self.ctx)

    def test_every_transition_of_the_table(self):
        expected = {
            (da.CREATED, da.RUNNING),
            (da.RUNNING, da.COMPLETED), (da.RUNNING, da.RESCHEDULE),
            (da.RUNNING, da.PENDING_RETRY), (da.RUNNING, da.FAILED),
            (da.RESCHEDULE, da.RUNNING), (da.PENDING_RETRY, da.RUNNING)}
        for current in da.STATES:
            for new in da.STATES:
                if (current, new) in expected:
                    da.check_transition('a', current, new)
                else:
                    self.assertRaises(
                        exception.InvalidDeferredActionTransition,
                        da.check_transition, 'a', current, new)

    def test_full_cycle(self):
        action = _new(self.ctx, self.node)
        self.assertRaises(exception.InvalidDeferredActionTransition,
                          action.transition, da.COMPLETED)
        action.transition(da.RUNNING)
        later = obj_base.utcnow() + datetime.timedelta(seconds=30)
        action.transition(da.RESCHEDULE, arguments={'next': True},
                          start_after=later, reschedule_count=1)
        action.transition(da.RUNNING)
        action.transition(da.COMPLETED, result='done')
        got = objects.DeferredAction.get_by_uuid(self.ctx, action.uuid)
        self.assertEqual(da.COMPLETED, got.state)
        self.assertEqual('done', got.result)
        self.assertEqual({'next': True}, got.arguments)
        self.assertEqual(1, got.reschedule_count)
        self.assertRaises(exception.InvalidDeferredActionTransition,
                          action.transition, da.RUNNING)

    def test_stale_object_refused(self):
        action = _new(self.ctx, self.node)
        stale = objects.DeferredAction.get_by_uuid(self.ctx, action.uuid)
        action.transition(da.RUNNING)
        self.assertRaises(exception.DeferredActionStateChanged,
                          stale.transition, da.RUNNING)

    def test_revert_claim(self):
        action = _new(self.ctx, self.node, retries=3)
        claimed = objects.DeferredAction.claim(self.ctx, [action.id], 'h')
        self.assertEqual({action.id: da.CREATED}, claimed)
        action = objects.DeferredAction.get_by_uuid(self.ctx, action.uuid)
        self.assertEqual('h', action.conductor)
        action.revert_claim(da.CREATED)
        got = objects.DeferredAction.get_by_uuid(self.ctx, action.uuid)
        self.assertEqual(da.CREATED, got.state)
        self.assertEqual(3, got.retry_remaining)
        self.assertRaises(exception.InvalidDeferredActionTransition,
                          got.revert_claim, da.CREATED)

    def test_retry_or_fail_spends_retries_then_fails(self):
        action = _new(self.ctx, self.node, retries=1)
        objects.DeferredAction.claim(self.ctx, [action.id], 'h')
        action = objects.DeferredAction.get_by_uuid(self.ctx, action.uuid)
        self.assertEqual(da.PENDING_RETRY,
                         action.retry_or_fail(RuntimeError('no answer')))
        got = objects.DeferredAction.get_by_uuid(self.ctx, action.uuid)
        self.assertEqual((da.PENDING_RETRY, 0, 'no answer', None),
                         (got.state, got.retry_remaining, got.result,
                          got.conductor))
        objects.DeferredAction.claim(self.ctx, [action.id], 'h')
        got = objects.DeferredAction.get_by_uuid(self.ctx, action.uuid)
        self.assertEqual(da.FAILED, got.retry_or_fail('still no answer'))
        got = objects.DeferredAction.get_by_uuid(self.ctx, action.uuid)
        self.assertEqual((da.FAILED, 0, 'still no answer'),
                         (got.state, got.retry_remaining, got.result))

    def test_retry_or_fail_of_a_stale_object_refused(self):
        action = _new(self.ctx, self.node, retries=1)
        objects.DeferredAction.claim(self.ctx, [action.id], 'h')
        running = objects.DeferredAction.get_by_uuid(self.ctx, action.uuid)
        stale = objects.DeferredAction.get_by_uuid(self.ctx, action.uuid)
        running.retry_or_fail('rescued by one conductor')
        self.assertRaises(exception.DeferredActionStateChanged,
                          stale.retry_or_fail, 'and by another')


class TestCandidates(base.DBTestCase):

    def setUp(self):
        super().setUp()
        self.ctx = f.admin_context()
        self.node = f.make_node(self.ctx)

    def test_order_and_filters(self):
        now = obj_base.utcnow()
        lazy = _new(self.ctx, self.node)
        late = _new(self.ctx, self.node,
                    start_after=now - datetime.timedelta(seconds=5))
        early = _new(self.ctx, self.node,
                     start_after=now - datetime.timedelta(seconds=50))
        _new(self.ctx, self.node,
             start_after=now + datetime.timedelta(seconds=500))
        done = _new(self.ctx, self.node)
        done.transition(da.RUNNING)
        locked = f.make_node(self.ctx, reservation='someone')
        _new(self.ctx, locked)
        rows = objects.DeferredAction.candidates(self.ctx, 10)
        self.assertEqual([early.id, late.id, lazy.id], [r[0] for r in rows])
        self.assertEqual(self.node.uuid, rows[0][1])
        self.assertEqual(2, len(objects.DeferredAction.candidates(
            self.ctx, 2)))

    def test_only_the_nodes_the_ring_gives(self):
        # Three conductors in the default group, two in "rack-b": each
        # reads the actions of its own nodes, and only those, as the
        # ring (MD5 in the database) maps them.
        groups = {'': ['c1', 'c2', 'c3'], 'rack-b': ['b1', 'b2']}
        for group, hosts in groups.items():
            for host in hosts:
                objects.Conductor.register(self.ctx, host, group)
        ring = hash_ring.HashRingManager(self.conf, self.ctx)
        nodes = ([self.node] + [f.make_node(self.ctx) for _ in range(59)]
                 + [f.make_node(self.ctx, conductor_group='Rack-B')
                    for _ in range(30)])
        for node in nodes:
            _new(self.ctx, node)
        ids = {n.id: n for n in nodes}
        seen = []
        for group, hosts in groups.items():
            for host in hosts:
                owned = ring.hash_ranges(host)
                self.assertEqual([group], list(owned))
                rows = objects.DeferredAction.candidates(self.ctx, 1000,
                                                         owned=owned)
                got = sorted(r[1] for r in rows)
                expected = sorted(
                    n.uuid for n in nodes
                    if ring.get_host_for_node(n.uuid, n.conductor_group)
                    == host)
                self.assertEqual(expected, got, host)
                self.assertTrue(got, host)
                seen.extend(got)
        # Every action is read by exactly one conductor.
        self.assertEqual(sorted(n.uuid for n in ids.values()), sorted(seen))
        self.assertEqual([], objects.DeferredAction.candidates(
            self.ctx, 1000, owned={}))
        self.assertEqual([], objects.DeferredAction.candidates(
            self.ctx, 1000, owned=ring.hash_ranges('not-a-conductor')))


class TestClaimRace(base.DBTestCase):
    """Conductors racing for the same actions launch each exactly once."""

    def test_each_action_claimed_once(self):
        ctx = f.admin_context()
        nodes = [f.make_node(ctx) for _ in range(10)]
        actions = [_new(ctx, nodes[i % 10]) for i in range(60)]
        claims = collections.Counter()
        lock = threading.Lock()
        errors = []
        start = threading.Barrier(4)

        def conductor(host):
            try:
                start.wait()
                while True:
                    rows = objects.DeferredAction.candidates(ctx, 25)
                    if not rows:
                        return
                    won = objects.DeferredAction.claim(
                        ctx, [r[0] for r in rows], host)
                    with lock:
                        claims.update(list(won))
            except Exception as exc:  # reported below
                errors.append(exc)

        _run_conductors(conductor, 4)
        self.assertEqual([], errors)
        self.assertEqual({a.id: 1 for a in actions}, dict(claims))
        self.assertEqual({da.RUNNING: 60},
                         objects.DeferredAction.count_by_state(ctx))

    def test_each_action_claimed_once_with_its_node_locked(self):
        # claim_and_lock: the node of each claimed action is locked by
        # the winner in the same transaction, so two actions of a node
        # never run at once, and the last state change gives it back.
        ctx = f.admin_context()
        nodes = [f.make_node(ctx) for _ in range(10)]
        actions = [_new(ctx, nodes[i % 10]) for i in range(60)]
        claims = collections.Counter()
        running = set()
        lock = threading.Lock()
        errors = []
        start = threading.Barrier(4)

        def conductor(host):
            try:
                start.wait()
                while True:
                    rows = objects.DeferredAction.candidates(ctx, 25)
                    if not rows:
                        with lock:
                            if not running:
                                return
                        continue
                    won = objects.DeferredAction.claim_and_lock(
                        ctx, [r[0] for r in rows], host)
                    for action, previous, node in won:
                        self.assertEqual((da.CREATED, host, action.node_id),
                                         (previous, node.reservation,
                                          node.id))
                        with lock:
                            self.assertNotIn(node.id, running)
                            running.add(node.id)
                            claims[action.id] += 1
                    for action, _previous, node in won:
                        with lock:
                            running.discard(node.id)
                        action.transition(da.COMPLETED, release=host)
            except Exception as exc:  # reported below
                errors.append(exc)

        _run_conductors(conductor, 4)
        self.assertEqual([], errors)
        self.assertEqual({a.id: 1 for a in actions}, dict(claims))
        self.assertEqual({da.COMPLETED: 60},
                         objects.DeferredAction.count_by_state(ctx))
        self.assertEqual([None] * 10, [
            objects.Node.get_by_id(ctx, n.id).reservation for n in nodes])
