#!/usr/bin/env python3
"""Benchmark of the connection pool set-up of alloc_framework.db.api.

Runs short transactions through oslo.db's enginefacade, the way the
services do, on two engines of the same database:

* ``stock``: the pool as oslo.db and SQLAlchemy set it up: every
  connection handed out is pinged first (pre-ping) and every connection
  given back is rolled back (reset on return);
* ``project``: the engine set-up of ``alloc_framework.db.api``
  (``_pool_setup``): a connection given back is rolled back only when a
  transaction is still open on it, and only connections idle for more
  than ``PING_AFTER_IDLE`` seconds are pinged.

Both get every other set-up of the project (SQLite's ``BEGIN IMMEDIATE``,
MySQL's ``READ COMMITTED``) and the options ``db_api.configure`` passes.
Two workloads: ``read``, a reader transaction that selects one row by
its key (what a polled allocation costs), and ``write``, a writer
transaction that updates one row (each thread its own rows). Rounds
alternate between the engines, so that both see the same machine; the
script prints transactions per second for each round, their median and
the ratio project / stock.

Example::

    python benchmarks/db_pool_bench.py \\
        --url mysql+pymysql://root@127.0.0.1/pool_bench \\
        --url postgresql+psycopg2://postgres@127.0.0.1/pool_bench \\
        --threads 1,8

The project must be importable (installed, or ``PYTHONPATH`` set to the
checkout). Without ``--url`` it runs on a temporary SQLite file. The
script creates the table ``pool_bench`` in each database and drops it at
the end.
"""

import argparse
import os
import random
import statistics
import sys
import tempfile
import threading
import time

from oslo_db.sqlalchemy import enginefacade
import sqlalchemy as sa

from alloc_framework.conf import database as db_conf
from alloc_framework.db import api as db_api

ROWS_PER_THREAD = 10
METADATA = sa.MetaData()
TABLE = sa.Table('pool_bench', METADATA,
                 sa.Column('id', sa.Integer, primary_key=True,
                           autoincrement=False),
                 sa.Column('value', sa.Integer, nullable=False))
SELECT = sa.select(TABLE.c.value).where(TABLE.c.id == sa.bindparam('key'))
UPDATE = (sa.update(TABLE).where(TABLE.c.id == sa.bindparam('key'))
          .values(value=TABLE.c.value + 1))


@enginefacade.transaction_context_provider
class Context:
    """A bare context for the enginefacade decorators."""


def make_variant(url, project_pool):
    """An enginefacade on ``url`` with or without the project's pool set-up.

    :returns: a dict of the workloads (functions of a context and a key)
        and the facade.
    """
    facade = enginefacade.transaction_context()
    facade.configure(connection=url, sqlite_fk=True,
                     max_pool_size=db_conf.DEFAULT_MAX_POOL_SIZE,
                     thread_checkin=False)
    for setup in db_api._ENGINE_SETUP:
        if project_pool or setup is not db_api._pool_setup:
            facade.append_on_engine_create(setup)

    @facade.reader
    def read(context, key):
        context.session.execute(SELECT, {'key': key}).scalar_one()

    @facade.writer
    def write(context, key):
        context.session.execute(UPDATE, {'key': key})

    return {'read': read, 'write': write}, facade


def run_round(workload, threads, transactions):
    """Transactions per second of ``threads`` threads running ``workload``.

    Each thread runs ``transactions`` transactions on its own rows.
    """
    barrier = threading.Barrier(threads + 1)
    errors = []

    def worker(index):
        rng = random.Random(index)
        keys = range(index * ROWS_PER_THREAD, (index + 1) * ROWS_PER_THREAD)
        context = Context()
        barrier.wait()
        try:
            for _ in range(transactions):
                workload(context, rng.choice(keys))
        except Exception as exc:  # reported after the round
            errors.append(exc)

    pool = [threading.Thread(target=worker, args=(i,))
            for i in range(threads)]
    for thread in pool:
        thread.start()
    barrier.wait()
    started = time.perf_counter()
    for thread in pool:
        thread.join()
    elapsed = time.perf_counter() - started
    if errors:
        raise errors[0]
    return threads * transactions / elapsed


def bench_database(url, args):
    variants = {name: make_variant(url, name == 'project')
                for name in ('stock', 'project')}
    engine = variants['stock'][1].writer.get_engine()
    METADATA.drop_all(engine)
    METADATA.create_all(engine)
    rows = ROWS_PER_THREAD * max(args.threads)
    with engine.begin() as conn:
        conn.execute(sa.insert(TABLE),
                     [{'id': i, 'value': 0} for i in range(rows)])
    results = []
    try:
        for workload in args.workloads:
            for threads in args.threads:
                rates = {'stock': [], 'project': []}
                for round_ in range(args.rounds):
                    # Alternate which engine goes first.
                    order = ['stock', 'project']
                    if round_ % 2:
                        order.reverse()
                    for name in order:
                        func = variants[name][0][workload]
                        run_round(func, threads, args.warmup)
                        rates[name].append(run_round(
                            func, threads, args.transactions))
                results.append((workload, threads, rates))
                _print_row(engine.dialect.name, workload, threads, rates)
    finally:
        METADATA.drop_all(engine)
        for _workloads, facade in variants.values():
            facade.dispose_pool()
    return results


def _print_row(database, workload, threads, rates):
    stock = statistics.median(rates['stock'])
    project = statistics.median(rates['project'])
    print('%-10s %-6s %7d %10.0f %10.0f %7.2f   stock %s / project %s' % (
        database, workload, threads, stock, project, project / stock,
        ' '.join('%.0f' % r for r in rates['stock']),
        ' '.join('%.0f' % r for r in rates['project'])))
    sys.stdout.flush()


def _int_list(text):
    return [int(item) for item in text.split(',')]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--url', action='append',
                        help='SQLAlchemy URL of a database to use (may be '
                             'repeated); a temporary SQLite file if none.')
    parser.add_argument('--threads', type=_int_list, default=[1, 8],
                        help='Comma-separated thread counts (default 1,8).')
    parser.add_argument('--workloads', type=lambda t: t.split(','),
                        default=['read', 'write'],
                        help='Comma-separated workloads: read, write.')
    parser.add_argument('--transactions', type=int, default=2000,
                        help='Transactions per thread and round.')
    parser.add_argument('--warmup', type=int, default=100,
                        help='Untimed transactions per thread before each '
                             'round.')
    parser.add_argument('--rounds', type=int, default=5,
                        help='Rounds per engine (interleaved).')
    args = parser.parse_args(argv)
    urls = args.url
    tmpdir = None
    if not urls:
        tmpdir = tempfile.TemporaryDirectory(prefix='pool-bench-')
        urls = ['sqlite:///' + os.path.join(tmpdir.name, 'bench.db')]
    print('%-10s %-6s %7s %10s %10s %7s   transactions/s of each round'
          % ('database', 'load', 'threads', 'stock', 'project', 'ratio'))
    for url in urls:
        bench_database(url, args)
    if tmpdir is not None:
        tmpdir.cleanup()
    return 0


if __name__ == '__main__':
    sys.exit(main())
