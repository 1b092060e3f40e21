#!/usr/bin/env python3
"""Benchmark: one allocation group of G nodes against G single allocations.

Starts ``alloc-server`` (the bare metal API and its conductor in one
process, the default configuration) on a fresh database, enrolls N
``fake-hardware`` nodes through the API with the helpers of
``allocation_bench.py``, then, in the same run and against the same
pool, for each of ``--repeat`` passes:

* **group**: ``POST /v1/allocation_groups`` with one member of G nodes
  of the pool's resource class, then ``GET`` of the group until it
  leaves ``allocating`` (polled as ``allocation_bench.py`` polls an
  allocation: after 5 ms, backing off by 1.5x up to 100 ms); the time
  from the POST to ``active`` as seen through the API;
* **sequential**: G single allocations (resource class only), one after
  the other, each POSTed and polled until ``active``; the time from the
  first POST to the last ``active``;
* **concurrent**: the same G single allocations made by C client threads
  (``allocation_bench.py``'s default of 16).

Each step's allocations (or the group) are deleted before the next
step, so every step starts from the same pool: all N nodes available.
Prints the times, the load average and a machine reference before each
step.

Examples::

    PYTHONPATH=$PWD python benchmarks/allocation_group_bench.py   # SQLite
    PYTHONPATH=$PWD python benchmarks/allocation_group_bench.py \\
        --db-url postgresql+psycopg2://postgres@127.0.0.1/postgres

See benchmarks/README.md.
"""

import argparse
import datetime
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid

import sqlalchemy as sa

import allocation_bench as ab

DB_NAME = 'alloc_bench_group'


def _free_port():
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


class Server:
    """A fresh database and one ``alloc-server`` with default options."""

    def __init__(self, db_url, keep=False):
        self.dir = tempfile.mkdtemp(prefix='group-bench-')
        self.keep = keep
        self.admin = None
        if db_url is None:
            self.db_url = 'sqlite:///' + os.path.join(self.dir, 'bench.db')
        else:
            admin_url = sa.engine.make_url(db_url)
            self.admin = sa.create_engine(admin_url,
                                          isolation_level='AUTOCOMMIT')
            self._drop()
            with self.admin.connect() as conn:
                conn.exec_driver_sql('CREATE DATABASE %s' % DB_NAME)
            self.db_url = admin_url.set(database=DB_NAME).render_as_string(
                hide_password=False)
        self.port = _free_port()
        self.proc = None

    def _drop(self):
        with self.admin.connect() as conn:
            conn.exec_driver_sql('DROP DATABASE IF EXISTS %s%s' % (
                DB_NAME, ' WITH (FORCE)'
                if self.admin.dialect.name == 'postgresql' else ''))

    @property
    def url(self):
        return 'http://127.0.0.1:%d' % self.port

    def start(self, timeout=120):
        config = os.path.join(self.dir, 'server.conf')
        with open(config, 'w') as f:
            f.write('\n'.join([
                '[DEFAULT]', 'host = group-bench', 'state_path = %s'
                % self.dir, 'log_file = %s'
                % os.path.join(self.dir, 'server.log'),
                '[database]', 'connection = %s' % self.db_url,
                '[api]', 'host_ip = 127.0.0.1', 'port = %d' % self.port,
                '[placement_api]', 'host_ip = 127.0.0.1',
                'port = %d' % _free_port()]) + '\n')
        from alloc_framework.db import api as db_api
        from alloc_framework.db import migration
        engine = db_api.create_engine(self.db_url)
        migration.upgrade('head', engine=engine)
        engine.dispose()
        self.proc = subprocess.Popen(
            [sys.executable, '-c',
             'import sys; from alloc_framework.cmd import server; '
             'sys.exit(server.main())', '--config-file', config],
            stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(self.dir, 'server.err'), 'w'),
            start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError('alloc-server exited, see %s' % self.dir)
            try:
                ab.Client(self.url).call('GET', '/v1')
                return
            except (OSError, RuntimeError):
                time.sleep(0.5)
        raise RuntimeError('alloc-server did not answer, see %s' % self.dir)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        if self.admin is not None:
            if not self.keep:
                self._drop()
            self.admin.dispose()
        if not self.keep:
            shutil.rmtree(self.dir, ignore_errors=True)


def _machine(note):
    load = os.getloadavg()
    reference = ab.machine_reference()
    print('== %s (load average %.2f %.2f %.2f, machine reference %.3f s)'
          % ((note,) + load + (reference,)), flush=True)
    return {'load_average': [round(v, 2) for v in load],
            'python_loop_seconds': reference}


def group_step(client, resource_class, size, timeout):
    """POST one group of ``size`` nodes and poll it until it is done."""
    started = time.monotonic()
    created = client.call('POST', '/v1/allocation_groups', {
        'members': [{'count': size, 'resource_class': resource_class}]})
    posted = time.monotonic() - started
    path = '/v1/allocation_groups/%s' % created['uuid']
    delay, polls, body = 0.005, 0, created
    deadline = started + timeout
    while body['state'] == 'allocating' and time.monotonic() < deadline:
        time.sleep(delay)
        delay = min(delay * 1.5, 0.1)
        body = client.call('GET', path)
        polls += 1
    elapsed = time.monotonic() - started
    if body['state'] != 'active':
        raise RuntimeError('group %s ended %s: %s' % (
            created['uuid'], body['state'], body.get('last_error')))
    if len(body['allocations']) != size:
        raise RuntimeError('group %s active with %d allocations, not %d'
                           % (created['uuid'], len(body['allocations']),
                              size))
    # The server's own view: the group's creation to its last update
    # (becoming active), without the polling's resolution. MariaDB keeps
    # whole seconds: no figure there.
    born, done = (datetime.datetime.fromisoformat(body[key])
                  for key in ('created_at', 'updated_at'))
    server = None
    if born.microsecond or done.microsecond:
        server = round((done - born).total_seconds(), 3)
    released = time.monotonic()
    client.call('DELETE', path)
    return {'seconds': round(elapsed, 3), 'post_ms': round(posted * 1e3, 1),
            'polls': polls,
            'server_seconds': server,
            'delete_seconds': round(time.monotonic() - released, 3)}


def singles_step(factory, resource_class, size, clients, timeout, workers):
    """``size`` single allocations made by ``clients`` threads."""
    lock = threading.Lock()
    todo = iter(range(size))
    latencies, made, failures = [], [], []

    def worker():
        client = factory()
        while True:
            with lock:
                if next(todo, None) is None:
                    return
            started = time.monotonic()
            created = client.call('POST', '/v1/allocations',
                                  {'resource_class': resource_class})
            final = created
            if created['state'] not in ab.TERMINAL:
                final, _polls = ab._await_allocation(
                    client, created['uuid'], timeout)
            with lock:
                made.append(created['uuid'])
                if final['state'] == 'active':
                    latencies.append(time.monotonic() - started)
                else:
                    failures.append(final.get('last_error')
                                    or final['state'])

    threads = [threading.Thread(target=worker) for _ in range(clients)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - started
    ab.cleanup(factory, made, [], workers)
    if failures:
        raise RuntimeError('%d of %d allocations failed, first: %s'
                           % (len(failures), size, failures[0]))
    if len(latencies) != size:
        raise RuntimeError('%d of %d allocations made' % (len(latencies),
                                                          size))
    return {'seconds': round(elapsed, 3),
            'p50_ms': round(ab._percentile(latencies, 50) * 1e3, 1),
            'p99_ms': round(ab._percentile(latencies, 99) * 1e3, 1)}


def run(args, url):
    def factory():
        return ab.Client(url)

    resource_class = 'bench-%s' % uuid.uuid4().hex[:8]
    _machine('enrolling %d nodes (resource class %s)'
             % (args.nodes, resource_class))
    nodes, enroll_time = ab.enroll(factory, args.nodes, resource_class,
                                   args.enroll_workers, args.timeout)
    print('   enrolled in %.1f s' % enroll_time, flush=True)
    client = factory()
    results = []
    for index in range(args.repeat):
        row = {'pass': index + 1}
        row['group_machine'] = _machine(
            'pass %d: a group of %d' % (index + 1, args.group_size))
        row['group'] = group_step(client, resource_class, args.group_size,
                                  args.timeout)
        server = row['group']['server_seconds']
        print('   POST->active %(seconds).3f s (POST %(post_ms).1f ms, '
              '%(polls)d polls; created->active in the server %(server)s; '
              'DELETE %(delete_seconds).3f s)'
              % dict(row['group'], server='n/a' if server is None
                     else '%.3f s' % server), flush=True)
        for clients in args.clients:
            key = 'singles_c%d' % clients
            row[key + '_machine'] = _machine(
                'pass %d: %d single allocations, %d client%s'
                % (index + 1, args.group_size, clients,
                   's' if clients > 1 else ''))
            row[key] = singles_step(factory, resource_class,
                                    args.group_size, clients, args.timeout,
                                    args.enroll_workers)
            print('   first POST->last active %(seconds).3f s '
                  '(each: p50 %(p50_ms).1f ms, p99 %(p99_ms).1f ms)'
                  % row[key], flush=True)
        results.append(row)
    ab.cleanup(factory, [], nodes, args.enroll_workers)
    return results


def _summary(args, results):
    print()
    print('N=%d, G=%d, %d passes; seconds from the first POST to the '
          'last active:' % (args.nodes, args.group_size, len(results)))
    keys = ['group'] + ['singles_c%d' % c for c in args.clients]
    for key in keys:
        times = [row[key]['seconds'] for row in results]
        print('  %-12s %s  (best %.3f s)' % (
            key, ' '.join('%.3f' % t for t in times), min(times)))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--db-url',
                        help='An administrative URL of a PostgreSQL or '
                             'MariaDB server: the database %s is dropped '
                             'and created there. Default: a new SQLite '
                             'file.' % DB_NAME)
    parser.add_argument('--nodes', '-n', type=int, default=1000,
                        help='Nodes to enroll (N).')
    parser.add_argument('--group-size', '-g', type=int, default=100,
                        help='Nodes in the group, and single allocations '
                             'per step (G).')
    parser.add_argument('--clients', '-c', default=[1, 16],
                        type=lambda v: [int(c) for c in v.split(',')],
                        help='Client threads of the single-allocation '
                             'steps, one step per value (default 1,16).')
    parser.add_argument('--repeat', '-r', type=int, default=3,
                        help='Passes over the steps on the same nodes.')
    parser.add_argument('--enroll-workers', type=int, default=16,
                        help='Threads enrolling and cleaning up.')
    parser.add_argument('--timeout', type=float, default=300,
                        help='Seconds to wait for a node, an allocation '
                             'or the group.')
    parser.add_argument('--keep', action='store_true',
                        help='Keep the database and the server\'s '
                             'directory (its log) afterwards.')
    parser.add_argument('--json', action='store_true',
                        help='Also print the results as JSON.')
    args = parser.parse_args(argv)
    if args.group_size > args.nodes:
        parser.error('--group-size must not exceed --nodes')

    server = Server(args.db_url, keep=args.keep)
    try:
        server.start()
        print('alloc-server on %s, database %s, files in %s'
              % (server.url, server.db_url.split('@')[-1], server.dir),
              flush=True)
        results = run(args, server.url)
    finally:
        server.stop()
    _summary(args, results)
    if args.json:
        print(json.dumps(results, indent=2))
    return 0


if __name__ == '__main__':
    sys.exit(main())
