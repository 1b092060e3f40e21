#!/usr/bin/env python3
"""A conductor killed while clients allocate: what the clients pay.

Starts the split deployment on this machine: one ``alloc-api`` and
``--conductors`` ``alloc-conductor`` processes (default 3) over RabbitMQ,
on a throwaway PostgreSQL (or, with ``--db-url``, MariaDB) database. It
enrolls ``-n`` ``fake-hardware`` nodes through the API (default 300),
then ``-c`` client threads (default 16) create allocations (resource
class only, so each one can succeed) and poll them until they leave
``allocating``, until every node is allocated. When a third of the nodes
have been asked for (``--kill-after``), one conductor is killed with
SIGKILL: its whole process group, as when its host dies (the service
runs in a child process, which exits cleanly, unregistering, when only
its parent is killed).

Meanwhile one thread updates (PATCH ``extra``) a node that the hash ring
maps to the killed conductor, once a second, until it succeeds: node
operations wait for the ring to move the node to a live conductor.

At the end it waits until no allocation is ``allocating`` (the live
conductors take over those of the dead one) and prints:

* the creations (POST) answered per status, and their latency
  distribution (p50, p90, p99, max), also for those sent after the kill;
* POST-to-``active`` latency;
* the node updates: status and latency of each attempt;
* the data check: nodes allocated twice, allocations left
  ``allocating``, nodes and allocations that disagree.

Example (the checkout's code, with the Python that has its
requirements)::

    PYTHONPATH=$PWD python benchmarks/conductor_failover_bench.py

Options of the services can be set with ``--set GROUP.OPTION=VALUE``
(for example ``--set conductor.heartbeat_timeout=20``); unknown options
are ignored by the services, so one command line measures code before
and after an option exists. It drops its database at the end, and the
RabbitMQ queues of its conductors (named ``failover-bench-<run>-<n>``).
"""

import argparse
import collections
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid

import kombu
import sqlalchemy as sa

import allocation_bench


def _percentiles(values):
    if not values:
        return 'none'
    pct = allocation_bench._percentile
    return ('p50 %.0f ms, p90 %.0f ms, p99 %.0f ms, max %.0f ms (%d)' % (
        pct(values, 50) * 1e3, pct(values, 90) * 1e3, pct(values, 99) * 1e3,
        max(values) * 1e3, len(values)))


class Deployment:
    """The database, the API and the conductors of one run."""

    def __init__(self, args):
        self.args = args
        self.run = uuid.uuid4().hex[:8]
        self.dir = tempfile.mkdtemp(prefix='failover-bench-')
        self.db_name = 'alloc_failover_%s' % self.run
        admin = sa.engine.make_url(args.db_url)
        self.admin = sa.create_engine(admin, isolation_level='AUTOCOMMIT')
        self.db_url = admin.set(database=self.db_name).render_as_string(
            hide_password=False)
        self.hosts = ['failover-bench-%s-%d' % (self.run, i)
                      for i in range(args.conductors)]
        self.port = args.port
        self.procs = {}

    def _config(self, name, host):
        lines = ['[DEFAULT]', 'host = %s' % host,
                 'state_path = %s' % self.dir,
                 'rpc_transport = oslo',
                 'transport_url = %s' % self.args.transport_url,
                 'log_file = %s' % os.path.join(self.dir, name + '.log'),
                 '[database]', 'connection = %s' % self.db_url,
                 '[api]', 'port = %d' % self.port]
        groups = collections.defaultdict(list)
        for item in self.args.set:
            key, _sep, value = item.partition('=')
            group, _dot, option = key.rpartition('.')
            groups[group or 'DEFAULT'].append('%s = %s' % (option, value))
        for group, options in groups.items():
            lines.append('[%s]' % group)
            lines.extend(options)
        path = os.path.join(self.dir, name + '.conf')
        with open(path, 'w') as f:
            f.write('\n'.join(lines) + '\n')
        return path

    def _spawn(self, name, command, host):
        config = self._config(name, host)
        self.procs[name] = subprocess.Popen(
            [sys.executable, '-c',
             'import sys; from alloc_framework.cmd import %s as cmd; '
             'sys.exit(cmd.main())' % command, '--config-file', config],
            stdout=subprocess.DEVNULL, stderr=open(
                os.path.join(self.dir, name + '.err'), 'w'),
            start_new_session=True)

    def start(self):
        with self.admin.connect() as conn:
            conn.exec_driver_sql('CREATE DATABASE %s' % self.db_name)
        from alloc_framework.db import api as db_api
        from alloc_framework.db import migration
        engine = db_api.create_engine(self.db_url)
        migration.upgrade('head', engine=engine)
        engine.dispose()
        self.engine = sa.create_engine(self.db_url)
        for index, host in enumerate(self.hosts):
            self._spawn('conductor-%d' % index, 'conductor', host)
        self._spawn('api', 'api', 'failover-bench-%s-api' % self.run)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            for name, proc in self.procs.items():
                if proc.poll() is not None:
                    raise RuntimeError('%s exited, see %s' % (name,
                                                              self.dir))
            with self.engine.connect() as conn:
                alive = conn.execute(sa.text(
                    'SELECT count(*) FROM conductors WHERE online')).scalar()
            if alive == len(self.hosts) and self._api_answers():
                return
            time.sleep(0.5)
        raise RuntimeError('the deployment did not start, see %s'
                           % self.dir)

    def _api_answers(self):
        try:
            allocation_bench.Client(self.url).call('GET', '/v1')
            return True
        except (OSError, RuntimeError):
            return False

    @property
    def url(self):
        return 'http://127.0.0.1:%d' % self.port

    def kill(self, index):
        # The whole process group: the service runs in a child process,
        # which exits gracefully (and unregisters) when only its parent
        # is killed.
        os.killpg(self.procs['conductor-%d' % index].pid, signal.SIGKILL)

    def stop(self):
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs.values():
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        self.engine.dispose()
        with self.admin.connect() as conn:
            conn.exec_driver_sql('DROP DATABASE IF EXISTS %s%s' % (
                self.db_name, ' WITH (FORCE)'
                if self.admin.dialect.name == 'postgresql' else ''))
        self.admin.dispose()
        # oslo.messaging's rabbit:// is kombu's amqp://.
        url = self.args.transport_url
        if url.startswith('rabbit://'):
            url = 'amqp://' + url[len('rabbit://'):]
        with kombu.Connection(url) as conn:
            channel = conn.channel()
            for host in self.hosts:
                channel.queue_delete('alloc_framework.conductor.' + host)

    def check(self):
        """Nodes allocated twice, allocations left allocating, mismatches."""
        with self.engine.connect() as conn:
            states = {state: count for state, count in conn.execute(
                sa.text('SELECT state, count(*) FROM node_allocations '
                        'GROUP BY state'))}
            twice = conn.execute(sa.text(
                'SELECT count(*) FROM (SELECT node_id FROM node_allocations '
                'WHERE node_id IS NOT NULL GROUP BY node_id '
                'HAVING count(*) > 1) AS t')).scalar()
            mismatched = conn.execute(sa.text(
                'SELECT count(*) FROM node_allocations a JOIN nodes n '
                'ON n.id = a.node_id WHERE n.allocation_id <> a.id '
                'OR n.instance_uuid <> a.uuid')).scalar()
            orphans = conn.execute(sa.text(
                'SELECT count(*) FROM nodes n WHERE n.allocation_id IS NOT '
                'NULL AND NOT EXISTS (SELECT 1 FROM node_allocations a WHERE '
                'a.id = n.allocation_id AND a.node_id = n.id)')).scalar()
            nodeless = conn.execute(sa.text(
                "SELECT count(*) FROM node_allocations WHERE state = "
                "'active' AND node_id IS NULL")).scalar()
        return {'allocations_by_state': states,
                'nodes_allocated_twice': twice,
                'allocation_node_mismatches': mismatched,
                'nodes_with_a_foreign_allocation': orphans,
                'active_allocations_without_node': nodeless}

    def allocating(self):
        with self.engine.connect() as conn:
            return conn.execute(sa.text(
                "SELECT count(*) FROM node_allocations WHERE state = "
                "'allocating'")).scalar()


class Round:
    """The clients, the kill and the node updates of one run."""

    def __init__(self, deployment, args, nodes, resource_class):
        self.dep = deployment
        self.args = args
        self.nodes = nodes
        self.resource_class = resource_class
        self.lock = threading.Lock()
        self.asked = 0
        self.active = 0
        self.posts = []         # (sent at, latency, status)
        self.to_active = []
        self.node_updates = []  # (sent at, latency, status, message)
        self.errors = collections.Counter()
        self.killed_at = None
        self.killed = threading.Event()
        # A request found no node: nodes went to allocations whose POST
        # was not answered 201 (created by a conductor that then died).
        self.exhausted = threading.Event()
        self.done = threading.Event()

    def _client(self):
        return allocation_bench.Client(self.dep.url, timeout=600)

    def _allocate(self, index):
        client = self._client()
        while not self.exhausted.is_set():
            with self.lock:
                if self.active + self._pending >= len(self.nodes):
                    return
                self._pending += 1
                self.asked += 1
                kill = (self.asked == self.args.kill_after)
            if kill:
                self.killed_at = time.monotonic()
                self.dep.kill(self.args.victim)
                self.killed.set()
            started = time.monotonic()
            status, content = client._request(
                'POST', '/v1/allocations',
                json.dumps({'resource_class': self.resource_class}))
            posted = time.monotonic() - started
            with self.lock:
                self.posts.append((started, posted, status))
            state = None
            if status == 201:
                created = json.loads(content)
                final, _polls = created, 0
                if created['state'] != 'active':
                    final, _polls = allocation_bench._await_allocation(
                        client, created['uuid'], self.args.timeout)
                state = final['state']
                if state != 'active':
                    reason = final.get('last_error') or ''
                    self._error('allocation %s: %s' % (state, reason))
                    if 'no available nodes' in reason.lower():
                        self.exhausted.set()
            else:
                self._error('POST %d: %s' % (status, content.decode()[:150]))
            with self.lock:
                self._pending -= 1
                if state == 'active':
                    self.active += 1
                    self.to_active.append(time.monotonic() - started)

    def _error(self, reason):
        reason = allocation_bench._UUID_RE.sub('<uuid>', reason)
        with self.lock:
            self.errors[reason] += 1

    def _update_victim_node(self, node_uuid):
        client = self._client()
        while not self.killed.wait(0.5):
            if self.done.is_set():
                return
        while True:
            started = time.monotonic()
            status, content = client._request(
                'PATCH', '/v1/nodes/%s' % node_uuid, json.dumps(
                    [{'op': 'add', 'path': '/extra/bench',
                      'value': str(started)}]))
            message = ''
            if status != 200:
                try:
                    message = json.loads(json.loads(content)[
                        'error_message'])['faultstring']
                except (ValueError, KeyError):
                    message = content.decode()[:150]
            self.node_updates.append((started, time.monotonic() - started,
                                      status, message))
            if status == 200:
                return
            time.sleep(1)

    def run(self):
        self._pending = 0
        victim_host = self.dep.hosts[self.args.victim]
        client = self._client()
        victim_node = None
        for node_uuid in self.nodes:
            node = client.call('GET', '/v1/nodes/%s?fields=conductor'
                               % node_uuid)
            if node['conductor'] == victim_host:
                victim_node = node_uuid
                break
        threads = [threading.Thread(target=self._allocate, args=(i,))
                   for i in range(self.args.clients)]
        if victim_node:
            threads.append(threading.Thread(target=self._update_victim_node,
                                            args=(victim_node,)))
        started = time.monotonic()
        for t in threads:
            t.start()
        for t in threads[:self.args.clients]:
            t.join()
        self.elapsed = time.monotonic() - started
        self.done.set()
        for t in threads[self.args.clients:]:
            t.join()
        settle = time.monotonic()
        while self.dep.allocating() and (time.monotonic() - settle
                                         < self.args.timeout):
            time.sleep(0.5)
        self.settled = time.monotonic() - settle

    def report(self):
        killed_at = self.killed_at or float('inf')
        statuses = collections.Counter(s for _t, _l, s in self.posts)
        after = [lat for t, lat, _s in self.posts if t >= killed_at]
        print('-- N=%d nodes, %d clients, %d conductors, conductor %d '
              'killed after %d requests' % (
                  len(self.nodes), self.args.clients, self.args.conductors,
                  self.args.victim, self.args.kill_after))
        print('   round              : %.1f s, %d allocations active'
              % (self.elapsed, self.active))
        print('   POST answers       : %s' % dict(sorted(statuses.items())))
        print('   POST latency       : %s'
              % _percentiles([lat for _t, lat, _s in self.posts]))
        print('   ... after the kill : %s' % _percentiles(after))
        slow = sorted(lat for lat in after if lat >= 1)
        print('   ... of them >= 1 s : %s' % (
            ', '.join('%.1f s' % lat for lat in slow) or 'none'))
        print('   POST->active       : %s' % _percentiles(self.to_active))
        print('   node updates of a node of the killed conductor '
              '(seconds after the kill: status, latency):')
        for sent, latency, status, message in self.node_updates:
            print('     %5.1f s: %d in %.2f s %s' % (
                sent - killed_at, status, latency, message[:110]))
        print('   allocating left    : settled %.1f s after the round'
              % self.settled)
        if self.errors:
            print('   errors:')
            for reason, count in self.errors.most_common():
                print('     %5d  %s' % (count, reason))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--nodes', '-n', type=int, default=300)
    parser.add_argument('--clients', '-c', type=int, default=16)
    parser.add_argument('--conductors', type=int, default=3)
    parser.add_argument('--victim', type=int, default=0,
                        help='Index of the conductor to kill.')
    parser.add_argument('--kill-after', type=int,
                        help='Kill it when this many allocations were '
                             'asked for (default: a third of the nodes).')
    parser.add_argument('--db-url',
                        default='postgresql+psycopg2://postgres@127.0.0.1'
                                ':5432/postgres',
                        help='An administrative URL of the database '
                             'server; a database is created and dropped.')
    parser.add_argument('--transport-url',
                        default='rabbit://guest:guest@127.0.0.1:5672/')
    parser.add_argument('--port', type=int, default=6395,
                        help='Port of the bare metal API.')
    parser.add_argument('--set', action='append', default=[],
                        metavar='GROUP.OPTION=VALUE',
                        help='An option for every service (repeatable).')
    parser.add_argument('--timeout', type=float, default=300,
                        help='Seconds to wait for an allocation, and for '
                             'the last ones to leave allocating.')
    parser.add_argument('--keep-logs', action='store_true',
                        help='Print the directory with the logs.')
    args = parser.parse_args(argv)
    if args.kill_after is None:
        args.kill_after = max(1, args.nodes // 3)

    dep = Deployment(args)
    print('== starting 1 API and %d conductors (%s)' % (args.conductors,
                                                        dep.dir), flush=True)
    dep.start()
    try:
        def factory():
            return allocation_bench.Client(dep.url, timeout=600)
        resource_class = 'failover-%s' % dep.run
        print('== enrolling %d nodes' % args.nodes, flush=True)
        nodes, took = allocation_bench.enroll(factory, args.nodes,
                                              resource_class, 16, 300)
        print('   enrolled in %.1f s' % took, flush=True)
        print('== %d clients allocating (machine reference %.3f s)'
              % (args.clients, allocation_bench.machine_reference()),
              flush=True)
        rnd = Round(dep, args, nodes, resource_class)
        rnd.run()
        rnd.report()
        check = dep.check()
        print('   data check         : %s'
              % json.dumps(check, sort_keys=True))
    finally:
        dep.stop()
        if args.keep_logs:
            print('logs: %s' % dep.dir)
    return 0


if __name__ == '__main__':
    sys.exit(main())
