#!/usr/bin/env python3
"""Deferred actions: many slow BMC operations on a few worker threads.

One conductor (in this process, on a fresh database) runs an emulated
firmware update on each of ``-n`` nodes (default 1,000). The emulated BMC
takes ``--bmc-seconds`` (default 60) per update: its deferrable method
starts a "job" whose deadline is that far ahead, then asks to be called
again (``Reschedule``) every ``--poll`` seconds (default 15, never past
the deadline) until the job is done. Nothing sleeps. The conductor has
``--pool-size`` worker threads (default 8) and runs its launcher every
``--launcher-interval`` seconds (default 0.05).

It prints:

* the wall time until every action is COMPLETED, the calls made, and
  the CPU time of the process (with the machine's load average: on a
  busy machine the wall time follows the CPU the process gets);
* the peak of ``threading.active_count()`` (sampled every 10 ms) against
  the threads before the conductor started: the pool bounds it;
* the database statements each launcher run sent from its own thread,
  grouped by how many actions were waiting (CREATED or RESCHEDULE) when
  the run started: they do not grow with the waiting actions.

Then, unless ``--no-blocking``, the same work with deferral turned off
(the blocking model: the method waits for the BMC job in its worker,
``time.sleep``, one thread per wait): with ``--pool-size`` threads and
``--blocking-nodes`` nodes (default 2 x pool size), then with one
thread per node for all ``-n`` nodes, and the time the pool would take
for ``-n`` nodes, extrapolated from the first run.

Example (PostgreSQL, a database ``alloc_bench_deferred`` is dropped and
created; SQLite when ``--db-url`` is not given)::

    PYTHONPATH=$PWD python benchmarks/deferred_actions_bench.py \\
        --db-url postgresql+psycopg2://postgres@127.0.0.1/test
"""

import argparse
import collections
import math
import os
import re
import statistics
import sys
import tempfile
import threading
import time
import uuid

import sqlalchemy as sa

from alloc_framework.common import context as af_context
from alloc_framework.common import metrics
from alloc_framework.common import states
from alloc_framework.conductor import manager as manager_mod
from alloc_framework import conf as af_conf
from alloc_framework.db import api as db_api
from alloc_framework.db import migration
from alloc_framework.db.sqlalchemy import models
from alloc_framework.drivers import deferred
from alloc_framework.drivers import driver_factory
from alloc_framework.drivers.modules import fake
from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import deferred_action as da

HOST = 'deferred-bench'
CALL = deferred.call_name('firmware', 'bench_update')
BLOCKING_CALL = deferred.call_name('firmware', 'bench_update_blocking')


class EmulatedBMC:
    """BMC jobs that end ``seconds`` after they start."""

    def __init__(self, seconds):
        self.seconds = seconds
        self._jobs = {}
        self._lock = threading.Lock()

    def start_update(self):
        job = uuid.uuid4().hex
        with self._lock:
            self._jobs[job] = time.monotonic() + self.seconds
        return job

    def remaining(self, job):
        """Seconds before the job is done (0 once it is)."""
        with self._lock:
            deadline = self._jobs[job]
        return max(0.0, deadline - time.monotonic())


class EmulatedFirmware(fake.FakeFirmware):
    """A firmware interface driving the emulated BMC."""

    def __init__(self, bmc, poll):
        self.bmc = bmc
        self.poll = poll
        self.calls = 0
        self._lock = threading.Lock()

    def _count(self):
        with self._lock:
            self.calls += 1

    @deferred.deferrable
    def bench_update(self, task, job=None):
        """Start the job, then look at it again later; never sleep."""
        self._count()
        if job is None:
            job = self.bmc.start_update()
        left = self.bmc.remaining(job)
        if left > 0:
            return deferred.Reschedule(delay=min(self.poll, left), job=job)
        return {'job': job, 'status': 'done'}

    @deferred.deferrable
    def bench_update_blocking(self, task):
        """The model deferral replaces: wait for the job in the worker."""
        self._count()
        job = self.bmc.start_update()
        time.sleep(self.bmc.remaining(job))
        return {'job': job, 'status': 'done'}


class _Gauges(metrics.NoopEmitter):
    """Keeps the last value of each gauge the launcher sends."""

    def __init__(self, conf):
        super().__init__(conf)
        self.last = {}

    def send_gauge(self, name, value):
        self.last[name] = value


class ThreadPeak:
    """Samples ``threading.active_count()`` in a thread of its own."""

    def __init__(self):
        self.peak = 0
        self.names = collections.Counter()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.wait(0.01):
            count = threading.active_count()
            if count > self.peak:
                self.peak = count
                self.names = collections.Counter(
                    re.sub(r'-?\d+', '', t.name)
                    for t in threading.enumerate())

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


class QueryCounter:
    """Statements sent by the thread running a launcher run."""

    def __init__(self, engine):
        self.engine = engine
        self._local = threading.local()
        # (actions waiting at the start, statements) of the periodic
        # runs, and the statements of the refills (runs from a worker
        # that freed a thread).
        self.runs = []
        self.refills = []

    def _count(self, conn, cursor, statement, *args):
        if getattr(self._local, 'counting', False):
            self._local.sent += 1

    def wrap(self, launcher):
        launch = launcher.launch
        gauges = launcher.metrics

        def counted(context, refill=False):
            waiting = (gauges.last.get('DeferredActionsPendingCount', 0)
                       + gauges.last.get('DeferredActionsRetryCount', 0))
            self._local.counting, self._local.sent = True, 0
            try:
                return launch(context, refill=refill)
            finally:
                self._local.counting = False
                if refill:
                    self.refills.append(self._local.sent)
                else:
                    self.runs.append((waiting, self._local.sent))
        launcher.launch = counted

    def __enter__(self):
        sa.event.listen(self.engine, 'before_cursor_execute', self._count)
        return self

    def __exit__(self, *exc):
        sa.event.remove(self.engine, 'before_cursor_execute', self._count)


def _drop(args, create=False):
    """Drop the benchmark's database (and create it again)."""
    admin_url = sa.engine.make_url(args.db_url)
    admin = sa.create_engine(admin_url, isolation_level='AUTOCOMMIT')
    with admin.connect() as conn:
        conn.exec_driver_sql('DROP DATABASE IF EXISTS %s%s' % (
            args.db_name, ' WITH (FORCE)'
            if admin.dialect.name == 'postgresql' else ''))
        if create:
            conn.exec_driver_sql('CREATE DATABASE %s' % args.db_name)
    admin.dispose()


def _database(args):
    if args.db_url is None:
        path = os.path.join(tempfile.mkdtemp(prefix='deferred-bench-'),
                            'bench.db')
        return 'sqlite:///' + path
    _drop(args, create=True)
    return sa.engine.make_url(args.db_url).set(
        database=args.db_name).render_as_string(hide_password=False)


def _configure(args, url):
    conf = af_conf.CONF
    conf([], project='alloc_framework')
    conf.set_override('connection', url, group='database')
    conf.set_override('host', HOST)
    conf.set_override('rpc_transport', 'local')
    conf.set_override('check_allocations_interval', 0, group='conductor')
    conf.set_override('check_provision_state_interval', 0,
                      group='conductor')
    if args.no_power_sync:
        # The power state sync reads every node once a minute: work that
        # grows with the nodes, not with the calls.
        conf.set_override('sync_power_state_interval', 0,
                          group='conductor')
    conf.set_override('pool_size', args.pool_size, group='deferred_actions')
    conf.set_override('launcher_interval', args.launcher_interval,
                      group='deferred_actions')
    db_api.configure(conf)
    migration.upgrade('head', engine=db_api.get_engine())
    return conf


def _empty(engine):
    with engine.begin() as conn:
        conn.execute(sa.delete(models.DeferredAction))


def run(conf, ctx, nodes, call, pool_size, bmc_seconds, poll, timeout):
    """One run; returns a dict of what it measured."""
    conf.set_override('pool_size', pool_size, group='deferred_actions')
    bmc = EmulatedBMC(bmc_seconds)
    firmware = EmulatedFirmware(bmc, poll)
    factory = driver_factory.DriverFactory(conf)
    factory.interfaces['firmware']['fake'] = firmware
    engine = db_api.get_engine()
    _empty(engine)
    actions = [objects.DeferredAction.new(ctx, node.id, call)
               for node in nodes]
    threads_before = threading.active_count()
    manager = manager_mod.ConductorManager(HOST, conf,
                                           driver_factory=factory)
    load = os.getloadavg()[0]
    with ThreadPeak() as peak, QueryCounter(engine) as queries:
        started = time.monotonic()
        cpu = time.process_time()
        manager.init_host()
        manager.deferred_actions.metrics = _Gauges(conf)
        queries.wrap(manager.deferred_actions)
        da.create_actions(ctx, actions)
        done = 0
        while time.monotonic() - started < timeout:
            counts = objects.DeferredAction.count_by_state(ctx)
            done = counts.get(da.COMPLETED, 0)
            if done == len(nodes) or counts.get(da.FAILED):
                break
            time.sleep(0.2)  # the benchmark's own loop, not a worker
        elapsed = time.monotonic() - started
        cpu = time.process_time() - cpu
        manager.del_host()
    counts = objects.DeferredAction.count_by_state(ctx)
    return {'elapsed': elapsed, 'counts': counts, 'calls': firmware.calls,
            'threads_before': threads_before, 'peak': peak.peak,
            'names': peak.names, 'cpu': cpu,
            'load': (load, os.getloadavg()[0]),
            'queries': queries.runs, 'refills': queries.refills}


def _bucket(waiting):
    if waiting == 0:
        return 0, '0'
    low = 10 ** int(math.log10(waiting))
    return low, '%d-%d' % (low, low * 10 - 1)


def _print_queries(runs, refills):
    if refills:
        print('  refills (a worker launching as it frees a thread): %d, '
              'statements min %d, median %d, max %d' % (
                  len(refills), min(refills), statistics.median(refills),
                  max(refills)))
    buckets = collections.defaultdict(list)
    for waiting, sent in runs:
        buckets[_bucket(waiting)].append(sent)
    print('  statements per launcher run, by actions waiting (CREATED, '
          'RESCHEDULE, PENDING_RETRY) as the run before counted them:')
    for key in sorted(buckets):
        sent = buckets[key]
        print('    %-9s waiting: %5d runs, statements min %d, median %d, '
              'max %d' % (key[1], len(sent), min(sent),
                          statistics.median(sent), max(sent)))


def _print(title, nodes, pool, result):
    counts = dict(result['counts'])
    print('%s: %d nodes, %d worker threads' % (title, nodes, pool))
    print('  all completed: %s (%s) in %.1f s, %d calls' % (
        counts.get(da.COMPLETED, 0) == nodes, counts, result['elapsed'],
        result['calls']))
    print('  CPU time of this process: %.1f s (machine load average %.1f '
          'at the start, %.1f at the end)' % ((result['cpu'],)
                                              + result['load']))
    print('  threads: %d before the conductor, peak %d (+%d): %s' % (
        result['threads_before'], result['peak'],
        result['peak'] - result['threads_before'],
        ', '.join('%s %d' % item
                  for item in sorted(result['names'].items()))))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--db-url', help='admin URL of a PostgreSQL or '
                        'MariaDB server (default: a SQLite file)')
    parser.add_argument('-n', '--nodes', type=int, default=1000)
    parser.add_argument('--bmc-seconds', type=float, default=60)
    parser.add_argument('--poll', type=float, default=15)
    parser.add_argument('--pool-size', type=int, default=8)
    parser.add_argument('--launcher-interval', type=float, default=0.05)
    parser.add_argument('--timeout', type=float, default=600)
    parser.add_argument('--blocking-nodes', type=int)
    parser.add_argument('--no-blocking', action='store_true')
    parser.add_argument('--no-power-sync', action='store_true',
                        help="turn the conductor's power state sync off")
    parser.add_argument('--db-name', default='alloc_bench_deferred',
                        help='database created (and dropped at the end) '
                        'on the --db-url server')
    args = parser.parse_args(argv)

    url = _database(args)
    try:
        return _main(args, url)
    finally:
        if args.db_url is not None:
            db_api.get_engine().dispose()
            _drop(args)


def _main(args, url):
    conf = _configure(args, url)
    ctx = af_context.get_admin_context()
    print('database: %s' % sa.engine.make_url(url).get_backend_name())
    print('creating %d nodes...' % args.nodes)
    # In one statement: the values Node.create gives a node with only
    # a driver (one transaction per node took minutes for 5,000).
    with db_api.get_engine().begin() as conn:
        conn.execute(sa.insert(models.Node), [dict(
            uuid=str(uuid.uuid4()), driver='fake-hardware',
            provision_state=states.ENROLL, maintenance=False,
            protected=False, retired=False, disable_power_off=False,
            conductor_group='', driver_info={}, driver_internal_info={},
            properties={}, extra={}, instance_info={})
            for _ in range(args.nodes)])
    nodes = objects.Node.list(ctx)

    result = run(conf, ctx, nodes, CALL, args.pool_size, args.bmc_seconds,
                 args.poll, args.timeout)
    _print('deferred (BMC job %.0f s, polled every %.0f s)'
           % (args.bmc_seconds, args.poll), args.nodes, args.pool_size,
           result)
    _print_queries(result['queries'], result['refills'])
    ok = result['counts'].get(da.COMPLETED, 0) == args.nodes
    if args.no_blocking:
        return 0 if ok else 1

    small = args.blocking_nodes or 2 * args.pool_size
    blocking = run(conf, ctx, nodes[:small], BLOCKING_CALL, args.pool_size,
                   args.bmc_seconds, args.poll, args.timeout)
    _print('blocking (the worker waits %.0f s)' % args.bmc_seconds, small,
           args.pool_size, blocking)
    rounds = math.ceil(args.nodes / args.pool_size)
    per_round = blocking['elapsed'] / math.ceil(small / args.pool_size)
    print('  extrapolated to %d nodes: %d rounds of %.1f s = %.0f s' % (
        args.nodes, rounds, per_round, rounds * per_round))
    every = run(conf, ctx, nodes, BLOCKING_CALL, args.nodes,
                args.bmc_seconds, args.poll, args.timeout)
    _print('blocking, one thread per node', args.nodes, args.nodes, every)
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
