#!/usr/bin/env python3
"""Benchmark of the bare metal node Allocation API over HTTP.

Enrolls N ``fake-hardware`` nodes into a running bare metal API (ours or
upstream's: the script speaks only the public REST API), brings them to
``available``, then runs C concurrent clients that create allocations
until the nodes run out. Each client cycles through three kinds of
request: resource class only, resource class plus a trait (a third of the
nodes have it), and resource class plus ten random candidate nodes. It
prints allocations per second, POST-to-``active`` latency (p50, p99) and
the errors; with ``--baseline-url`` it runs the same scenario against a
second server and prints both results and the ratio.

Example::

    python benchmarks/allocation_bench.py --url http://127.0.0.1:6385 \\
        --nodes 1000 --clients 16

See benchmarks/README.md.
"""

import argparse
import collections
import http.client
import json
import random
import re
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse
import uuid

API_VERSION = '1.58'  # allocations (1.52), backfill and owner (1.58/1.60)
TRAIT = 'CUSTOM_BENCH_GPU'
TERMINAL = ('active', 'error')
_UUID_RE = re.compile(
    r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}')


# Answers retried while enrolling (enrollment is not what is
# measured, but the count is printed).
ENROLL_RETRIES = collections.Counter()
_RETRIES_LOCK = threading.Lock()


class Client:
    """A thin, thread-confined client of the bare metal API.

    Plain ``http.client`` on one keep-alive connection: the client shares
    the machine's cores with the server, so it should cost as little as
    possible (``requests`` costs several times more per request).
    """

    def __init__(self, url, token=None, timeout=60):
        parsed = urllib.parse.urlsplit(url)
        self.host = parsed.hostname
        self.port = parsed.port or (443 if parsed.scheme == 'https' else 80)
        self.https = parsed.scheme == 'https'
        self.prefix = parsed.path.rstrip('/')
        self.headers = {
            'X-OpenStack-Ironic-API-Version': API_VERSION,
            'Content-Type': 'application/json',
            'Accept': 'application/json'}
        if token:
            self.headers['X-Auth-Token'] = token
        self.timeout = timeout
        self.conn = None

    def _connect(self):
        cls = (http.client.HTTPSConnection if self.https
               else http.client.HTTPConnection)
        return cls(self.host, self.port, timeout=self.timeout)

    def _request(self, method, path, data):
        for attempt in range(2):
            if self.conn is None:
                self.conn = self._connect()
            try:
                self.conn.request(method, self.prefix + path, body=data,
                                  headers=self.headers)
                resp = self.conn.getresponse()
                return resp.status, resp.read()
            except (http.client.HTTPException, OSError):
                # The server closed an idle keep-alive connection.
                self.conn.close()
                self.conn = None
                if attempt:
                    raise

    def call(self, method, path, body=None, ok=(200, 201, 202, 204),
             retries=0):
        """One request; ``retries`` more attempts on a retriable answer.

        Retriable: a 5xx, and a 409 for a locked node (a conductor still
        finishing the previous action on it), which clients such as
        python-ironicclient retry as well.
        """
        data = json.dumps(body) if body is not None else None
        for attempt in range(retries + 1):
            status, content = self._request(method, path, data)
            if status in ok:
                return json.loads(content) if content else None
            text = content.decode('utf-8', 'replace')
            locked = status == 409 and 'locked' in text.lower()
            if (status < 500 and not locked) or attempt == retries:
                raise RuntimeError('%s %s -> %s %s' % (
                    method, path, status, text[:300]))
            with _RETRIES_LOCK:
                ENROLL_RETRIES[status] += 1
            time.sleep(min(0.05 * (attempt + 1), 0.5))


def _parallel(func, items, workers, client_factory):
    """Run func(client, item) for every item on ``workers`` threads."""
    items = list(items)
    lock = threading.Lock()
    errors = []

    def run(client):
        while True:
            with lock:
                if not items:
                    return
                item = items.pop()
            try:
                func(client, item)
            except Exception as exc:  # reported at the end
                with lock:
                    errors.append(str(exc))

    threads = [threading.Thread(target=run, args=(client_factory(),))
               for _ in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def _wait_state(client, node_uuid, wanted, deadline):
    while time.monotonic() < deadline:
        node = client.call('GET', '/v1/nodes/%s?fields=provision_state,'
                                  'last_error' % node_uuid)
        state = node['provision_state']
        if state == wanted:
            return
        if state in ('enroll', 'clean failed', 'error') and wanted != state:
            raise RuntimeError('node %s ended in %s: %s' % (
                node_uuid, state, node.get('last_error')))
        time.sleep(0.05)
    raise RuntimeError('node %s not %s in time' % (node_uuid, wanted))


def _wait_power(client, node_uuid, deadline):
    while time.monotonic() < deadline:
        node = client.call('GET', '/v1/nodes/%s?fields=power_state'
                           % node_uuid)
        if node['power_state']:
            return
        time.sleep(0.05)
    raise RuntimeError('node %s has no power state in time' % node_uuid)


def enroll(client_factory, count, resource_class, workers, timeout):
    """Create ``count`` nodes and bring them to ``available``."""
    uuids = [str(uuid.uuid4()) for _ in range(count)]
    with_trait = set(uuids[::3])

    def one(client, node_uuid):
        client.call('POST', '/v1/nodes', {
            'uuid': node_uuid, 'driver': 'fake-hardware',
            'resource_class': resource_class,
            'name': 'bench-%s' % node_uuid[:13]})
        if node_uuid in with_trait:
            client.call('PUT', '/v1/nodes/%s/traits/%s' % (node_uuid, TRAIT),
                        retries=30)
        deadline = time.monotonic() + timeout
        client.call('PUT', '/v1/nodes/%s/states/provision' % node_uuid,
                    {'target': 'manage'}, retries=30)
        _wait_state(client, node_uuid, 'manageable', deadline)
        client.call('PUT', '/v1/nodes/%s/states/provision' % node_uuid,
                    {'target': 'provide'}, retries=30)
        _wait_state(client, node_uuid, 'available', deadline)
        # Allocation skips nodes whose power state was never read, and
        # upstream's fake power interface reports none until one is set.
        client.call('PUT', '/v1/nodes/%s/states/power' % node_uuid,
                    {'target': 'power off'}, retries=30)
        _wait_power(client, node_uuid, deadline)

    started = time.monotonic()
    errors = _parallel(one, uuids, workers, client_factory)
    if errors:
        raise RuntimeError('%d nodes failed to enroll, first: %s'
                           % (len(errors), errors[0]))
    return uuids, time.monotonic() - started


class Results:
    def __init__(self):
        self.lock = threading.Lock()
        self.latencies = []
        self.post_latencies = []
        self.polls = 0
        self.by_kind = collections.Counter()
        self.errors = collections.Counter()
        self.allocations = []
        self.exhausted = threading.Event()

    def posted(self, latency, polls):
        with self.lock:
            self.post_latencies.append(latency)
            self.polls += polls

    def ok(self, kind, latency, allocation_uuid):
        with self.lock:
            self.latencies.append(latency)
            self.by_kind[kind] += 1
            self.allocations.append(allocation_uuid)

    def error(self, kind, reason, allocation_uuid=None):
        # Group messages that differ only by the UUIDs they name.
        reason = _UUID_RE.sub('<uuid>', reason)
        with self.lock:
            self.errors['%s: %s' % (kind, reason[:90])] += 1
            if allocation_uuid:
                self.allocations.append(allocation_uuid)


def _await_allocation(client, allocation_uuid, timeout):
    """Poll until the allocation leaves ``allocating``; no busy loop.

    The back-off keeps the polls themselves from loading the server (each
    poll is a full API request) at the cost of a few ms of resolution.

    :returns: the allocation's last body and the number of polls.
    """
    delay = 0.005
    polls = 0
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(delay)
        delay = min(delay * 1.5, 0.1)
        body = client.call('GET', '/v1/allocations/%s?fields=state,'
                                  'last_error' % allocation_uuid)
        polls += 1
        if body['state'] in TERMINAL:
            return body, polls
    return {'state': 'timeout', 'last_error': 'still allocating after %ss'
            % timeout}, polls


def allocate_until_exhausted(client_factory, nodes, resource_class,
                             clients, timeout, max_allocations,
                             duration=None):
    results = Results()
    stop_at = time.monotonic() + duration if duration else None
    counter = iter(range(max_allocations))
    counter_lock = threading.Lock()
    kinds = ('plain', 'traits', 'candidates')

    def worker(index):
        client = client_factory()
        rng = random.Random(index)
        turn = index
        while not results.exhausted.is_set():
            if stop_at is not None and time.monotonic() >= stop_at:
                return
            with counter_lock:
                if next(counter, None) is None:
                    return
            kind = kinds[turn % len(kinds)]
            turn += 1
            body = {'resource_class': resource_class}
            if kind == 'traits':
                body['traits'] = [TRAIT]
            elif kind == 'candidates':
                body['candidate_nodes'] = rng.sample(nodes,
                                                     min(10, len(nodes)))
            started = time.monotonic()
            try:
                created = client.call('POST', '/v1/allocations', body)
                posted = time.monotonic() - started
                final, polls = created, 0
                if created['state'] not in TERMINAL:
                    final, polls = _await_allocation(
                        client, created['uuid'], timeout)
                results.posted(posted, polls)
            except Exception as exc:
                results.error(kind, 'HTTP %s' % exc)
                continue
            latency = time.monotonic() - started
            if final['state'] == 'active':
                results.ok(kind, latency, created['uuid'])
                continue
            reason = final.get('last_error') or final['state']
            results.error(kind, reason, created['uuid'])
            if kind == 'plain' and 'no available nodes' in reason:
                # A plain request found nothing: the pool is exhausted.
                results.exhausted.set()

    started = time.monotonic()
    threads = [threading.Thread(target=worker, args=(i,))
               for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    results.elapsed = time.monotonic() - started
    return results


def cleanup(client_factory, allocations, nodes, workers):
    def drop_allocation(client, allocation_uuid):
        client.call('DELETE', '/v1/allocations/%s' % allocation_uuid,
                    ok=(204, 404))

    def drop_node(client, node_uuid):
        client.call('DELETE', '/v1/nodes/%s' % node_uuid, ok=(204, 404))

    _parallel(drop_allocation, allocations, workers, client_factory)
    _parallel(drop_node, nodes, workers, client_factory)


def _percentile(values, pct):
    if not values:
        return float('nan')
    ordered = sorted(values)
    index = min(len(ordered) - 1, int(round(pct / 100.0 * len(ordered))))
    return ordered[index]


def _summary(url, args, clients, results):
    active = len(results.latencies)
    return {
        'url': url,
        'nodes': args.nodes,
        'clients': clients,
        'active': active,
        'by_kind': dict(results.by_kind),
        'seconds': round(results.elapsed, 3),
        'allocations_per_second': round(active / results.elapsed, 2)
        if results.elapsed else 0.0,
        'latency_p50_ms': round(_percentile(results.latencies, 50) * 1000,
                                1),
        'latency_p99_ms': round(_percentile(results.latencies, 99) * 1000,
                                1),
        'latency_mean_ms': round(statistics.mean(results.latencies) * 1000,
                                 1) if results.latencies else None,
        'post_p50_ms': round(_percentile(results.post_latencies, 50) * 1000,
                             1),
        'polls_per_allocation': round(
            results.polls / len(results.post_latencies), 2)
        if results.post_latencies else None,
        'errors': dict(results.errors),
    }


def machine_reference(loops=3):
    """Seconds a fixed pure-Python loop takes here (best of ``loops``).

    Servers of this kind are bound by the interpreter's speed, which
    differs between machines and, on shared virtual machines, from one
    minute to the next: figures from runs whose reference differs are
    not comparable. Measured while no round is running.
    """
    best = None
    for _ in range(loops):
        started = time.perf_counter()
        total = 0
        for i in range(2000000):
            total += i
        elapsed = time.perf_counter() - started
        best = elapsed if best is None else min(best, elapsed)
    return round(best, 3)


def run(url, args, enroll_workers):
    """Enroll once, then one allocation round per client count.

    Between rounds the allocations are deleted, which makes their nodes
    available again. :returns: a summary per client count.
    """
    def factory():
        return Client(url, token=args.token)

    resource_class = args.resource_class or 'bench-%s' % uuid.uuid4().hex[:8]
    print('== %s: enrolling %d nodes (resource class %s)'
          % (url, args.nodes, resource_class), flush=True)
    nodes, enroll_time = enroll(factory, args.nodes, resource_class,
                                enroll_workers, args.timeout)
    print('   enrolled in %.1fs (answers retried: %s)'
          % (enroll_time, dict(ENROLL_RETRIES) or 'none'), flush=True)
    if args.after_enroll:
        # Before any round: what a deployment's database does on its own
        # after a bulk enrolment (PostgreSQL's autovacuum analyzing the
        # new rows), run here by the caller's command.
        print('   after enrolling: %s' % args.after_enroll, flush=True)
        subprocess.run(args.after_enroll, shell=True, check=True)
    summaries = []
    for index, clients in enumerate(args.clients):
        reference = machine_reference()
        print('== %s: %d clients allocating (machine reference: %.3fs)'
              % (url, clients, reference), flush=True)
        results = allocate_until_exhausted(
            factory, nodes, resource_class, clients, args.timeout,
            max_allocations=args.nodes * 3, duration=args.duration)
        summary = _summary(url, args, clients, results)
        summary['python_loop_seconds'] = reference
        _print(summary)
        summaries.append(summary)
        last = index == len(args.clients) - 1
        if not (last and args.keep):
            cleanup(factory, results.allocations, [], enroll_workers)
    if not args.keep:
        cleanup(factory, [], nodes, enroll_workers)
    return summaries


def _print(summary):
    print('-- %(url)s  N=%(nodes)d C=%(clients)d' % summary)
    print('   active allocations : %(active)d %(by_kind)s' % summary)
    print('   allocations/s      : %(allocations_per_second).2f '
          '(%(seconds).1fs)' % summary)
    print('   POST->active p50   : %(latency_p50_ms).1f ms' % summary)
    print('   POST->active p99   : %(latency_p99_ms).1f ms' % summary)
    print('   POST alone p50     : %(post_p50_ms).1f ms, '
          '%(polls_per_allocation)s polls per allocation' % summary)
    if summary.get('python_loop_seconds'):
        print('   machine reference  : %(python_loop_seconds).3f s '
              '(pure-Python loop before the round)' % summary)
    if summary['errors']:
        print('   errors (expected once nodes run out):')
        for reason, count in sorted(summary['errors'].items(),
                                    key=lambda kv: -kv[1]):
            print('     %6d  %s' % (count, reason))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--url', default='http://127.0.0.1:6385',
                        help='Bare metal API endpoint to measure.')
    parser.add_argument('--baseline-url',
                        help='A second endpoint (e.g. upstream ironic) to '
                             'measure with the same scenario; the ratio '
                             'url/baseline is printed.')
    parser.add_argument('--nodes', '-n', type=int, default=1000,
                        help='Number of nodes to enroll (N).')
    parser.add_argument('--clients', '-c', default=[16],
                        type=lambda v: [int(c) for c in v.split(',')],
                        help='Concurrent allocation clients (C); a comma '
                             'separated list runs one round per value on '
                             'the same nodes.')
    parser.add_argument('--resource-class',
                        help='Resource class of the enrolled nodes '
                             '(default: a fresh random one).')
    parser.add_argument('--enroll-workers', type=int, default=16,
                        help='Threads enrolling and cleaning up nodes.')
    parser.add_argument('--baseline-enroll-workers', type=int,
                        help='Threads enrolling nodes into the baseline '
                             '(default: --enroll-workers).')
    parser.add_argument('--timeout', type=float, default=300,
                        help='Seconds to wait for one node or allocation.')
    parser.add_argument('--duration', type=float,
                        help='Stop starting allocations after this many '
                             'seconds even if nodes remain (for a slow '
                             'server: the rate is measured over the run).')
    parser.add_argument('--token', help='X-Auth-Token to send, if any.')
    parser.add_argument('--after-enroll', metavar='COMMAND',
                        help='Shell command run once the nodes are '
                             'enrolled, before the first round (for '
                             'example the database\'s ANALYZE; see '
                             'allocation_matrix.sh).')
    parser.add_argument('--keep', action='store_true',
                        help='Keep nodes and allocations afterwards.')
    parser.add_argument('--json', action='store_true',
                        help='Also print the results as JSON.')
    args = parser.parse_args(argv)

    ours = run(args.url, args, args.enroll_workers)
    base = []
    if args.baseline_url:
        base = run(args.baseline_url, args,
                   args.baseline_enroll_workers or args.enroll_workers)
    print()
    for summary in ours + base:
        _print(summary)
    for mine, theirs in zip(ours, base):
        print('C=%d ratio allocations/s : %s' % (
            mine['clients'],
            '%.1fx' % (mine['allocations_per_second']
                       / theirs['allocations_per_second'])
            if theirs['allocations_per_second'] else 'n/a (baseline 0)'))
        if mine['latency_p50_ms'] and theirs['latency_p50_ms']:
            print('C=%d ratio p50 latency   : %.1fx lower' % (
                mine['clients'],
                theirs['latency_p50_ms'] / mine['latency_p50_ms']))
    summaries = ours + base
    if args.json:
        print(json.dumps(summaries, indent=2))
    return 0


if __name__ == '__main__':
    sys.exit(main())
