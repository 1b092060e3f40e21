"""Periodic tasks: declared with a decorator, run by a futurist worker.

A thin layer over :mod:`futurist.periodics`:

* :func:`periodic` declares a periodic task whose spacing (and whether it
  runs at all) comes from the configuration, which is only known when the
  service starts; a spacing of 0 or less disables the task.
* :func:`collect` finds the declared tasks of an object (a manager, a
  hardware type, an interface, a module) and binds them to the service's
  ``ConfigOpts``; :func:`collect_for_conductor` collects those of a
  conductor manager, of its node allocation backend and of every
  hardware type and interface it loaded.
* :class:`PeriodicRunner` runs the collected tasks with a
  ``futurist.periodics.PeriodicWorker`` in its own thread, on one bounded
  pool shared by all the tasks; :meth:`PeriodicRunner.stop` wakes the
  worker at once, so stopping never waits for a period to end (only for
  runs already under way).

A task that raises is logged and runs again at its next period. The
worker waits on a condition between runs: nothing here sleeps.
"""

import collections
import functools
import inspect
import threading

import futurist
from futurist import periodics as futurist_periodics
from oslo_log import log

LOG = log.getLogger(__name__)

# The attribute :func:`periodic` sets on the functions it declares.
_SPEC_ATTR = '_alloc_periodic'

# Default bound of the pool running periodic tasks. The pool has one
# thread per task up to this bound, so a slow task delays the others only
# when there are more tasks than threads.
DEFAULT_MAX_WORKERS = 8

_Spec = collections.namedtuple('_Spec',
                               ['spacing', 'enabled', 'run_immediately'])


def _resolve(value, conf):
    return value(conf) if callable(value) else value


def periodic(spacing, enabled=True, run_immediately=False):
    """Declare a function or method as a periodic task.

    :param spacing: seconds between the end of a run and the start of the
        next one: a number, or a callable taking the service's
        ``ConfigOpts`` and returning one (read when the service starts,
        e.g. ``lambda conf: conf.conductor.heartbeat_interval``). 0 or
        less disables the task.
    :param enabled: a boolean, or a callable taking the ``ConfigOpts``
        and returning one.
    :param run_immediately: run once as soon as the service starts rather
        than after the first period.
    """
    spec = _Spec(spacing, enabled, run_immediately)

    def decorator(func):
        setattr(func, _SPEC_ATTR, spec)
        return func
    return decorator


def is_periodic(obj):
    """Whether ``obj`` was declared with :func:`periodic`."""
    return callable(obj) and isinstance(getattr(obj, _SPEC_ATTR, None),
                                        _Spec)


def _bind(name, func, spec, conf):
    """A futurist periodic calling ``func``, or None when disabled."""
    spacing = _resolve(spec.spacing, conf)
    if not spacing or spacing <= 0 or not _resolve(spec.enabled, conf):
        LOG.debug('Periodic task %s is disabled', name)
        return None

    @futurist_periodics.periodic(spacing,
                                 run_immediately=spec.run_immediately)
    @functools.wraps(func)
    def task(*args, **kwargs):
        return func(*args, **kwargs)
    # futurist names tasks after their qualified name; keep the owner's.
    task.__qualname__ = name
    return task


def collect(source, conf, args=(), kwargs=None):
    """The enabled periodic tasks of ``source``, ready for the runner.

    Members declared with :func:`periodic` (private ones included) are
    bound to ``conf``; members already decorated with
    ``futurist.periodics.periodic`` are taken as they are.

    :param source: an object, a class or a module.
    :param conf: the service's ``ConfigOpts``.
    :param args: positional arguments every task of ``source`` receives.
    :param kwargs: keyword arguments idem.
    :returns: a list of ``(callable, args, kwargs)``.
    """
    found = []
    owner = getattr(source, '__name__', type(source).__name__)
    # getattr_static: looking for tasks must not run properties.
    for name, static in inspect.getmembers_static(source):
        raw = getattr(static, '__func__', static)
        if is_periodic(raw):
            task = _bind('%s.%s' % (owner, name), getattr(source, name),
                         getattr(raw, _SPEC_ATTR), conf)
        elif futurist_periodics.is_periodic(raw):
            task = getattr(source, name) if raw._is_periodic else None
        else:
            continue
        if task is not None:
            found.append((task, tuple(args), dict(kwargs or {})))
    return found


def driver_objects(driver_factory):
    """The distinct hardware types and interfaces a conductor loaded."""
    seen = set()
    objs = list(driver_factory.hardware_types.values())
    for by_name in driver_factory.interfaces.values():
        objs.extend(by_name.values())
    for obj in objs:
        if id(obj) not in seen:
            seen.add(id(obj))
            yield obj


def collect_for_conductor(manager, context):
    """The periodic tasks of a conductor and of its loaded plugins.

    The manager's own tasks are called with ``(context)``; those of its
    allocation backend, hardware types and interfaces with ``(manager,
    context)``, so that they can lock nodes, ask the hash ring and spawn
    work through the manager.
    """
    found = collect(manager, manager.conf, args=(context,))
    backend = getattr(manager, 'allocation_backend', None)
    if backend is not None:
        found.extend(collect(backend, manager.conf,
                             args=(manager, context)))
    if manager.driver_factory is not None:
        for obj in driver_objects(manager.driver_factory):
            found.extend(collect(obj, manager.conf,
                                 args=(manager, context)))
    return found


class PeriodicRunner:
    """Runs periodic tasks in a background thread until stopped.

    :param tasks: ``(callable, args, kwargs)`` triples from
        :func:`collect`.
    :param name: names the thread (logs, debugging).
    :param max_workers: bound of the pool shared by the tasks.
    """

    def __init__(self, tasks, name='periodics',
                 max_workers=DEFAULT_MAX_WORKERS):
        self.tasks = list(tasks)
        self.name = name
        self._max_workers = max(1, min(len(self.tasks), max_workers))
        self._worker = None
        self._thread = None
        self._executor = None

    @property
    def names(self):
        """Sorted names of the tasks."""
        return sorted(getattr(t, '__qualname__', repr(t))
                      for t, _args, _kwargs in self.tasks)

    @property
    def running(self):
        return self._thread is not None

    def start(self):
        """Start the worker thread; does nothing without tasks."""
        if self._thread is not None or not self.tasks:
            return
        # Each task is scheduled again only once its run ended, so the
        # queue holds at most one entry per task.
        self._executor = futurist.ThreadPoolExecutor(
            max_workers=self._max_workers)
        # last_finished: the spacing is measured from the end of a run,
        # so a slow run never makes the next one start at once.
        self._worker = futurist_periodics.PeriodicWorker(
            self.tasks, log=LOG,
            executor_factory=futurist_periodics.ExistingExecutor(
                self._executor),
            schedule_strategy='last_finished')
        self._thread = threading.Thread(
            target=self._worker.start, kwargs={'allow_empty': True},
            name=self.name, daemon=True)
        self._thread.start()
        LOG.debug('Started periodic tasks %s', ', '.join(self.names))

    def stop(self):
        """Stop the worker and wait for the runs under way to end."""
        if self._thread is None:
            return
        self._worker.stop()
        self._worker.wait()
        self._thread.join()
        # The worker returns once the runs under way ended: the pool is
        # idle. Its threads notice the shutdown at their next idle poll
        # (up to a second later); waiting for that would delay the stop.
        self._executor.shutdown(wait=False)
        self._thread = None
        self._worker = None
        self._executor = None
