"""The periodic task layer: declaration, collection and the runner."""

import threading
import time

import fixtures
from futurist import periodics as futurist_periodics

from alloc_framework import periodics
from tests import base


class _Service:
    """A service with periodic tasks of every shape, and traps."""

    def __init__(self):
        self.calls = []

    @periodics.periodic(
        spacing=lambda conf: conf.conductor.heartbeat_interval)
    def _private(self, *args):
        self.calls.append(('private', args))

    @periodics.periodic(
        spacing=lambda conf: conf.conductor.check_allocations_interval,
        run_immediately=True)
    def public(self, *args):
        self.calls.append(('public', args))

    @periodics.periodic(spacing=5, enabled=lambda conf: False)
    def switched_off(self):
        self.calls.append(('switched_off', ()))

    @staticmethod
    @periodics.periodic(spacing=3)
    def static(*args):
        pass

    @futurist_periodics.periodic(11)
    def native(self, *args):
        self.calls.append(('native', args))

    @futurist_periodics.periodic(11, enabled=False)
    def native_off(self):
        pass

    def plain(self):
        pass

    @property
    def trap(self):
        raise AssertionError('collecting must not run properties')


def _by_name(tasks):
    return {t.__qualname__.rsplit('.', 1)[-1]: (t, a, k)
            for t, a, k in tasks}


class DecoratorTestCase(base.TestCase):

    def test_marks_without_wrapping(self):
        def func():
            return 42
        decorated = periodics.periodic(spacing=1)(func)
        self.assertIs(func, decorated)
        self.assertTrue(periodics.is_periodic(func))
        self.assertFalse(periodics.is_periodic(_Service.plain))
        self.assertFalse(periodics.is_periodic(_Service.native))


class CollectTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.config(heartbeat_interval=7, check_allocations_interval=9,
                    group='conductor')
        self.service = _Service()

    def test_spacing_from_config(self):
        tasks = _by_name(periodics.collect(self.service, self.conf))
        self.assertEqual(7, tasks['_private'][0]._periodic_spacing)
        self.assertEqual(9, tasks['public'][0]._periodic_spacing)
        self.assertFalse(tasks['_private'][0]._periodic_run_immediately)
        self.assertTrue(tasks['public'][0]._periodic_run_immediately)
        self.assertEqual(3, tasks['static'][0]._periodic_spacing)

    def test_config_read_at_collection(self):
        self.config(heartbeat_interval=70, group='conductor')
        tasks = _by_name(periodics.collect(self.service, self.conf))
        self.assertEqual(70, tasks['_private'][0]._periodic_spacing)

    def test_collected_members(self):
        tasks = _by_name(periodics.collect(self.service, self.conf))
        self.assertEqual({'_private', 'public', 'static', 'native'},
                         set(tasks))

    def test_disabled_at_zero(self):
        self.config(check_allocations_interval=0, group='conductor')
        tasks = _by_name(periodics.collect(self.service, self.conf))
        self.assertNotIn('public', tasks)
        self.assertIn('_private', tasks)

    def test_arguments_passed(self):
        tasks = periodics.collect(self.service, self.conf, args=('ctx',),
                                  kwargs={})
        for task, args, kwargs in tasks:
            task(*args, **kwargs)
        self.assertEqual(sorted([('private', ('ctx',)),
                                 ('public', ('ctx',)),
                                 ('native', ('ctx',))]),
                         sorted(self.service.calls))

    def test_module_source(self):
        import types
        module = types.ModuleType('fake_periodics')
        module.job = periodics.periodic(spacing=2)(lambda: None)
        tasks = _by_name(periodics.collect(module, self.conf))
        self.assertEqual(['job'], list(tasks))


class _Interface:
    @periodics.periodic(spacing=4)
    def poll(self, manager, context):
        manager.polled.append((self, context))


class _Factory:
    def __init__(self, shared):
        self.hardware_types = {'hw': object()}
        self.interfaces = {'power': {'a': shared, 'b': _Interface()},
                           'deploy': {'a': shared}}


class _Manager:
    def __init__(self, conf, factory):
        self.conf = conf
        self.driver_factory = factory
        self.polled = []

    @periodics.periodic(spacing=1)
    def _own(self, context):
        self.polled.append(('own', context))


class CollectForConductorTestCase(base.TestCase):

    def test_manager_and_drivers(self):
        shared = _Interface()
        manager = _Manager(self.conf, _Factory(shared))
        tasks = periodics.collect_for_conductor(manager, 'ctx')
        # The shared interface instance is collected once.
        self.assertEqual(3, len(tasks))
        for task, args, kwargs in tasks:
            task(*args, **kwargs)
        self.assertIn(('own', 'ctx'), manager.polled)
        self.assertIn((shared, 'ctx'), manager.polled)
        self.assertEqual(3, len(manager.polled))

    def test_no_driver_factory(self):
        manager = _Manager(self.conf, None)
        tasks = periodics.collect_for_conductor(manager, 'ctx')
        self.assertEqual(1, len(tasks))

    def test_allocation_backend(self):
        backend = _Interface()
        manager = _Manager(self.conf, None)
        manager.allocation_backend = backend
        tasks = periodics.collect_for_conductor(manager, 'ctx')
        self.assertEqual(2, len(tasks))
        for task, args, kwargs in tasks:
            task(*args, **kwargs)
        self.assertEqual([('own', 'ctx'), (backend, 'ctx')],
                         sorted(manager.polled, key=repr))


class RunnerTestCase(base.TestCase):

    def _runner(self, *funcs, **kw):
        tasks = []
        for func in funcs:
            tasks.extend(periodics.collect(func, self.conf))
        runner = periodics.PeriodicRunner(tasks, name='test-periodics',
                                          **kw)
        self.addCleanup(runner.stop)
        return runner

    def test_exception_logged_and_task_keeps_running(self):
        logger = self.useFixture(fixtures.FakeLogger(
            name='alloc_framework.periodics'))
        runs = threading.Semaphore(0)
        count = []

        class Flaky:
            @periodics.periodic(spacing=0.01)
            def job(self):
                count.append(1)
                runs.release()
                raise RuntimeError('boom %d' % len(count))

        runner = self._runner(Flaky())
        runner.start()
        for _ in range(3):
            self.assertTrue(runs.acquire(timeout=60))
        runner.stop()
        self.assertGreaterEqual(len(count), 3)
        self.assertIn('boom 1', logger.output)
        self.assertIn('boom 2', logger.output)

    def test_stop_is_prompt(self):
        ran = []

        class Slow:
            @periodics.periodic(spacing=3600)
            def job(self):
                ran.append(1)

        runner = self._runner(Slow())
        runner.start()
        self.assertTrue(runner.running)
        thread = runner._thread
        started = time.monotonic()
        runner.stop()
        # A generous bound: far below the hour-long period.
        self.assertLess(time.monotonic() - started, 60)
        self.assertFalse(thread.is_alive())
        self.assertFalse(runner.running)
        self.assertEqual([], ran)

    def test_stop_waits_for_runs_under_way(self):
        entered = threading.Event()
        done = []
        holder = {}

        class Busy:
            @periodics.periodic(spacing=3600, run_immediately=True)
            def job(self):
                entered.set()
                # Ends only once the stop was requested.
                holder['runner']._worker._tombstone.wait(60)
                done.append(1)

        runner = holder['runner'] = self._runner(Busy())
        runner.start()
        self.assertTrue(entered.wait(60))
        runner.stop()
        self.assertEqual([1], done)

    def test_pool_is_bounded(self):
        tasks = [(periodics._bind('t%d' % i, lambda: None,
                                  periodics._Spec(1, True, False),
                                  self.conf), (), {})
                 for i in range(20)]
        self.assertEqual(
            5, periodics.PeriodicRunner(tasks, max_workers=5)._max_workers)
        self.assertEqual(
            2, periodics.PeriodicRunner(tasks[:2])._max_workers)

    def test_nothing_to_run(self):
        runner = self._runner()
        runner.start()
        self.assertFalse(runner.running)
        runner.stop()

    def test_restart(self):
        runs = threading.Semaphore(0)

        class Job:
            @periodics.periodic(spacing=0.01)
            def job(self):
                runs.release()

        runner = self._runner(Job())
        for _ in range(2):
            runner.start()
            self.assertTrue(runs.acquire(timeout=60))
            runner.stop()
            self.assertFalse(runner.running)
