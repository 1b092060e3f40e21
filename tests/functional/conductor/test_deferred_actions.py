"""The deferred action launcher of a conductor, on a real database."""

import collections
import datetime
import logging
import os
import signal
import subprocess
import sys
import threading

import fixtures
import oslo_messaging
from oslo_messaging.notify import _impl_test as impl_test
import sqlalchemy as sa

import alloc_framework
from alloc_framework.common import context as af_context
from alloc_framework.common import metrics
from alloc_framework.conductor import deferred_actions
from alloc_framework.db.sqlalchemy import models
from alloc_framework.drivers import deferred
from alloc_framework.drivers import driver_factory
from alloc_framework.drivers.modules import fake
from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import base as obj_base
from alloc_framework.objects.baremetal import deferred_action as da
from tests import base as test_base
from tests.functional.conductor import base


class DeferrablePower(fake.FakePower):
    """A power interface with deferrable methods, counting its calls."""

    def __init__(self, gate=None):
        self.calls = collections.Counter()
        self.gate = gate
        self._lock = threading.Lock()

    def _count(self, task):
        with self._lock:
            self.calls[task.node.uuid] += 1

    @deferred.deferrable
    def echo(self, task, value=None):
        self._count(task)
        return {'value': value}

    @deferred.deferrable
    def poll(self, task, left, wait=0):
        self._count(task)
        if left:
            return deferred.Reschedule(delay=wait, left=left - 1, wait=wait)
        return 'done'

    @deferred.deferrable
    def boom(self, task):
        self._count(task)
        raise RuntimeError('the BMC does not answer')

    @deferred.deferrable
    def hold(self, task):
        self._count(task)
        self.gate.pass_through()

    def not_marked(self, task):
        self._count(task)

    @deferred.deferrable
    def flash(self, task, marker=None):
        self._count(task)
        return 'flashed'


class _LauncherBase(base.ConductorTestCase):
    """A conductor whose power interface has deferrable methods."""

    def setUp(self):
        super().setUp()
        # The tests run the launcher themselves.
        self.config(launcher_interval=0, group='deferred_actions')
        self.gate = base.Gate(self)
        self.power = DeferrablePower(self.gate)
        self.manager.del_host()
        self.manager.driver_factory = self._factory()
        self.manager.init_host()
        self.launcher = self.manager.deferred_actions
        self.node = self.make_node()

    def _factory(self):
        factory = driver_factory.DriverFactory(self.conf)
        factory.interfaces['power']['fake'] = self.power
        return factory

    def _action(self, method, node=None, context=None, **kw):
        action = objects.DeferredAction.new(
            context or self.ctx, (node or self.node).id,
            deferred.call_name('power', method), **kw)
        action.create()
        return action

    def _launch(self, launcher=None):
        launcher = launcher or self.launcher
        report = launcher.launch(self.ctx)
        test_base.wait_for(lambda: launcher.busy == 0, 'idle launcher')
        return report

    def _get(self, action):
        return objects.DeferredAction.get_by_uuid(self.ctx, action.uuid)

    def _clean_up(self):
        """One run of the clean-up periodic."""
        return self.manager.deferred_cleanup.run(self.ctx)


class LauncherTestCase(_LauncherBase):

    def test_completes_with_result(self):
        action = self._action('echo', arguments={'value': 42})
        report = self._launch()
        got = self._get(action)
        self.assertEqual(da.COMPLETED, got.state)
        self.assertEqual('{"value": 42}', got.result)
        self.assertEqual(1, report.launched)
        self.assertEqual({da.COMPLETED: 1}, report.outcomes)
        self.assertIsNone(objects.Node.get_by_id(
            self.ctx, self.node.id).reservation)

    def test_reschedule_with_new_arguments(self):
        action = self._action('poll', arguments={'left': 2})
        self._launch()
        got = self._get(action)
        self.assertEqual(da.RESCHEDULE, got.state)
        self.assertEqual({'left': 1, 'wait': 0}, got.arguments)
        self.assertEqual(1, got.reschedule_count)
        self.assertIsNotNone(got.start_after)
        self._launch()
        self._launch()
        got = self._get(action)
        self.assertEqual(da.COMPLETED, got.state)
        self.assertEqual('done', got.result)
        self.assertEqual(3, self.power.calls[self.node.uuid])

    def test_start_after_not_elapsed_waits(self):
        action = self._action('poll', arguments={'left': 1, 'wait': 600})
        self._launch()
        self.assertEqual(da.RESCHEDULE, self._get(action).state)
        report = self._launch()
        self.assertEqual(0, report.launched)
        self.assertEqual(1, self.power.calls[self.node.uuid])

    def test_retry_then_failed_with_history(self):
        ctx = af_context.RequestContext(user_id='alice', project_id='p1',
                                        is_admin=True)
        action = self._action('boom', context=ctx, retries=1)
        self._launch()
        got = self._get(action)
        self.assertEqual(da.PENDING_RETRY, got.state)
        self.assertEqual(0, got.retry_remaining)
        self._launch()
        got = self._get(action)
        self.assertEqual(da.FAILED, got.state)
        self.assertEqual('the BMC does not answer', got.result)
        node = objects.Node.get_by_id(self.ctx, self.node.id)
        for part in (action.uuid, 'task.driver.power.boom',
                     'the BMC does not answer', ctx.request_id, 'alice'):
            self.assertIn(part, node.last_error)
        self.assertIsNone(node.reservation)
        history = objects.NodeHistory.list_by_node_id(self.ctx, node.id)
        self.assertEqual([node.last_error], [h.event for h in history])
        self.assertEqual('alice', history[0].user)
        self.assertEqual('ERROR', history[0].severity)
        self.assertEqual(deferred_actions.EVENT_TYPE, history[0].event_type)

    def test_not_deferrable_fails_at_once(self):
        action = self._action('not_marked', retries=5)
        self._launch()
        got = self._get(action)
        self.assertEqual(da.FAILED, got.state)
        self.assertIn('not deferrable', got.result)
        self.assertEqual(0, self.power.calls[self.node.uuid])

    def test_max_reschedules(self):
        self.config(max_reschedules=1, group='deferred_actions')
        action = self._action('poll', arguments={'left': 5})
        self._launch()
        self._launch()
        got = self._get(action)
        self.assertEqual(da.FAILED, got.state)
        self.assertIn('rescheduled more than 1 times', got.result)

    def test_timeout(self):
        action = objects.DeferredAction.new(
            self.ctx, self.node.id, deferred.call_name('power', 'echo'))
        action.deadline = obj_base.utcnow() - datetime.timedelta(seconds=1)
        action.create()
        self._launch()
        got = self._get(action)
        self.assertEqual(da.FAILED, got.state)
        self.assertIn('timed out', got.result)
        self.assertEqual(0, self.power.calls[self.node.uuid])

    def test_lock_conflict_leaves_the_action_without_spending_a_retry(self):
        # The node is locked between the read of the candidates and the
        # claim: the claim, which locks the nodes, leaves the action.
        action = self._action('echo', retries=1)
        free = self._action('echo', node=self.make_node())
        objects.Node.reserve(self.ctx, self.node.id, 'someone-else')
        claimed = objects.DeferredAction.claim_and_lock(
            self.ctx, [action.id, free.id], self.manager.host)
        self.assertEqual([(free.id, da.CREATED, free.node_id)],
                         [(a.id, previous, node.id)
                          for a, previous, node in claimed])
        got = self._get(action)
        self.assertEqual((da.CREATED, 1, None),
                         (got.state, got.retry_remaining, got.conductor))
        self.assertEqual(
            self.manager.host,
            objects.Node.get_by_id(self.ctx, free.node_id).reservation)
        # Given back (a stopping conductor): the claim and the lock undone.
        self.launcher._give_back(claimed[0][0], da.CREATED)
        self.assertEqual(da.CREATED, self._get(free).state)
        self.assertIsNone(
            objects.Node.get_by_id(self.ctx, free.node_id).reservation)
        objects.Node.release(self.ctx, self.node.id, 'someone-else')
        self._launch()
        self.assertEqual([da.COMPLETED] * 2,
                         [self._get(a).state for a in (action, free)])
        for node_id in (self.node.id, free.node_id):
            self.assertIsNone(
                objects.Node.get_by_id(self.ctx, node_id).reservation)

    def test_locked_node_not_launched(self):
        action = self._action('echo')
        objects.Node.reserve(self.ctx, self.node.id, 'someone-else')
        self.assertEqual(0, self._launch().launched)
        self.assertEqual(da.CREATED, self._get(action).state)

    def test_pool_bounds_launches(self):
        # A pool's worth of threads run; a pool's worth more wait in its
        # queue; nothing more is claimed until the queue is empty.
        self.assertEqual(8, self.launcher.pool_size)
        nodes = [self.make_node() for _ in range(20)]
        actions = [self._action('hold', node=n) for n in nodes]
        report = self.launcher.launch(self.ctx)
        self.assertEqual(16, report.launched)
        test_base.wait_for(lambda: sum(self.power.calls.values()) == 8,
                           'a full pool')
        self.assertEqual(8, self.launcher.busy)
        self.assertEqual(0, self.launcher.launch(self.ctx).launched)
        self.assertEqual(8, sum(self.power.calls.values()))
        self.assertEqual(
            {da.RUNNING: 16, da.CREATED: 4},
            collections.Counter(self._get(a).state for a in actions))
        self.gate.opened.set()
        test_base.wait_for(lambda: self.launcher.busy == 0, 'idle')
        self._launch()
        self.assertEqual([da.COMPLETED] * 20,
                         [self._get(a).state for a in actions])

    def test_only_nodes_of_this_conductor(self):
        other = self.start_conductor('other-host')
        other.deferred_actions.stop()
        self.launcher.ring.reset()
        nodes = [self.make_node() for _ in range(20)]
        for node in nodes:
            self._action('echo', node=node)
        for _ in range(3):
            self._launch()
        ring = self.launcher.ring
        for node in nodes:
            mine = ring.get_host_for_node(node.uuid) == self.manager.host
            self.assertEqual(1 if mine else 0, self.power.calls[node.uuid])
        self.assertTrue(0 < sum(self.power.calls.values()) < 20)

    def test_racing_conductors_launch_each_action_once(self):
        # Two conductors that both believe they own every node (a hash
        # ring being rebuilt).
        other = self.start_conductor('other-host')
        other.driver_factory = self.manager.driver_factory
        launchers = [self.launcher, other.deferred_actions]
        for launcher in launchers:
            launcher._owned = lambda: {'': [(None, None)]}
        nodes = [self.make_node() for _ in range(12)]
        for node in nodes:
            for _ in range(3):
                self._action('echo', node=node)
        start = threading.Barrier(2)

        def run(launcher):
            start.wait()
            for _ in range(10):
                self._launch(launcher)

        threads = [threading.Thread(target=run, args=(launcher,))
                   for launcher in launchers]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self._launch()
        self.assertEqual({da.COMPLETED: 36},
                         objects.DeferredAction.count_by_state(self.ctx))
        self.assertEqual({n.uuid: 3 for n in nodes}, dict(self.power.calls))

    def _two_conductors(self, nodes):
        """Start ``other-host``; split ``nodes`` by the ring (ours, its).
        """
        other = self.start_conductor('other-host')
        other.deferred_actions.stop()
        self.launcher.ring.reset()
        ring = self.launcher.ring
        mine = [n for n in nodes
                if ring.get_host_for_node(n.uuid) == self.manager.host]
        theirs = [n for n in nodes if n not in mine]
        self.assertTrue(mine and theirs)
        return mine, theirs

    def test_actions_of_other_nodes_do_not_hide_ours(self):
        # The oldest actions are all of the other conductor's nodes, more
        # of them than a run reads: ours are read and launched anyway.
        self.config(candidates_per_iteration=5, group='deferred_actions')
        mine, theirs = self._two_conductors(
            [self.make_node() for _ in range(16)])
        old = obj_base.utcnow() - datetime.timedelta(seconds=600)
        for node in theirs:
            self._action('echo', node=node, start_after=old)
        ours = self._action('echo', node=mine[0])
        report = self._launch()
        self.assertEqual(1, report.launched)
        self.assertEqual(da.COMPLETED, self._get(ours).state)
        self.assertEqual({mine[0].uuid: 1}, dict(self.power.calls))

    def test_one_action_per_node_and_run(self):
        first = self._action('echo', arguments={'value': 1})
        second = self._action('echo', arguments={'value': 2})
        report = self._launch()
        self.assertEqual(1, report.launched)
        self.assertEqual({da.COMPLETED: 1}, report.outcomes)
        self.assertEqual(da.COMPLETED, self._get(first).state)
        self.assertEqual(da.CREATED, self._get(second).state)
        self._launch()
        self.assertEqual(da.COMPLETED, self._get(second).state)

    def _queries_of_a_run(self, waiting, nodes):
        """Statements the launcher's own thread sends in one run."""
        for number in range(waiting):
            self._action('echo', node=nodes[number % len(nodes)],
                         arguments={'value': number})
        self.launcher.ring.hash_ranges(self.manager.host)  # a warm ring
        me = threading.get_ident()
        sent = []

        def count(conn, cursor, statement, *args):
            if threading.get_ident() == me:
                sent.append(statement)

        engine = self.db.engine
        sa.event.listen(engine, 'before_cursor_execute', count)
        try:
            report = self.launcher.launch(self.ctx)
        finally:
            sa.event.remove(engine, 'before_cursor_execute', count)
        test_base.wait_for(lambda: self.launcher.busy == 0, 'idle')
        return len(sent), report.launched

    def test_queries_per_run_do_not_grow_with_waiting_actions(self):
        self.config(hash_ring_reset_interval=3600, group='conductor')
        mine, theirs = self._two_conductors(
            [self.make_node() for _ in range(40)])
        # Ours first: the ring's split of 40 random nodes is uneven, and
        # the few actions must include some of this conductor's.
        nodes = mine + theirs
        few, launched_few = self._queries_of_a_run(10, nodes)
        self.assertGreater(launched_few, 0)
        # Start again from an empty table, with 100 times more waiting.
        with self.db.engine.begin() as conn:
            conn.execute(sa.delete(models.DeferredAction))
        many, launched_many = self._queries_of_a_run(1000, nodes)
        self.assertEqual(min(16, len(mine)), launched_many)
        self.assertEqual(few, many)
        self.assertLess(many, 12)

    def test_racing_through_a_ring_rebalance(self):
        # This conductor built its ring alone and keeps it: it believes
        # every node is its own. The other one, started after, sees both.
        # Half-way, this one rebuilds its ring (the rebalance).
        self.config(hash_ring_reset_interval=3600, group='conductor')
        self.assertEqual({'': [(None, None)]},
                         self.launcher._owned())
        other = self.start_conductor('other-host')
        other.driver_factory = self.manager.driver_factory
        self.assertNotEqual({'': [(None, None)]},
                            other.deferred_actions._owned())
        launchers = [self.launcher, other.deferred_actions]
        nodes = [self.make_node() for _ in range(16)]
        for node in nodes:
            for number in range(3):
                self._action('poll', node=node, arguments={'left': 1})
        # In step: each round starts both launches together, so that
        # neither thread runs all its rounds before the other starts (after
        # the rebalance the other one's nodes are left to it).
        step = threading.Barrier(2, timeout=60)
        launched = collections.Counter()

        def run(launcher):
            for number in range(12):
                if number == 4 and launcher is self.launcher:
                    launcher.ring.reset()
                step.wait()
                launched[launcher.host] += self._launch(launcher).launched

        threads = [threading.Thread(target=run, args=(launcher,))
                   for launcher in launchers]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for _ in range(12):
            self._launch()
            self._launch(other.deferred_actions)
        self.assertEqual({da.COMPLETED: 48},
                         objects.DeferredAction.count_by_state(self.ctx))
        # Each action: one call to start, one to finish; never more.
        self.assertEqual({n.uuid: 6 for n in nodes}, dict(self.power.calls))
        self.assertGreater(launched[self.manager.host], 0)
        self.assertGreater(launched['other-host'], 0)

    def test_node_locked_elsewhere_spends_no_retry(self):
        action = self._action('echo', retries=2)
        objects.Node.reserve(self.ctx, self.node.id, 'someone-else')
        for _ in range(5):
            self.assertEqual(0, self._launch().launched)
        got = self._get(action)
        self.assertEqual((da.CREATED, 2), (got.state, got.retry_remaining))
        self.assertEqual(0, self.power.calls[self.node.uuid])
        objects.Node.release(self.ctx, self.node.id, 'someone-else')
        self._launch()
        got = self._get(action)
        self.assertEqual((da.COMPLETED, 2), (got.state, got.retry_remaining))

    def test_locked_at_the_last_moment_in_every_launchable_state(self):
        for state in (da.PENDING_RETRY, da.RESCHEDULE):
            node = self.make_node()
            action = self._action('echo', node=node, retries=1)
            action.transition(da.RUNNING)
            action.transition(state)
            objects.Node.reserve(self.ctx, node.id, 'someone-else')
            self.assertEqual([], objects.DeferredAction.claim_and_lock(
                self.ctx, [action.id], self.manager.host))
            got = self._get(action)
            self.assertEqual((state, 1, None),
                             (got.state, got.retry_remaining, got.conductor))
            self.assertEqual(0, self.power.calls[node.uuid])

    def test_launcher_periodic_runs_actions(self):
        self.manager.del_host()
        self.config(launcher_interval=0.05, group='deferred_actions')
        self.manager.init_host()
        action = self._action('poll', arguments={'left': 3})
        test_base.wait_for(
            lambda: self._get(action).state == da.COMPLETED,
            'the action to complete')


class CleanupTestCase(_LauncherBase):

    def _age(self, action, seconds, **values):
        with self.db.engine.begin() as conn:
            conn.execute(sa.update(models.DeferredAction)
                         .where(models.DeferredAction.id == action.id)
                         .values(updated_at=obj_base.utcnow()
                                 - datetime.timedelta(seconds=seconds),
                                 **values))

    def _rows(self):
        with self.db.engine.connect() as conn:
            return conn.execute(sa.select(sa.func.count()).select_from(
                models.DeferredAction)).scalar()

    def test_stuck_running_goes_back_to_pending_retry(self):
        action = self._action('echo', retries=2)
        objects.DeferredAction.claim(self.ctx, [action.id], 'dead-host')
        self.assertEqual((0, 0, 0), self._clean_up())
        self._age(action, 901)
        self.assertEqual((1, 0, 0), self._clean_up())
        got = self._get(action)
        self.assertEqual(da.PENDING_RETRY, got.state)
        self.assertEqual(1, got.retry_remaining)
        self.assertIn('dead-host', got.result)
        self._launch()
        self.assertEqual(da.COMPLETED, self._get(action).state)

    def test_stuck_running_without_retries_fails(self):
        action = self._action('echo')
        objects.DeferredAction.claim(self.ctx, [action.id], 'dead-host')
        self._age(action, 901)
        self._clean_up()
        self.assertEqual(da.FAILED, self._get(action).state)
        node = objects.Node.get_by_id(self.ctx, self.node.id)
        self.assertIn(action.uuid, node.last_error)
        self.assertEqual([node.last_error], [
            h.event for h in objects.NodeHistory.list_by_node_id(
                self.ctx, node.id)])

    def test_retention_then_purge_in_batches(self):
        self.config(purge_batch_size=2, group='deferred_actions')
        # One node each: a node runs one action at a time.
        actions = [self._action('echo', node=self.make_node())
                   for _ in range(5)]
        recent = self._action('echo', node=self.make_node())
        waiting = self._action('poll', arguments={'left': 1, 'wait': 600})
        self._launch()
        for action in actions:
            self._age(action, 901)
        self._age(waiting, 5000)
        self.assertEqual((0, 5, 5), self._clean_up())
        self.assertEqual([recent.uuid, waiting.uuid],
                         [a.uuid for a in objects.DeferredAction.list(
                             self.ctx)])
        self.assertEqual(2, self._rows())

    def test_retention_ceiling(self):
        self.assertRaises(ValueError, self.config, retention=86401,
                          group='deferred_actions')
        self.config(retention=86400, group='deferred_actions')
        action = self._action('echo')
        self._launch()
        # A minute on either side of the ceiling: MariaDB keeps whole
        # seconds, and a busy machine may take a second or more between
        # the ageing and the clean-up.
        self._age(action, 86400 - 60)
        self.assertEqual((0, 0, 0), self._clean_up())
        self._age(action, 86400 + 60)
        self.assertEqual((0, 1, 1), self._clean_up())

    def test_locks_of_dead_conductors_blocking_actions_released(self):
        other = self.start_conductor('other-host')
        other.deferred_actions.stop()
        live = self.make_node(reservation='other-host')
        dead = self.make_node(reservation='dead-host')
        idle = self.make_node(reservation='dead-host')
        self._action('echo', node=live)
        waiting = self._action('echo', node=dead)
        done = self._action('echo', node=idle)
        done.transition(da.RUNNING)
        done.transition(da.COMPLETED)
        self._clean_up()
        self.assertEqual(
            ['other-host', None, 'dead-host'],
            [objects.Node.get_by_id(self.ctx, n.id).reservation
             for n in (live, dead, idle)])
        self.assertEqual(da.CREATED, self._get(waiting).state)

    def test_retention_as_configured_and_failures_outlive_the_purge(self):
        self.config(retention=60, group='deferred_actions')
        done = self._action('echo')
        failed = self._action('boom', node=self.make_node())
        self._launch()
        self.assertEqual(da.FAILED, self._get(failed).state)
        # Margins of whole seconds (see test_retention_ceiling).
        self._age(done, 45)
        self._age(failed, 45)
        self.assertEqual((0, 0, 0), self._clean_up())
        self._age(done, 75)
        self._age(failed, 75)
        self.assertEqual((0, 2, 2), self._clean_up())
        self.assertEqual(0, self._rows())
        # The failure stays on the node after its action is gone.
        history = objects.NodeHistory.list_by_node_id(self.ctx,
                                                      failed.node_id)
        self.assertEqual(1, len(history))
        self.assertIn(failed.uuid, history[0].event)

    def test_ceiling_holds_whatever_the_option_says(self):
        # The option refuses more than a day; the clean-up caps it again
        # in case a value got past that check.
        action = self._action('echo')
        self._launch()
        self._age(action, 86401)
        self.useFixture(fixtures.MockPatchObject(
            self.manager.deferred_cleanup, 'conf',
            _Conf(self.conf, retention=10 ** 7)))
        self.assertEqual((0, 1, 1), self._clean_up())

    def test_busy_pool_cleans_up_less_often(self):
        self._clean_up()
        self._action('hold')
        self.launcher.launch(self.ctx)
        test_base.wait_for(lambda: self.launcher.busy == 1, 'busy pool')
        self.assertIsNone(self._clean_up())
        self.config(cleanup_interval=0, group='deferred_actions')
        self.assertIsNotNone(self._clean_up())
        self.gate.opened.set()
        test_base.wait_for(lambda: self.launcher.busy == 0, 'idle pool')
        self.assertIsNotNone(self._clean_up())


class _Conf:
    """``conf`` with some [deferred_actions] values replaced."""

    def __init__(self, conf, **values):
        self._conf = conf
        group = conf.deferred_actions
        self.deferred_actions = type('Group', (), {
            name: values.get(name, getattr(group, name))
            for name in group})()

    def __getattr__(self, name):
        return getattr(self._conf, name)


class _Recorder(metrics.NoopEmitter):

    def __init__(self, conf):
        super().__init__(conf)
        self.gauges = []
        self.timers = []

    def send_gauge(self, name, value):
        self.gauges.append((name, value))

    def send_timer(self, name, milliseconds):
        self.timers.append(name)


class VisibilityTestCase(_LauncherBase):

    def setUp(self):
        super().setUp()
        # One recorder for the launcher and the clean-up periodics.
        self.launcher.metrics = self.manager.deferred_cleanup.metrics = (
            _Recorder(self.conf))
        transport = oslo_messaging.get_notification_transport(self.conf)
        self.launcher._notifier = oslo_messaging.Notifier(
            transport, driver='test', publisher_id='x')
        impl_test.reset()
        self.addCleanup(impl_test.reset)

    def test_gauges_and_timers(self):
        self._action('echo')
        self._action('boom', node=self.make_node())
        self._launch()
        self.assertEqual(['DeferredActions.launch'],
                         self.launcher.metrics.timers)
        # The gauges count the states when the run ended its launches.
        names = [name for name, _v in self.launcher.metrics.gauges]
        self.assertEqual(sorted(deferred_actions.GAUGES), sorted(names))
        self.assertEqual(2, dict(self.launcher.metrics.gauges)[
            'DeferredActionsLaunchedCount'])
        self.launcher.metrics.gauges.clear()
        self._launch()
        self.assertEqual({'DeferredActionsLaunchedCount': 0,
                          'DeferredActionsPendingCount': 0,
                          'DeferredActionsFailedCount': 1,
                          'DeferredActionsRetryCount': 0,
                          'DeferredActionsCompletedCount': 1},
                         dict(self.launcher.metrics.gauges))
        self._clean_up()
        self.assertIn('DeferredActions.cleanup',
                      self.launcher.metrics.timers)

    def test_notifications_on_terminal_states_only(self):
        ctx = af_context.RequestContext(user_id='u', project_id='p',
                                        is_admin=True)
        done = self._action('echo', context=ctx, created_by='p',
                            arguments={'value': 1})
        node = self.make_node()
        failed = self._action('boom', node=node)
        self._action('poll', node=self.make_node(),
                     arguments={'left': 1, 'wait': 600})
        self._launch()
        # (context, message, priority, retry) per notification.
        sent = {n[1]['payload']['alloc_framework_object.data']['uuid']: n[1]
                for n in impl_test.NOTIFICATIONS}
        self.assertEqual({done.uuid, failed.uuid}, set(sent))
        ok = sent[done.uuid]
        self.assertEqual('baremetal.deferred_action.completed',
                         ok['event_type'])
        self.assertEqual('INFO', ok['priority'])
        self.assertEqual('alloc-conductor.%s' % self.manager.host,
                         ok['publisher_id'])
        self.assertEqual({'uuid': done.uuid, 'node_uuid': self.node.uuid,
                          'state': 'COMPLETED', 'result': '{"value": 1}',
                          'created_by': 'p'},
                         ok['payload']['alloc_framework_object.data'])
        bad = sent[failed.uuid]
        self.assertEqual('baremetal.deferred_action.failed',
                         bad['event_type'])
        self.assertEqual('ERROR', bad['priority'])
        self.assertEqual(node.uuid,
                         bad['payload']['alloc_framework_object.data'][
                             'node_uuid'])

    def test_notification_level(self):
        self.config(notification_level='error', group='deferred_actions')
        self._action('echo')
        self._action('boom', node=self.make_node())
        self._launch()
        self.assertEqual(['baremetal.deferred_action.failed'],
                         [n[1]['event_type']
                          for n in impl_test.NOTIFICATIONS])
        impl_test.reset()
        self.config(notification_level='none', group='deferred_actions')
        self._action('boom', node=self.make_node())
        self._launch()
        self.assertEqual([], impl_test.NOTIFICATIONS)

    def test_launch_and_completion_logs(self):
        logger = self.useFixture(fixtures.FakeLogger(
            name=deferred_actions.__name__, level=logging.DEBUG))
        self._action('echo')
        self._action('poll', node=self.make_node(), arguments={'left': 1})
        self._action('boom', node=self.make_node())
        report = self._launch()
        test_base.wait_for(lambda: 'ended' in logger.output, 'end log')
        self.assertIn('Deferred actions iteration %d: launching 3 actions, '
                      'worker pool ' % report.number, logger.output)
        self.assertIn('Deferred actions iteration %d ended: 1 completed, '
                      '1 failed, 1 rescheduled, 0 pending retry, 0 given '
                      'back (node locked)' % report.number, logger.output)


class RestartTestCase(_LauncherBase):

    def test_restart_retries_what_it_was_running(self):
        mine = self._action('echo', retries=1)
        last = self._action('echo', node=self.make_node())
        elsewhere = self._action('echo', node=self.make_node(), retries=1)
        objects.DeferredAction.claim(self.ctx, [mine.id, last.id],
                                     self.manager.host)
        objects.DeferredAction.claim(self.ctx, [elsewhere.id], 'other-host')
        self.manager.del_host()
        self.manager.init_host()
        got = self._get(mine)
        self.assertEqual(da.PENDING_RETRY, got.state)
        self.assertEqual(0, got.retry_remaining)
        self.assertIn('interrupted by a restart of %s' % self.manager.host,
                      got.result)
        self.assertEqual(da.FAILED, self._get(last).state)
        self.assertEqual(da.RUNNING, self._get(elsewhere).state)
        self._launch(self.manager.deferred_actions)
        self.assertEqual(da.COMPLETED, self._get(mine).state)


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(
    alloc_framework.__file__)))


class KilledConductorTestCase(_LauncherBase):
    """A conductor process killed (SIGKILL) while it runs an action."""

    def setUp(self):
        super().setUp()
        self.config(heartbeat_interval=1, heartbeat_timeout=4,
                    hash_ring_reset_interval=1, group='conductor')
        self.config(running_timeout=2, group='deferred_actions')
        # Periodics (the heartbeat) take the new intervals on a restart.
        self.manager.del_host()
        self.manager.init_host()
        self.launcher = self.manager.deferred_actions
        self.victim = 'victim-%d' % os.getpid()

    def _spawn_victim(self):
        url = self.db.engine.url.render_as_string(hide_password=False)
        config = os.path.join(self.state_path, 'victim.conf')
        with open(config, 'w') as f:
            f.write('\n'.join([
                '[DEFAULT]', 'host = %s' % self.victim,
                'state_path = %s' % self.state_path,
                'rpc_transport = local',
                'log_file = %s' % os.path.join(self.state_path,
                                               'victim.log'),
                '[database]', 'connection = %s' % url,
                '[conductor]', 'heartbeat_interval = 1',
                'hash_ring_reset_interval = 1',
                'check_allocations_interval = 0',
                'check_provision_state_interval = 0',
                '[deferred_actions]', 'launcher_interval = 0.1',
                'cleanup_interval = 0', '']))
        env = dict(os.environ)
        env.pop('OS_TEST_TIMEOUT', None)
        env['PYTHONPATH'] = os.pathsep.join(
            [ROOT] + [p for p in [env.get('PYTHONPATH')] if p])
        with open(os.path.join(self.state_path, 'victim.out'), 'w') as out:
            proc = subprocess.Popen(
                [sys.executable, '-m',
                 'tests.functional.conductor.deferred_process',
                 '--config-file', config],
                stdout=out, stderr=subprocess.STDOUT, env=env, cwd=ROOT,
                start_new_session=True)
        self.addCleanup(self._kill, proc)
        return proc

    @staticmethod
    def _kill(proc):
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()

    def _victim_log(self):
        path = os.path.join(self.state_path, 'victim.log')
        if not os.path.exists(path):
            return ''
        with open(path) as f:
            return f.read()[-3000:]

    def test_killed_while_running_is_retried_elsewhere(self):
        nodes = [self.make_node() for _ in range(12)]
        proc = self._spawn_victim()

        def victim_alive():
            if proc.poll() is not None:
                self.fail('the victim exited:\n%s' % self._victim_log())
            return self.victim in [c.hostname for c in
                                   objects.Conductor.list_alive(
                                       self.ctx, 4)]
        test_base.wait_for(victim_alive, 'the victim conductor', 60)
        self.launcher.ring.reset()
        node = next(n for n in nodes if self.launcher.ring.get_host_for_node(
            n.uuid) == self.victim)
        marker = os.path.join(self.state_path, 'flashing')
        action = self._action('flash', node=node, retries=1,
                              arguments={'marker': marker})
        test_base.wait_for(lambda: os.path.exists(marker),
                           'the victim to run the action', 60)
        running = self._get(action)
        self.assertEqual((da.RUNNING, self.victim),
                         (running.state, running.conductor))
        self.assertEqual(self.victim, objects.Node.get_by_id(
            self.ctx, node.id).reservation)

        os.killpg(proc.pid, signal.SIGKILL)
        self.assertEqual(-signal.SIGKILL, proc.wait(30))

        # The clean-up of this conductor: once the action has been
        # RUNNING for running_timeout, back to PENDING_RETRY; once the
        # victim's heartbeat is old, its lock on the node released.
        def rescued():
            self._clean_up()
            got = self._get(action)
            unlocked = objects.Node.get_by_id(
                self.ctx, node.id).reservation is None
            return got.state == da.PENDING_RETRY and unlocked and got
        got = test_base.wait_for(rescued, 'the clean-up to retry', 30,
                                 interval=0.5)
        self.assertEqual(0, got.retry_remaining)
        self.assertIn('running for more than 2 seconds on %s' % self.victim,
                      got.result)

        # The ring moves the node here; this conductor runs the retry.
        def completed():
            self._launch()
            return self._get(action).state == da.COMPLETED
        test_base.wait_for(completed, 'the retry to complete', 30,
                           interval=0.5)
        got = self._get(action)
        self.assertEqual(('flashed', 0, self.manager.host),
                         (got.result, got.retry_remaining, got.conductor))
        self.assertEqual({node.uuid: 1}, dict(self.power.calls))
        self.assertIsNone(objects.Node.get_by_id(self.ctx,
                                                 node.id).reservation)


class RefillTestCase(_LauncherBase):
    """A worker that frees up launches the backlog: no waiting for the
    next periodic run (an hour away here)."""

    def setUp(self):
        super().setUp()
        self.config(launcher_interval=3600, pool_size=2,
                    group='deferred_actions')
        self.manager.del_host()
        self.manager.driver_factory = self._factory()
        self.manager.init_host()
        self.launcher = self.manager.deferred_actions

    def test_backlog_runs_without_another_periodic_run(self):
        actions = [self._action('flash', node=self.make_node())
                   for _ in range(9)]
        report = self.launcher.launch(self.ctx)
        self.assertEqual(4, report.launched)

        def all_completed():
            states_now = [self._get(a).state for a in actions]
            return states_now.count(da.COMPLETED) == len(actions)
        test_base.wait_for(all_completed, 'the backlog to be launched')
        test_base.wait_for(lambda: self.launcher.busy == 0, 'idle launcher')
        self.assertEqual(9, sum(self.power.calls.values()))

    def test_a_refill_asked_for_during_a_refill_is_not_lost(self):
        # An action the refill launched can end, and ask for a refill,
        # before the refill itself ends. The running refill must launch
        # once more, or the backlog waits for the next periodic run
        # with every thread idle.
        launcher = self.launcher
        launches = []

        def launch(context, refill=False):
            launches.append(threading.current_thread().name)
            if len(launches) == 1:
                # The launched action ends on another worker meanwhile.
                other = threading.Thread(target=launcher._refill,
                                         args=(context,), name='other')
                other.start()
                other.join(10)
                self.assertFalse(other.is_alive())

        launcher._backlog = True
        launcher.launch = launch
        launcher._refill(self.ctx)
        self.assertEqual(['MainThread', 'MainThread'], launches)
        # Nothing left asked for: the next refill launches once.
        launcher._refill(self.ctx)
        self.assertEqual(3, len(launches))

    def test_no_refill_without_the_periodic(self):
        self.config(launcher_interval=0, group='deferred_actions')
        actions = [self._action('flash', node=self.make_node())
                   for _ in range(6)]
        self._launch()
        done = [self._get(a).state for a in actions].count(da.COMPLETED)
        self.assertEqual(4, done)
