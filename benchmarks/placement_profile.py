#!/usr/bin/env python3
"""The CPU one allocation candidates request costs, in process.

Calls the Placement WSGI application in this process (no HTTP, no
server) over the topology of ``placement_bench.py`` and prints, for each
query of its flat or scheduler set, the CPU time of this process per
request (p50; on SQLite the database's work is in it, on PostgreSQL and
MariaDB it is not), the wall time, the size of the answer and the
process's peak resident memory; ``--profile N`` prints instead the N
costliest functions of 3 requests (cProfile, CPU time). ``--claims N``
times instead N claims (candidates with ``limit=10``, then a ``PUT`` of
the first), each half's CPU, wall time and SQL statements::

    .venv/bin/python benchmarks/placement_profile.py --db sqlite --size 1000
    .venv/bin/python benchmarks/placement_profile.py --db postgresql \\
        --size 10000 --names plain --profile 30

CPU time per request is what the Python of a request costs, and it
varies far less with the load of a shared machine than wall time. The
database (``--db-name``, a file of ``--workdir`` on SQLite) is created
and filled at the first run and kept for the next ones (``--fresh``
creates it again); ``--drop`` drops it after the run. See README.md.
"""

import argparse
import cProfile
import io
import json
import os
import pstats
import resource
import statistics
import subprocess
import sys
import time
import uuid

import placement_bench as bench
import sqlalchemy
import webob


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--db', default='sqlite',
                        choices=sorted(bench.DB_URLS))
    parser.add_argument('--size', type=int, default=1000,
                        help='flat providers (default 1000)')
    parser.add_argument('--queries', default='flat',
                        choices=sorted(bench.QUERY_SETS))
    parser.add_argument('--names', help='only these queries (a,b,...)')
    parser.add_argument('--reps', type=int, default=7)
    parser.add_argument('--profile', type=int, metavar='N',
                        help='print the N costliest functions instead')
    parser.add_argument('--claims', type=int, metavar='N',
                        help='time N claims (the claim of placement_bench: '
                        'candidates with limit=10, then a PUT of the '
                        'first) instead of the queries')
    parser.add_argument('--db-name', default='placement_profile')
    parser.add_argument('--workdir', default='placement-profile')
    parser.add_argument('--fresh', action='store_true')
    parser.add_argument('--drop', action='store_true')
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    workdir = os.path.abspath(os.path.join(args.workdir, '%s-%d' % (
        args.db, args.size)))
    os.makedirs(workdir, exist_ok=True)
    url = bench.DB_URLS[args.db] % (
        os.path.join(workdir, args.db_name) if args.db == 'sqlite'
        else args.db_name)
    conf = os.path.join(workdir, 'alloc.conf')
    bench.write_conf(conf, {
        'DEFAULT': {'debug': 'false', 'state_path': workdir},
        'database': {'connection': url},
        'placement_api': {'auth_strategy': 'noauth'}})
    marker = os.path.join(workdir, 'populated')
    fresh = args.fresh or not os.path.exists(marker)
    if fresh:
        if args.db == 'sqlite':
            if os.path.exists(url[len('sqlite:///'):]):
                os.remove(url[len('sqlite:///'):])
        else:
            bench.recreate_database(args.db, args.db_name, workdir)
        subprocess.check_call(
            [os.path.join(os.path.dirname(sys.executable), 'alloc-manage'),
             '--config-file', conf, 'db', 'sync'], stdout=subprocess.DEVNULL)
    os.environ['ALLOC_CONFIG_FILE'] = conf
    from alloc_framework.wsgi import placement as wsgi_placement
    app = wsgi_placement.init_application()

    def get(method, path, body=None):
        req = webob.Request.blank(path, method=method)
        req.headers.update({'X-Auth-Token': 'admin',
                            'Accept': 'application/json',
                            'OpenStack-API-Version': bench.MICROVERSION})
        if body is not None:
            req.content_type = 'application/json'
            req.body = json.dumps(body).encode()
        resp = req.get_response(app)
        body = resp.body
        return resp.status_code, body

    topo = bench.Topology(args.size)
    if fresh:
        for trait in bench.CUSTOM_TRAITS:
            get('PUT', '/traits/%s' % trait)
        bench.populate(url, topo)
        open(marker, 'w').close()
    print('%s; %d flat providers on %s; load %s; machine reference %.3f s'
          % (time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime()), args.size,
             args.db, ' '.join('%.1f' % x for x in os.getloadavg()),
             bench.machine_reference()), flush=True)
    if args.claims:
        run_claims(args, get)
        if args.drop:
            drop(args.db, args.db_name, url, workdir)
        return
    aggs = {'agg%d' % i: bench.name_uuid('agg%d' % i) for i in range(10)}
    queries = bench.QUERY_SETS[args.queries]
    if args.names:
        wanted = args.names.split(',')
        queries = [(n, q) for n, q in queries if n in wanted]
    for name, query in queries:
        path = '/allocation_candidates?' + query.format(**aggs)
        for _ in range(2):
            status, body = get('GET', path)
        if status != 200:
            raise RuntimeError('%s: %s %s' % (name, status, body[:500]))
        if args.profile:
            profile = cProfile.Profile(time.process_time)
            profile.enable()
            for _ in range(3):
                get('GET', path)
            profile.disable()
            out = io.StringIO()
            pstats.Stats(profile, stream=out).sort_stats(
                'tottime').print_stats(args.profile)
            print('==', name, '(3 requests, CPU seconds)')
            print(out.getvalue())
            continue
        cpu, wall = [], []
        for _ in range(args.reps):
            cpu0, wall0 = time.process_time(), time.perf_counter()
            status, body = get('GET', path)
            cpu.append(1000 * (time.process_time() - cpu0))
            wall.append(1000 * (time.perf_counter() - wall0))
        print('  %-11s CPU %8.1f ms  wall %8.1f ms  %9d bytes  peak RSS '
              '%d MiB' % (name, statistics.median(cpu),
                          statistics.median(wall), len(body),
                          resource.getrusage(
                              resource.RUSAGE_SELF).ru_maxrss // 1024),
              flush=True)
    if args.drop:
        drop(args.db, args.db_name, url, workdir)


def run_claims(args, call):
    """CPU, wall time and statements of each half of ``args.claims``.

    Statements are counted by an SQLAlchemy cursor event, so those of a
    transaction's begin and commit (which the driver sends itself) are
    not among them.
    """
    counts = {'statements': 0}

    def count(*unused):
        counts['statements'] += 1

    sqlalchemy.event.listen(sqlalchemy.engine.Engine,
                            'before_cursor_execute', count)
    project, user = str(uuid.uuid4()), str(uuid.uuid4())
    path = '/allocation_candidates?' + bench.CLAIM_QUERY
    halves = {'GET': ([], [], []), 'PUT': ([], [], [])}
    profile = None
    if args.profile:
        profile = cProfile.Profile(time.process_time)
    for i in range(args.claims + 2):
        status, body = call('GET', path)
        if status != 200:
            raise RuntimeError('GET %s: %s' % (status, body[:500]))
        requests = json.loads(body)['allocation_requests']
        if not requests:
            raise RuntimeError('no candidates left after %d claims' % i)
        payload = dict(requests[0], project_id=project, user_id=user,
                       consumer_generation=None, consumer_type='INSTANCE')
        before = counts['statements']
        cpu0, wall0 = time.process_time(), time.perf_counter()
        if profile and i >= 2:
            profile.enable()
        status, body = call('PUT', '/allocations/%s' % uuid.uuid4(),
                            payload)
        if profile:
            profile.disable()
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        if status != 204:
            raise RuntimeError('PUT %s: %s' % (status, body[:500]))
        if i < 2:
            continue
        halves['PUT'][0].append(1000 * cpu)
        halves['PUT'][1].append(1000 * wall)
        halves['PUT'][2].append(counts['statements'] - before)
        before = counts['statements']
        cpu0, wall0 = time.process_time(), time.perf_counter()
        call('GET', path)
        halves['GET'][0].append(1000 * (time.process_time() - cpu0))
        halves['GET'][1].append(1000 * (time.perf_counter() - wall0))
        halves['GET'][2].append(counts['statements'] - before)
    if profile:
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats(
            'tottime').print_stats(args.profile)
        print('== PUT /allocations (%d requests, CPU seconds)'
              % args.claims)
        print(out.getvalue())
        return
    for name, (cpu, wall, statements) in sorted(halves.items()):
        print('  claim %s  CPU %6.2f ms  wall %6.2f ms  statements %.1f'
              ' (p50 of %d)' % (name, statistics.median(cpu),
                                statistics.median(wall),
                                statistics.median(statements), len(cpu)),
              flush=True)


def drop(db, name, url, workdir):
    """Remove the database of the run (and its marker)."""
    os.remove(os.path.join(workdir, 'populated'))
    if db == 'sqlite':
        os.remove(url[len('sqlite:///'):])
        return
    admin = bench.sa.create_engine(
        bench.DB_URLS[db] % ('postgres' if db == 'postgresql' else ''),
        isolation_level='AUTOCOMMIT')
    with admin.connect() as conn:
        conn.exec_driver_sql('DROP DATABASE IF EXISTS %s%s' % (
            name, ' WITH (FORCE)' if db == 'postgresql' else ''))
    admin.dispose()


if __name__ == '__main__':
    main()
