#!/usr/bin/env python3
"""Dashboard benchmark: the time of each page with many providers.

::

    .venv/bin/python benchmarks/dashboard_bench.py --db postgresql \\
        --sizes 10000,100000

For each size N it re-creates the database ``--db-name``, syncs
the schema (``alloc-manage db sync``), starts ``alloc-placement-api``
(one process, noauth) on loopback, fills Placement's tables with the
topology of ``placement_bench.py`` (its ``Topology`` and ``populate``:
N flat compute nodes, N/10 nested trees of four providers, sharing
storage) and, with bulk SQL, a bare metal side: N/10 nodes of two
resource classes over four provision states (some in maintenance), a
node allocation per deployed node, allocations in ``allocating`` and
``error``, deferred actions in every state and one conductor. It then
claims ``--claims`` allocations through ``PUT /allocations`` so that
usage is not zero; with ``--bulk-allocations``, it also gives every
flat provider a consumer of its own (VCPU and MEMORY_MB: two allocation
rows per flat provider, as a busy cloud has) by bulk SQL, and shrinks
the inventory of ``--over-capacity`` providers below their usage through
the API. It then times every page of the dashboard and the Placement
API's ``/metrics`` over HTTP (p50, p99, max of ``--reps`` requests after
a warm-up), flagging a page whose p50 is above ``--budget-ms`` (300).
See benchmarks/README.md.
"""

import argparse
import datetime
import importlib
import os
import platform
import sys
import tempfile
import time
import uuid

import sqlalchemy as sa

from alloc_framework.db.sqlalchemy import models

# The population helpers of the Placement benchmark, next to this file.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
pb = importlib.import_module('placement_bench')

NODE_STATES = ('available', 'active', 'manageable', 'clean failed')


def populate_baremetal(url, topo):
    """Bulk-insert nodes, node allocations, actions and a conductor."""
    start = time.perf_counter()
    engine = sa.create_engine(url)
    now = datetime.datetime.utcnow().replace(microsecond=0)
    old = now - datetime.timedelta(hours=2)
    count = max(10, topo.flat // 10)
    with engine.begin() as conn:
        conn.execute(models.Conductor.__table__.insert(), [{
            'hostname': 'bench-conductor', 'online': True,
            'conductor_group': '', 'drivers': ['fake-hardware'],
            'created_at': now, 'updated_at': now}])
        nodes, allocations, actions = [], [], []
        for i in range(count):
            state = NODE_STATES[i % len(NODE_STATES)]
            nodes.append({
                'id': i + 1, 'uuid': str(uuid.uuid4()), 'name': 'bm%d' % i,
                'driver': 'fake-hardware', 'provision_state': state,
                'resource_class': 'gold' if i % 2 else 'silver',
                'maintenance': i % 50 == 0, 'conductor_group': '',
                'protected': False, 'disable_power_off': False,
                'created_at': old})
        for chunk in range(0, len(nodes), 5000):
            conn.execute(models.Node.__table__.insert(),
                         nodes[chunk:chunk + 5000])
        for node in nodes:
            if node['provision_state'] == 'active':
                allocations.append({
                    'uuid': str(uuid.uuid4()), 'node_id': node['id'],
                    'state': 'active', 'resource_class':
                    node['resource_class'], 'created_at': old,
                    'updated_at': old, 'last_error': None})
            if node['id'] % 20 == 0:
                allocations.append({
                    'uuid': str(uuid.uuid4()), 'node_id': None,
                    'state': 'allocating'
                    if node['id'] % 40 else 'error',
                    'resource_class': 'gold', 'created_at': old,
                    'updated_at': old, 'last_error': None
                    if node['id'] % 40 else 'no node available'})
            if node['id'] % 10 == 0:
                actions.append({
                    'uuid': str(uuid.uuid4()), 'node_id': node['id'],
                    'state': ('CREATED', 'RUNNING', 'FAILED', 'COMPLETED',
                              'PENDING_RETRY')[node['id'] // 10 % 5],
                    'call': 'task.driver.firmware.update',
                    'retry_remaining': 1, 'reschedule_count': 0,
                    'created_at': old, 'updated_at': old})
        for table, rows in ((models.NodeAllocation.__table__, allocations),
                            (models.DeferredAction.__table__, actions)):
            for chunk in range(0, len(rows), 5000):
                conn.execute(table.insert(), rows[chunk:chunk + 5000])
        if engine.dialect.name == 'postgresql':
            for table in ('nodes', 'node_allocations', 'deferred_actions',
                          'conductors'):
                conn.exec_driver_sql(
                    "SELECT setval(pg_get_serial_sequence('%s', 'id'), "
                    "(SELECT max(id) FROM %s))" % (table, table))
    if engine.dialect.name == 'postgresql':
        with engine.connect().execution_options(
                isolation_level='AUTOCOMMIT') as conn:
            conn.exec_driver_sql('ANALYZE')
    engine.dispose()
    return count, time.perf_counter() - start


def mirror_nodes(client, url, count):
    """Give the first ``count`` nodes a provider, as the ``placement``
    backend would (its trait, one unit of the node's class), through the
    API, so that the drift list compares real trees (half of them made
    stale: their unit is reserved). Their providers count in the
    sizes printed."""
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        nodes = conn.execute(
            sa.select(models.Node.uuid, models.Node.name,
                      models.Node.resource_class)
            .order_by(models.Node.id).limit(count)).all()
    engine.dispose()
    trait = 'CUSTOM_ALLOC_FRAMEWORK_NODE'
    client.expect('PUT', '/traits/%s' % trait, status=(201, 204))
    for rc in {'CUSTOM_' + n.resource_class.upper() for n in nodes}:
        client.expect('PUT', '/resource_classes/%s' % rc,
                      status=(201, 204))
    for number, node in enumerate(nodes):
        rp = client.expect('POST', '/resource_providers', {
            'uuid': node.uuid, 'name': node.name})
        path = '/resource_providers/%s' % node.uuid
        generation = client.expect('PUT', path + '/inventories', {
            'resource_provider_generation': rp['generation'],
            'inventories': {'CUSTOM_' + node.resource_class.upper(): {
                'total': 1, 'reserved': number % 2}}})[
            'resource_provider_generation']
        client.expect('PUT', path + '/traits', {
            'resource_provider_generation': generation, 'traits': [trait]})
    return len(nodes)


def populate_allocations(url, topo):
    """One consumer per flat provider, using VCPU:2 and MEMORY_MB:4096 of
    it, inserted in bulk (capacity is not exceeded: 16 VCPU and 64 GiB).

    :returns: ``(allocation rows, seconds)``.
    """
    start = time.perf_counter()
    engine = sa.create_engine(url)
    meta = sa.MetaData()
    meta.reflect(engine, only=['resource_providers', 'resource_classes',
                               'projects', 'users', 'consumers',
                               'consumer_types', 'allocations'])
    t = meta.tables
    count = 0
    with engine.begin() as conn:
        rcs = dict(conn.execute(sa.select(
            t['resource_classes'].c.name, t['resource_classes'].c.id)).all())
        project_id = conn.execute(t['projects'].insert().values(
            external_id='bench-bulk-project')).inserted_primary_key[0]
        user_id = conn.execute(t['users'].insert().values(
            external_id='bench-bulk-user')).inserted_primary_key[0]
        type_id = conn.execute(sa.select(t['consumer_types'].c.id).where(
            t['consumer_types'].c.name == 'INSTANCE')).scalar()
        rp_ids = dict(conn.execute(
            sa.select(t['resource_providers'].c.name,
                      t['resource_providers'].c.id)
            .where(t['resource_providers'].c.name.like('flat%'))).all())
        consumers, allocations = [], []

        def flush():
            if consumers:
                conn.execute(t['consumers'].insert(), consumers)
                conn.execute(t['allocations'].insert(), allocations)
            del consumers[:], allocations[:]

        for i in range(topo.flat):
            consumer = str(uuid.uuid4())
            consumers.append({
                'uuid': consumer, 'project_id': project_id,
                'user_id': user_id, 'generation': 1,
                'consumer_type_id': type_id})
            rp_id = rp_ids['flat%d' % i]
            for rc, used in (('VCPU', 2), ('MEMORY_MB', 4096)):
                allocations.append({
                    'resource_provider_id': rp_id,
                    'resource_class_id': rcs[rc], 'consumer_id': consumer,
                    'used': used})
                count += 1
            if len(consumers) >= 5000:
                flush()
        flush()
    if engine.dialect.name == 'postgresql':
        with engine.connect().execution_options(
                isolation_level='AUTOCOMMIT') as conn:
            conn.exec_driver_sql('VACUUM ANALYZE')
    elif engine.dialect.name == 'mysql':
        with engine.connect() as conn:
            conn.exec_driver_sql('ANALYZE TABLE allocations, consumers')
    engine.dispose()
    return count, time.perf_counter() - start


def shrink(client, topo, count):
    """Put ``count`` flat providers over capacity of VCPU through the API
    (an inventory written below its usage, as an operator may)."""
    step = max(1, topo.flat // max(1, count))
    for i in range(count):
        rp = pb.name_uuid('flat%d' % ((i * step + step // 2) % topo.flat))
        code, body = client.call('GET', '/resource_providers/%s' % rp)
        client.expect('PUT', '/resource_providers/%s/inventories/VCPU' % rp,
                      {'resource_provider_generation': body['generation'],
                       'total': 1, 'max_unit': 1}, status=(200,))


def claim(client, topo, count):
    """``count`` consumers on flat providers, through the API."""
    step = max(1, topo.flat // max(1, count))
    for i in range(count):
        rp = pb.name_uuid('flat%d' % ((i * step) % topo.flat))
        client.expect('PUT', '/allocations/%s' % uuid.uuid4(), {
            'allocations': {rp: {'resources': {'VCPU': 2,
                                               'MEMORY_MB': 4096}}},
            'project_id': 'project%d' % (i % 7), 'user_id': 'user',
            'consumer_generation': None, 'consumer_type': 'INSTANCE'},
            status=(204,))


def pages(topo):
    """(label, path) of every page to time."""
    agg = pb.name_uuid('agg3')
    return [
        ('overview', '/dashboard/'),
        ('providers', '/dashboard/providers'),
        ('providers page 2', '/dashboard/providers?after=%d'
         % (topo.total // 2)),
        ('search name', '/dashboard/providers?name=flat%d'
         % (topo.flat - 1)),
        ('search trait', '/dashboard/providers?trait=CUSTOM_PHYSNET_A'),
        ('search aggregate', '/dashboard/providers?aggregate=%s' % agg),
        ('search class', '/dashboard/providers?resource_class='
         'SRIOV_NET_VF'),
        ('search uuid', '/dashboard/providers?uuid=%s'
         % pb.name_uuid('flat7')),
        ('tree nested', '/dashboard/providers/%s'
         % pb.name_uuid('nested0-numa1')),
        ('tree flat', '/dashboard/providers/%s' % pb.name_uuid('flat0')),
        ('tree sharing', '/dashboard/providers/%s'
         % pb.name_uuid('shared0')),
        ('fits', '/dashboard/fits?resources=VCPU:1,MEMORY_MB:1024,'
         'DISK_GB:20&limit=10'),
        # The granular query of placement_bench (a scheduler's).
        ('fits granular', '/dashboard/fits?resources=DISK_GB:20'
         '&resources1=VCPU:2,MEMORY_MB:2048&resources2=VCPU:2,'
         'MEMORY_MB:2048&resources3=SRIOV_NET_VF:1,'
         'NET_BW_EGR_KILOBIT_PER_SEC:10000&required3=CUSTOM_PHYSNET_A'
         '&group_policy=isolate&limit=10'),
        ('nothing fits', '/dashboard/fits?resources=VCPU:1000'),
        ('baremetal', '/dashboard/baremetal'),
        ('baremetal error', '/dashboard/baremetal?allocation_state=error'),
        ('over capacity', '/dashboard/trouble/over-capacity'),
        ('stuck', '/dashboard/trouble/stuck'),
        ('maintenance', '/dashboard/trouble/maintenance'),
        ('claims', '/dashboard/trouble/claims'),
        ('drift', '/dashboard/trouble/drift'),
        ('metrics', '/metrics'),
    ]


def time_page(client, path, args):
    samples = []
    for i in range(args.warmup + args.reps):
        start = time.perf_counter()
        code, _body = client.call('GET', path)
        elapsed = (time.perf_counter() - start) * 1000
        if code != 200:
            return 'HTTP %s' % code, samples
        if i >= args.warmup:
            samples.append(elapsed)
    return None, samples


def run_size(args, size, workdir):
    topo = pb.Topology(size)
    url = pb.recreate_database(args.db, args.db_name, workdir)
    server = pb.make_servers(args, workdir, {'ours': url})[0]
    server.start()
    try:
        client = pb.Client(server.port, 60)
        pb.prepare_api(client)
        seconds = pb.populate(url, topo)
        nodes, bm_seconds = populate_baremetal(url, topo)
        mirrored = mirror_nodes(client, url, args.mirrored)
        rows = 0
        if args.bulk_allocations:
            rows, alloc_seconds = populate_allocations(url, topo)
            seconds += alloc_seconds
        claim(client, topo, args.claims)
        rows += 2 * args.claims
        if args.bulk_allocations:
            shrink(client, topo, args.over_capacity)
        print('\n%d providers (%d flat), %d nodes (%d with a provider), '
              'filled in %.1f s; %d allocation rows; load %s' % (
                  topo.total, topo.flat, nodes, mirrored,
                  seconds + bm_seconds, rows,
                  ' '.join('%.1f' % x for x in os.getloadavg())),
              flush=True)
        print('%-18s %9s %9s %9s' % ('page', 'p50 ms', 'p99 ms', 'max ms'))
        slow = []
        for label, path in pages(topo):
            error, samples = time_page(client, path, args)
            if error:
                print('%-18s %s' % (label, error))
                slow.append(label)
                continue
            p50 = pb.percentile(samples, 0.5)
            flag = ' SLOW' if p50 > args.budget_ms else ''
            if flag:
                slow.append(label)
            print('%-18s %9.1f %9.1f %9.1f%s'
                  % (label, p50, pb.percentile(samples, 0.99),
                     max(samples), flag), flush=True)
        client.close()
        return slow
    finally:
        server.stop()


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--db', choices=sorted(pb.DB_URLS),
                        default='sqlite')
    parser.add_argument('--sizes', default='10000',
                        type=lambda s: [int(x) for x in s.split(',')],
                        help='Numbers of flat providers (comma-separated).')
    parser.add_argument('--db-name', default='bench_dashboard',
                        help='The database (re-created) or SQLite file.')
    parser.add_argument('--reps', type=int, default=10)
    parser.add_argument('--warmup', type=int, default=2)
    parser.add_argument('--claims', type=int, default=1000)
    parser.add_argument('--mirrored', type=int, default=200,
                        help='nodes given a provider (the drift list '
                        'compares their trees)')
    parser.add_argument('--bulk-allocations', action='store_true',
                        help='One consumer (two allocation rows) per flat '
                             'provider, by bulk SQL.')
    parser.add_argument('--over-capacity', type=int, default=10,
                        help='With --bulk-allocations: providers put over '
                             'capacity through the API.')
    parser.add_argument('--budget-ms', type=float, default=300)
    parser.add_argument('--workdir')
    args = parser.parse_args(argv)
    # What placement_bench.make_servers reads: one process.
    args.upstream_workers = 1
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    workdir = args.workdir or tempfile.mkdtemp(prefix='dashboard-bench-')
    os.makedirs(workdir, exist_ok=True)
    print('%s UTC; %s, %d cores, Python %s; load %s; %s; logs in %s'
          % (datetime.datetime.now(datetime.timezone.utc)
             .strftime('%Y-%m-%d %H:%M'), platform.node(), os.cpu_count(),
             platform.python_version(),
             ' '.join('%.1f' % x for x in os.getloadavg()), args.db,
             workdir), flush=True)
    slow = []
    for size in args.sizes:
        slow += ['%s at %d' % (label, size)
                 for label in run_size(args, size, workdir)]
    if slow:
        print('\nAbove %.0f ms (p50) or failed: %s'
              % (args.budget_ms, ', '.join(slow)))
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
