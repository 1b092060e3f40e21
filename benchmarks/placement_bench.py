#!/usr/bin/env python3
"""Placement benchmark: this project against upstream openstack-placement.

One command measures both services on the same machine and the same
database server, in one run, over HTTP with the same client code::

    .venv/bin/python benchmarks/placement_bench.py --db postgresql \\
        --sizes 1000,10000,100000 --chart benchmarks/placement_p50.png

For each size N it:

1. drops and re-creates the databases ``bench_ours`` and
   ``bench_upstream`` (``--db-prefix`` changes ``bench_``), creates
   each schema with the service's own command (``alloc-manage db
   sync``, ``placement-manage db sync``) and
   starts both services on loopback: ``alloc-placement-api`` and
   upstream Placement (``--upstream-version``, installed by the script
   into its own virtualenv, ``benchmarks/.upstream-venv``, when absent)
   under gunicorn, ``auth_strategy = noauth2``, each with
   ``--upstream-workers`` processes (2);
2. fills both databases identically with bulk SQL inserts (the two
   schemas share their table and column names): N flat compute nodes
   (VCPU, MEMORY_MB, DISK_GB, traits, one of ten aggregates), N/10
   nested roots (DISK_GB on the root, two NUMA children with VCPU and
   MEMORY_MB, a NIC child with SRIOV_NET_VF and egress bandwidth) and
   N/20 compute nodes without disk that share DISK_GB from one storage
   provider per ten of them (``MISC_SHARES_VIA_AGGREGATE``, through an
   aggregate); then checks through each API that both see the same
   providers and answer a candidates query with the expected count;
3. times a fixed set of ``GET /allocation_candidates`` queries (p50, p99
   over repetitions after a warm-up; a query of a service that takes
   longer than ``--query-timeout`` is reported as ``timeout``);
4. runs ``--clients`` concurrent claimers (candidates with ``limit``,
   then ``PUT /allocations/{consumer}`` with ``consumer_generation:
   null``, the next candidate on a 409) for ``--claims-seconds``, and
   checks in SQL that no inventory ended over its capacity and that every
   claim answered 204 was written once;
5. reads each service's peak resident memory (``VmHWM`` of every process
   of its tree).

It prints a table per size and the ratios, the limit=10 p50 across sizes
(the work of a query should grow with its limit, not with the number of
providers), and writes a chart (p50 against the number of providers,
log scales) when matplotlib is installed. See benchmarks/README.md.
"""

import argparse
import datetime
import http.client
import json
import os
import platform
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid

import sqlalchemy as sa

try:
    import psutil
except ImportError:  # figures still print; memory is read from /proc
    psutil = None

HERE = os.path.dirname(os.path.abspath(__file__))
MICROVERSION = 'placement 1.39'
NAMESPACE = uuid.UUID('5f0a2b4e-8c1d-4e6f-9a3b-7c2d1e0f4a5b')
DB_URLS = {
    'postgresql': 'postgresql+psycopg2://postgres@127.0.0.1/%s',
    'mysql': 'mysql+pymysql://root@127.0.0.1/%s?charset=utf8mb4',
    # A file of the working directory.
    'sqlite': 'sqlite:///%s.db',
}
CUSTOM_TRAITS = ('CUSTOM_BENCH_SLOW', 'CUSTOM_PHYSNET_A')
CLASSES = ('VCPU', 'MEMORY_MB', 'DISK_GB', 'SRIOV_NET_VF',
           'NET_BW_EGR_KILOBIT_PER_SEC')
FLAT = 'resources=VCPU:1,MEMORY_MB:1024,DISK_GB:20'
# The fixed set of queries: name, query string. Every query but "plain"
# asks for 10 candidates, as a scheduler does; "plain" runs last.
QUERIES = (
    ('limit10', FLAT + '&limit=10'),
    ('traits', FLAT + '&required=HW_CPU_X86_AVX2,!CUSTOM_BENCH_SLOW'
     '&limit=10'),
    ('member_of', FLAT + '&member_of=in:{agg3},{agg7}&limit=10'),
    ('granular', 'resources=DISK_GB:20'
     '&resources1=VCPU:2,MEMORY_MB:2048&resources2=VCPU:2,MEMORY_MB:2048'
     '&resources3=SRIOV_NET_VF:1,NET_BW_EGR_KILOBIT_PER_SEC:10000'
     '&required3=CUSTOM_PHYSNET_A&group_policy=isolate&limit=10'),
    ('sharing', 'resources=VCPU:1,MEMORY_MB:1024,DISK_GB:5000&limit=10'),
    ('plain', FLAT),
)
# The flat set (--queries flat): what one request of each kind costs over
# the flat providers, most without a limit. "plain" runs last here too.
FLAT_QUERIES = (
    ('limit10', FLAT + '&limit=10'),
    ('required', FLAT + '&required=HW_CPU_X86_AVX2&limit=1000'),
    ('forbidden', FLAT + '&required=!CUSTOM_BENCH_SLOW&limit=1000'),
    ('member_of1', FLAT + '&member_of={agg3}'),
    ('member_of2', FLAT + '&member_of=in:{agg3},{agg7}'),
    ('plain', FLAT),
)
QUERY_SETS = {'scheduler': QUERIES, 'flat': FLAT_QUERIES}
CLAIM_QUERY = FLAT + '&limit=10'
SANITY_GRANULAR = (
    'resources1=VCPU:2,MEMORY_MB:2048&in_tree1={tree}'
    '&resources2=VCPU:2,MEMORY_MB:2048&in_tree2={tree}'
    '&resources3=SRIOV_NET_VF:1&required3=CUSTOM_PHYSNET_A&in_tree3={tree}'
    '&group_policy=isolate')


def name_uuid(name):
    return str(uuid.uuid5(NAMESPACE, name))


def percentile(values, fraction):
    ordered = sorted(values)
    index = min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))
    return ordered[index]


def machine_reference():
    """Seconds a fixed pure-Python loop takes (lower is faster)."""
    start = time.perf_counter()
    total = 0
    for i in range(3000000):
        total += i % 7
    return time.perf_counter() - start


# --- topology ------------------------------------------------------------

class Topology:
    """The providers of one size, the same for both databases."""

    def __init__(self, flat):
        self.flat = flat
        self.nested_roots = flat // 10
        self.sharing_computes = max(1, flat // 20)
        self.storage = max(1, self.sharing_computes // 10)
        self.total = (flat + 4 * self.nested_roots + self.sharing_computes
                      + self.storage)
        self.aggregates = ['agg%d' % i for i in range(10)] + [
            'share%d' % k for k in range(self.storage)]

    def providers(self):
        """Yield (name, parent name or None, inventories, traits, aggs)."""
        for i in range(self.flat):
            traits = []
            if i % 2 == 0:
                traits.append('HW_CPU_X86_AVX2')
            if i % 10 == 0:
                traits.append('CUSTOM_BENCH_SLOW')
            yield ('flat%d' % i, None,
                   {'VCPU': (16, 1.0), 'MEMORY_MB': (65536, 1.0),
                    'DISK_GB': (1000, 1.0)}, traits, ['agg%d' % (i % 10)])
        for r in range(self.nested_roots):
            root = 'nested%d' % r
            yield root, None, {'DISK_GB': (2000, 1.0)}, [], []
            for numa in (0, 1):
                yield ('%s-numa%d' % (root, numa), root,
                       {'VCPU': (16, 1.0), 'MEMORY_MB': (32768, 1.0)},
                       ['HW_NUMA_ROOT'], [])
            yield ('%s-nic' % root, root,
                   {'SRIOV_NET_VF': (8, 1.0),
                    'NET_BW_EGR_KILOBIT_PER_SEC': (10000000, 1.0)},
                   ['HW_NIC_SRIOV', 'CUSTOM_PHYSNET_A'], [])
        for k in range(self.storage):
            yield ('storage%d' % k, None, {'DISK_GB': (100000, 1.0)},
                   ['MISC_SHARES_VIA_AGGREGATE'], ['share%d' % k])
        for s in range(self.sharing_computes):
            yield ('shared%d' % s, None,
                   {'VCPU': (16, 1.0), 'MEMORY_MB': (65536, 1.0)}, [],
                   ['share%d' % min(s // 10, self.storage - 1)])

    def expected_agg0(self):
        return len(range(0, self.flat, 10))


def populate(url, topo, chunk=5000):
    """Bulk-insert ``topo`` into the Placement schema at ``url``.

    Both schemas name their tables and columns alike; the standard
    resource classes and traits, and the custom traits, must exist (the
    services create them). Returns the seconds taken.
    """
    start = time.perf_counter()
    engine = sa.create_engine(url)
    meta = sa.MetaData()
    meta.reflect(engine, only=['resource_providers', 'inventories',
                               'resource_provider_traits',
                               'placement_aggregates',
                               'resource_provider_aggregates',
                               'resource_classes', 'traits'])
    t = meta.tables
    now = datetime.datetime.utcnow().replace(microsecond=0)

    def stamp(table, row):
        if 'created_at' in table.c:
            row['created_at'] = now
        return row

    with engine.begin() as conn:
        if engine.dialect.name == 'mysql':
            conn.exec_driver_sql('SET FOREIGN_KEY_CHECKS=0')
        rcs = {row[0]: row[1] for row in conn.execute(sa.select(
            t['resource_classes'].c.name, t['resource_classes'].c.id))}
        traits = {row[0]: row[1] for row in conn.execute(sa.select(
            t['traits'].c.name, t['traits'].c.id))}
        missing = [n for n in CLASSES if n not in rcs] + [
            n for n in CUSTOM_TRAITS + ('HW_CPU_X86_AVX2', 'HW_NUMA_ROOT')
            if n not in traits]
        if missing:
            raise RuntimeError('%s: missing resource classes or traits %s'
                               % (url, missing))
        rp_base = conn.execute(sa.select(sa.func.coalesce(
            sa.func.max(t['resource_providers'].c.id), 0))).scalar()
        agg_base = conn.execute(sa.select(sa.func.coalesce(
            sa.func.max(t['placement_aggregates'].c.id), 0))).scalar()
        agg_ids = {}
        rows = []
        for j, name in enumerate(topo.aggregates):
            agg_ids[name] = agg_base + j + 1
            rows.append(stamp(t['placement_aggregates'], {
                'id': agg_ids[name], 'uuid': name_uuid(name)}))
        conn.execute(t['placement_aggregates'].insert(), rows)

        ids = {}
        batch = {'rp': [], 'inv': [], 'trait': [], 'agg': []}

        def flush():
            for key, table in (('rp', 'resource_providers'),
                               ('inv', 'inventories'),
                               ('trait', 'resource_provider_traits'),
                               ('agg', 'resource_provider_aggregates')):
                if batch[key]:
                    conn.execute(t[table].insert(), batch[key])
                    batch[key] = []

        for name, parent, invs, rp_traits, aggs in topo.providers():
            rp_id = ids[name] = rp_base + len(ids) + 1
            root = ids[parent] if parent else rp_id
            batch['rp'].append(stamp(t['resource_providers'], {
                'id': rp_id, 'uuid': name_uuid(name), 'name': name,
                'generation': 1, 'root_provider_id': root,
                'parent_provider_id': ids[parent] if parent else None}))
            for rc, (total, ratio) in invs.items():
                batch['inv'].append(stamp(t['inventories'], {
                    'resource_provider_id': rp_id,
                    'resource_class_id': rcs[rc], 'total': total,
                    'reserved': 0, 'min_unit': 1, 'max_unit': total,
                    'step_size': 1, 'allocation_ratio': ratio}))
            for trait in rp_traits:
                batch['trait'].append(stamp(t['resource_provider_traits'], {
                    'resource_provider_id': rp_id,
                    'trait_id': traits[trait]}))
            for agg in aggs:
                batch['agg'].append(stamp(
                    t['resource_provider_aggregates'], {
                        'resource_provider_id': rp_id,
                        'aggregate_id': agg_ids[agg]}))
            if len(batch['rp']) >= chunk:
                flush()
        flush()
        if engine.dialect.name == 'postgresql':
            for table in ('resource_providers', 'placement_aggregates'):
                conn.exec_driver_sql(
                    "SELECT setval(pg_get_serial_sequence('%s', 'id'), "
                    "(SELECT max(id) FROM %s))" % (table, table))
    if engine.dialect.name == 'postgresql':
        with engine.connect().execution_options(
                isolation_level='AUTOCOMMIT') as conn:
            conn.exec_driver_sql('ANALYZE')
    engine.dispose()
    return time.perf_counter() - start


def capacity_violations(url):
    """Inventories whose allocations exceed their capacity, and consumers."""
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        over = conn.exec_driver_sql(
            'SELECT count(*) FROM (SELECT i.id FROM inventories i '
            'JOIN allocations a ON a.resource_provider_id = '
            'i.resource_provider_id AND a.resource_class_id = '
            'i.resource_class_id GROUP BY i.id, i.total, i.reserved, '
            'i.allocation_ratio HAVING sum(a.used) > '
            '(i.total - i.reserved) * i.allocation_ratio) x').scalar()
        consumers = conn.exec_driver_sql(
            'SELECT count(DISTINCT consumer_id) FROM allocations').scalar()
    engine.dispose()
    return over, consumers


def recreate_database(db, name, workdir):
    if db == 'sqlite':
        path = os.path.join(workdir, name)
        for suffix in ('.db', '.db-wal', '.db-shm'):
            if os.path.exists(path + suffix):
                os.remove(path + suffix)
        return DB_URLS[db] % path
    if db == 'postgresql':
        admin = sa.create_engine(DB_URLS[db] % 'postgres',
                                 isolation_level='AUTOCOMMIT')
        with admin.connect() as conn:
            conn.exec_driver_sql('DROP DATABASE IF EXISTS %s WITH (FORCE)'
                                 % name)
            conn.exec_driver_sql('CREATE DATABASE %s' % name)
    else:
        admin = sa.create_engine('mysql+pymysql://root@127.0.0.1/')
        with admin.connect() as conn:
            conn.exec_driver_sql('DROP DATABASE IF EXISTS %s' % name)
            conn.exec_driver_sql('CREATE DATABASE %s CHARACTER SET utf8mb4'
                                 % name)
    admin.dispose()
    return DB_URLS[db] % name


# --- HTTP ----------------------------------------------------------------

class Timeout(Exception):
    pass


class Client:
    """A thread-confined keep-alive client of one Placement API."""

    def __init__(self, port, timeout):
        self.port = port
        self.timeout = timeout
        self.conn = None
        # When the last byte of the last answer was read: a query's time
        # ends there, before the client decodes the JSON.
        self.answered_at = None

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def call(self, method, path, body=None):
        """Return (status, parsed JSON body or None)."""
        data = None if body is None else json.dumps(body).encode()
        headers = {'x-auth-token': 'admin', 'accept': 'application/json',
                   'openstack-api-version': MICROVERSION}
        if data is not None:
            headers['content-type'] = 'application/json'
        for attempt in (0, 1):
            reused = self.conn is not None
            if self.conn is None:
                self.conn = http.client.HTTPConnection(
                    '127.0.0.1', self.port, timeout=self.timeout)
            try:
                self.conn.request(method, path, body=data, headers=headers)
                resp = self.conn.getresponse()
                payload = resp.read()
                self.answered_at = time.perf_counter()
            except TimeoutError:
                self.close()
                raise Timeout('%s %s: no answer in %s s'
                              % (method, path, self.timeout))
            except (http.client.HTTPException, OSError):
                # A keep-alive connection the server closed: once more.
                self.close()
                if attempt or not reused:
                    raise
                continue
            if (resp.getheader('connection') or '').lower() == 'close':
                self.close()
            try:
                parsed = json.loads(payload) if payload else None
            except ValueError:
                parsed = {'text': payload[:300].decode(errors='replace')}
            return resp.status, parsed

    def expect(self, method, path, body=None, status=(200,)):
        code, parsed = self.call(method, path, body)
        if code not in status:
            raise RuntimeError('%s %s answered %s: %s'
                               % (method, path, code, parsed))
        return parsed


def free_port():
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


class Server:
    """A service process group started and stopped by the benchmark."""

    def __init__(self, label, cmd, env, port, workdir):
        self.label = label
        self.cmd = cmd
        self.env = env
        self.port = port
        self.log = os.path.join(workdir, '%s.log' % label)
        self.proc = None

    def start(self):
        with open(self.log, 'ab') as log:
            self.proc = subprocess.Popen(
                self.cmd, env=self.env, stdout=log,
                stderr=subprocess.STDOUT, start_new_session=True)
        client = Client(self.port, 5)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError('%s exited with %s; see %s'
                                   % (self.label, self.proc.returncode,
                                      self.log))
            try:
                if client.call('GET', '/')[0] == 200:
                    return
            except (OSError, Timeout, http.client.HTTPException):
                pass
            time.sleep(0.3)
        raise RuntimeError('%s did not answer in 120 s; see %s'
                           % (self.label, self.log))

    def pids(self):
        if self.proc is None or self.proc.poll() is not None:
            return []
        if psutil is not None:
            parent = psutil.Process(self.proc.pid)
            return [parent.pid] + [c.pid for c in
                                   parent.children(recursive=True)]
        return [self.proc.pid]

    def cpu_seconds(self):
        """User and system CPU time of the service's processes so far."""
        ticks = 0
        for pid in self.pids():
            try:
                with open('/proc/%d/stat' % pid) as f:
                    # utime and stime, after the command's parenthesis.
                    fields = f.read().rsplit(')', 1)[1].split()
            except OSError:
                continue
            ticks += int(fields[11]) + int(fields[12])
        return ticks / os.sysconf('SC_CLK_TCK')

    def reset_peak(self):
        """Restart the kernel's peak-RSS count of every process."""
        for pid in self.pids():
            try:
                with open('/proc/%d/clear_refs' % pid, 'w') as f:
                    f.write('5')
            except OSError:
                pass

    def peak_rss(self):
        """(largest process, sum over the tree) of VmHWM, in MiB."""
        peaks = []
        for pid in self.pids():
            try:
                with open('/proc/%d/status' % pid) as f:
                    for line in f:
                        if line.startswith('VmHWM:'):
                            peaks.append(int(line.split()[1]) / 1024.0)
            except OSError:
                pass
        return (max(peaks), sum(peaks)) if peaks else (None, None)

    def stop(self):
        if self.proc is None or self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


def ensure_upstream_venv(path, version):
    """Create upstream Placement's own virtualenv unless it is there."""
    marker = os.path.join(path, '.placement-%s' % version)
    if os.path.exists(marker):
        return
    print('Installing openstack-placement==%s into %s' % (version, path),
          flush=True)
    subprocess.check_call([sys.executable, '-m', 'venv', path])
    subprocess.check_call([
        os.path.join(path, 'bin', 'python'), '-m', 'pip', 'install', '-q',
        'openstack-placement==%s' % version, 'PyMySQL', 'psycopg2-binary',
        'gunicorn'])
    open(marker, 'w').close()


def write_conf(path, sections):
    with open(path, 'w') as f:
        for section, options in sections.items():
            f.write('[%s]\n' % section)
            for key, value in options.items():
                f.write('%s = %s\n' % (key, value))
            f.write('\n')


# What each upstream worker runs as it boots (placement.deploy), run
# once before the workers start; argv[1] is the configuration file.
UPSTREAM_BOOT_SYNC = """
import sys
from oslo_config import cfg
from placement import conf, db_api, deploy
config = cfg.ConfigOpts()
conf.register_opts(config)
config(['--config-file', sys.argv[1]], project='placement',
       default_config_files=[], default_config_dirs=[])
db_api.configure(config)
deploy.update_database(config)
"""


def make_servers(args, workdir, urls):
    """Sync both schemas and return the (unstarted) servers."""
    bindir = os.path.dirname(sys.executable)
    ours_conf = os.path.join(workdir, 'ours.conf')
    port = free_port()
    write_conf(ours_conf, {
        'DEFAULT': {'debug': 'false',
                    'state_path': os.path.join(workdir, 'ours-state')},
        'database': {'connection': urls['ours']},
        # As many processes as upstream's gunicorn workers.
        'placement_api': {'host_ip': '127.0.0.1', 'port': port,
                          'auth_strategy': 'noauth',
                          'processes': args.upstream_workers}})
    subprocess.check_call([os.path.join(bindir, 'alloc-manage'),
                           '--config-file', ours_conf, 'db', 'sync'],
                          stdout=subprocess.DEVNULL)
    servers = [Server('ours', [os.path.join(bindir, 'alloc-placement-api'),
                               '--config-file', ours_conf],
                      dict(os.environ), port, workdir)]
    if urls.get('upstream'):
        up_dir = os.path.join(workdir, 'upstream-etc')
        os.makedirs(up_dir, exist_ok=True)
        up_conf = os.path.join(up_dir, 'placement.conf')
        write_conf(up_conf, {
            'DEFAULT': {'debug': 'false'},
            'api': {'auth_strategy': 'noauth2'},
            'placement_database': {'connection': urls['upstream']}})
        venv_bin = os.path.join(args.upstream_venv, 'bin')
        subprocess.check_call([os.path.join(venv_bin, 'placement-manage'),
                               '--config-file', up_conf, 'db', 'sync'],
                              stdout=subprocess.DEVNULL)
        # Each gunicorn worker writes the standard traits and classes as
        # it boots; on SQLite two workers doing so at once can meet
        # "database is locked", and a worker that fails to boot stops the
        # whole server. Written once here, the workers find nothing to do.
        subprocess.check_call([os.path.join(venv_bin, 'python'), '-c',
                               UPSTREAM_BOOT_SYNC, up_conf])
        env = dict(os.environ, OS_PLACEMENT_CONFIG_DIR=up_dir)
        env.pop('PYTHONPATH', None)
        # gunicorn ends a worker stuck past --timeout, so that a query the
        # client gave up on does not keep a worker busy for long.
        port = free_port()
        cmd = [os.path.join(venv_bin, 'gunicorn'), '--workers',
               str(args.upstream_workers), '--bind', '127.0.0.1:%d' % port,
               '--timeout', str(int(args.query_timeout) + 5),
               '--graceful-timeout', '5', 'placement.wsgi.api:application']
        servers.append(Server('upstream', cmd, env, port, workdir))
    return servers


# --- measurements --------------------------------------------------------

def prepare_api(client):
    """Create the custom traits through the API (and its caches)."""
    for trait in CUSTOM_TRAITS:
        client.expect('PUT', '/traits/%s' % trait, status=(201, 204))


def sanity(client, topo):
    """Check through the API that the bulk-inserted data is served."""
    listed = client.expect('GET', '/resource_providers?member_of=%s'
                           % name_uuid('agg0'))['resource_providers']
    if len(listed) != topo.expected_agg0():
        raise RuntimeError('member_of agg0 lists %d providers, expected %d'
                           % (len(listed), topo.expected_agg0()))
    nic = client.expect('GET', '/resource_providers/%s/inventories'
                        % name_uuid('nested0-nic'))['inventories']
    if nic['SRIOV_NET_VF']['total'] != 8:
        raise RuntimeError('nested0-nic inventory %s' % nic)
    # Candidates in one named tree (cheap whatever the size): the last
    # flat provider, and the two NUMA nodes of a nested root in either
    # order.
    for query, expected in (
            ('resources=VCPU:1,MEMORY_MB:1024&in_tree=%s'
             % name_uuid('flat%d' % (topo.flat - 1)), 1),
            (SANITY_GRANULAR.format(tree=name_uuid('nested0')), 2)):
        found = client.expect('GET', '/allocation_candidates?' + query)
        if len(found['allocation_requests']) != expected:
            raise RuntimeError('%s gave %d candidates, expected %d' % (
                query, len(found['allocation_requests']), expected))


def time_query(client, path, args):
    """Latencies (ms) of ``path`` after a warm-up; or an error string."""
    samples, count = [], None
    spent = 0.0
    for i in range(args.warmup + args.reps):
        start = time.perf_counter()
        try:
            code, body = client.call('GET', path)
        except Timeout:
            return 'timeout', samples, count
        elapsed = client.answered_at - start
        if code != 200:
            return 'HTTP %s' % code, samples, count
        count = len(body['allocation_requests'])
        if i >= args.warmup:
            samples.append(elapsed * 1000)
            spent += elapsed
            if spent > args.query_budget and len(samples) >= 3:
                break
        elif elapsed > args.query_budget:
            samples.append(elapsed * 1000)
            return None, samples, count
    return None, samples, count


def claims(port, args):
    """``args.clients`` claimers for ``args.claims_seconds``."""
    lock = threading.Lock()
    stats = {'claims': 0, 'conflicts': 0, 'errors': [], 'timeouts': 0,
             'exhausted': 0}
    latencies = []
    project, user = str(uuid.uuid4()), str(uuid.uuid4())
    deadline = time.monotonic() + args.claims_seconds

    def worker(seed):
        rng = random.Random(seed)
        # A request waits for the ones queued before it, at a slow server
        # for much longer than one query takes: claims have their own
        # time-out.
        client = Client(port, args.claims_timeout)
        while time.monotonic() < deadline:
            start = time.perf_counter()
            try:
                code, body = client.call(
                    'GET', '/allocation_candidates?' + CLAIM_QUERY)
                if code != 200:
                    with lock:
                        stats['errors'].append('GET %s' % code)
                    return
                requests = body['allocation_requests']
                if not requests:
                    with lock:
                        stats['exhausted'] += 1
                    return
                first = rng.randrange(len(requests))
                for ar in requests[first:] + requests[:first]:
                    if time.monotonic() > deadline + args.claims_timeout:
                        return
                    payload = dict(ar, project_id=project, user_id=user,
                                   consumer_generation=None,
                                   consumer_type='INSTANCE')
                    code, resp = client.call(
                        'PUT', '/allocations/%s' % uuid.uuid4(), payload)
                    if code == 204:
                        with lock:
                            stats['claims'] += 1
                            latencies.append(
                                (time.perf_counter() - start) * 1000)
                        break
                    if code != 409:
                        with lock:
                            stats['errors'].append('PUT %s %s' % (
                                code, str(resp)[:200]))
                        return
                    with lock:
                        stats['conflicts'] += 1
            except Timeout:
                with lock:
                    stats['timeouts'] += 1
            except (OSError, http.client.HTTPException) as exc:
                with lock:
                    stats['errors'].append(repr(exc))
                return

    threads = [threading.Thread(target=worker, args=(i,))
               for i in range(args.clients)]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - start
    stats['rate'] = stats['claims'] / wall
    stats['wall'] = wall
    stats['p50'] = statistics.median(latencies) if latencies else None
    stats['p99'] = percentile(latencies, 0.99) if latencies else None
    return stats


def api_populate(client, count):
    """Providers per second created through the API, as a client does."""
    start = time.perf_counter()
    for i in range(count):
        rp = client.expect('POST', '/resource_providers',
                           {'name': 'api%d' % i}, status=(200,))
        gen = rp['generation']
        inv = client.expect(
            'PUT', '/resource_providers/%s/inventories' % rp['uuid'],
            {'resource_provider_generation': gen, 'inventories': {
                'VCPU': {'total': 16}, 'MEMORY_MB': {'total': 65536},
                'DISK_GB': {'total': 1000}}})
        gen = inv['resource_provider_generation']
        traits = client.expect(
            'PUT', '/resource_providers/%s/traits' % rp['uuid'],
            {'resource_provider_generation': gen,
             'traits': ['HW_CPU_X86_AVX2']})
        client.expect(
            'PUT', '/resource_providers/%s/aggregates' % rp['uuid'],
            {'resource_provider_generation':
             traits['resource_provider_generation'],
             'aggregates': [name_uuid('agg%d' % (i % 10))]})
    return count / (time.perf_counter() - start)


def run_size(args, size, workdir, do_upstream, do_api_populate):
    topo = Topology(size)
    print('\n== %d flat providers (%d providers in all: %d nested roots '
          'of 4, %d sharing computes, %d storage) on %s'
          % (size, topo.total, topo.nested_roots, topo.sharing_computes,
             topo.storage, args.db), flush=True)
    labels = ['ours'] + (['upstream'] if do_upstream else [])
    urls = {label: recreate_database(args.db, args.db_prefix + label,
                                     workdir)
            for label in labels}
    servers = make_servers(args, workdir, urls)
    queries = QUERY_SETS[args.queries]
    result = {'size': size, 'providers': topo.total, 'services': {},
              'queries': [name for name, _ in queries]}
    try:
        for server in servers:
            server.start()
            res = result['services'][server.label] = {'queries': {}}
            prepare_api(Client(server.port, args.query_timeout))
            seconds = populate(urls[server.label], topo)
            res['populate_sql_per_s'] = topo.total / seconds
            print('  %-8s populated by SQL in %.1f s (%.0f providers/s)'
                  % (server.label, seconds, topo.total / seconds),
                  flush=True)
            sanity(Client(server.port, max(300, args.query_timeout)), topo)
            server.reset_peak()
        subs = {'agg3': name_uuid('agg3'), 'agg7': name_uuid('agg7')}
        for name, query in queries:
            if name == 'plain':
                for server in servers:
                    result['services'][server.label]['rss_queries'] = (
                        server.peak_rss())
                    server.reset_peak()
            path = '/allocation_candidates?' + query.format(**subs)
            for server in servers:
                error, samples, count = time_query(
                    Client(server.port, args.query_timeout), path, args)
                entry = {'error': error, 'count': count, 'n': len(samples)}
                if samples and not error:
                    entry['p50'] = statistics.median(samples)
                    entry['p99'] = percentile(samples, 0.99)
                result['services'][server.label]['queries'][name] = entry
            print_query(result, name, labels)
        for server in servers:
            res = result['services'][server.label]
            res['rss_plain'] = server.peak_rss()
            server.reset_peak()
            cpu = server.cpu_seconds()
            res['claims'] = claims(server.port, args)
            cpu = server.cpu_seconds() - cpu
            res['claims']['cpu_ms_per_claim'] = (
                1000 * cpu / res['claims']['claims']
                if res['claims']['claims'] else None)
            over, consumers = capacity_violations(urls[server.label])
            res['claims'].update(overcommitted=over, consumers=consumers)
            res['rss_claims'] = server.peak_rss()
            if do_api_populate:
                res['populate_api_per_s'] = api_populate(
                    Client(server.port, args.query_timeout),
                    args.api_populate)
        print_summary(result, labels)
    finally:
        for server in servers:
            server.stop()
    return result


# --- output --------------------------------------------------------------

def fmt_ms(entry):
    if entry.get('error'):
        return entry['error']
    return '%.1f / %.1f' % (entry['p50'], entry['p99'])


def ratio(ours, upstream):
    if not ours or not upstream:
        return ''
    return '%.1fx' % (upstream / ours)


def print_query(result, name, labels):
    services = result['services']
    ours = services['ours']['queries'][name]
    line = '  %-10s ours %-18s (%s answers, n=%d)' % (
        name, fmt_ms(ours), ours['count'], ours['n'])
    if 'upstream' in labels:
        up = services['upstream']['queries'][name]
        same = ('same answers' if up['count'] == ours['count']
                else 'answers differ: %s' % up['count'])
        line += '  upstream %-18s n=%d  %s  %s' % (
            fmt_ms(up), up['n'], ratio(ours.get('p50'), up.get('p50')),
            same if not up.get('error') else '')
    print(line, flush=True)


def print_summary(result, labels):
    services = result['services']
    for label in labels:
        res = services[label]
        c = res['claims']
        print('  %-8s claims %.1f/s (%d in %.1f s, p50 %s ms, %d conflicts '
              'retried, %d timeouts, %d errors%s), overcommitted '
              'inventories: %d, consumers written: %d'
              % (label, c['rate'], c['claims'], c['wall'],
                 '%.0f' % c['p50'] if c['p50'] else '-', c['conflicts'],
                 c['timeouts'], len(c['errors']),
                 (': %s' % c['errors'][0]) if c['errors'] else '',
                 c['overcommitted'], c['consumers']))
        if c.get('cpu_ms_per_claim'):
            print('  %-8s CPU of its processes per claim: %.1f ms'
                  % (label, c['cpu_ms_per_claim']))
        for key, title in (('rss_queries', 'limited queries'),
                           ('rss_plain', 'plain query'),
                           ('rss_claims', 'claims')):
            big, total = res[key]
            if big is not None:
                print('  %-8s peak RSS during %s: %.0f MiB largest '
                      'process, %.0f MiB all processes'
                      % (label, title, big, total))
        if 'populate_api_per_s' in res:
            print('  %-8s populating through the API: %.1f providers/s'
                  % (label, res['populate_api_per_s']))
    if 'upstream' in labels:
        up_rate = services['upstream']['claims']['rate']
        print('  claims/s ratio: %s' % (
            ratio(up_rate, services['ours']['claims']['rate'])
            if up_rate else 'upstream made no claim'))
    sys.stdout.flush()


def _query_names(results):
    # Runs saved before the query sets had the scheduler's set.
    return results[0].get('queries') or [name for name, _ in QUERIES]


def print_scaling(results):
    print('\n== p50 in ms by size (ours | upstream | ratio)')
    names = _query_names(results)
    print('  %-10s' % 'providers' + ''.join(
        '%30s' % ('%d (%d flat)' % (r['providers'], r['size']))
        for r in results))
    for name in names:
        cells = []
        for r in results:
            ours = r['services']['ours']['queries'][name]
            up = r['services'].get('upstream', {}).get('queries', {}).get(
                name)
            cell = '%s' % ('%.1f' % ours['p50'] if 'p50' in ours
                           else ours['error'])
            if up is None:
                cell += ' | skipped'
            else:
                cell += ' | %s | %s' % (
                    '%.1f' % up['p50'] if 'p50' in up else up['error'],
                    ratio(ours.get('p50'), up.get('p50')) or '-')
            cells.append('%30s' % cell)
        print('  %-10s' % name + ''.join(cells))


def draw(results, path, title, timeout_ms):
    try:
        import matplotlib
        matplotlib.use('Agg')
        from matplotlib import pyplot
    except ImportError:
        print('matplotlib is not installed: no chart written')
        return
    fig, ax = pyplot.subplots(figsize=(10, 5))
    styles = {'ours': '-', 'upstream': '--'}
    for i, name in enumerate(_query_names(results)):
        colour = 'C%d' % i
        for label, style in styles.items():
            entries = [(r['providers'], r['services'][label]['queries'][name])
                       for r in results if label in r['services']]
            points = [(x, e['p50']) for x, e in entries if 'p50' in e]
            if points:
                ax.plot(*zip(*points), style, marker='o', color=colour,
                        label='%s %s' % (label, name))
            # A query that timed out is drawn at the time-out.
            lost = [(x, timeout_ms) for x, e in entries
                    if e.get('error') == 'timeout']
            if lost:
                ax.plot(*zip(*lost), linestyle='none', marker='x',
                        markersize=9, color=colour)
    ax.set_xscale('log')
    ax.set_yscale('log')
    ax.set_xlabel('resource providers')
    ax.set_ylabel('GET /allocation_candidates p50 (ms)')
    ax.set_title(title, fontsize=9)
    ax.grid(True, which='both', alpha=0.3)
    ax.plot([], [], linestyle='none', marker='x', color='black',
            label='timed out (at the time-out)')
    ax.legend(fontsize=7, loc='upper left', bbox_to_anchor=(1.01, 1))
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    print('chart written to %s' % path)


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description=__doc__.split('\n\n')[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument('--db', choices=sorted(DB_URLS),
                        default='postgresql',
                        help='sqlite: a file per service in the working '
                             'directory')
    parser.add_argument('--queries', choices=sorted(QUERY_SETS),
                        default='scheduler',
                        help='the set of queries timed (see README.md)')
    parser.add_argument('--sizes', default='1000,10000,100000',
                        help='flat provider counts, comma separated')
    parser.add_argument('--quick', action='store_true',
                        help='1000 providers only, fewer repetitions, '
                             'shorter claims')
    parser.add_argument('--reps', type=int, default=20,
                        help='timed repetitions of each query')
    parser.add_argument('--warmup', type=int, default=2)
    parser.add_argument('--query-budget', type=float, default=20,
                        help='seconds of repetitions per query and service '
                             '(at least 3 repetitions)')
    parser.add_argument('--query-timeout', type=float, default=60,
                        help='a request taking longer is reported as '
                             '"timeout"')
    parser.add_argument('--clients', type=int, default=16)
    parser.add_argument('--claims-seconds', type=float, default=30,
                        help='claimers start no new claim after this')
    parser.add_argument('--claims-timeout', type=float, default=300,
                        help='a claimer request taking longer counts as a '
                             'time-out (it includes the time queued behind '
                             'the other clients\' requests)')
    parser.add_argument('--api-populate', type=int, default=50,
                        help='providers created through each API at the '
                             'first size, to time populating (0: none)')
    parser.add_argument('--upstream-version', default='16.0.0')
    parser.add_argument('--upstream-venv',
                        default=os.path.join(HERE, '.upstream-venv'))
    parser.add_argument('--upstream-workers', type=int, default=2,
                        help='processes of each service: gunicorn workers '
                        'upstream, [placement_api]processes ours')
    parser.add_argument('--upstream-max-size', type=int, default=10000,
                        help='sizes above this run ours only')
    parser.add_argument('--no-upstream', action='store_true')
    parser.add_argument('--chart', help='PNG to write (needs matplotlib)')
    parser.add_argument('--json', help='file to write the results to')
    parser.add_argument('--replot', metavar='JSON',
                        help='only draw --chart again from the --json file '
                             'of an earlier run')
    parser.add_argument('--db-prefix', default='bench_',
                        help='the databases (SQLite files) dropped and '
                             'created are PREFIXours and PREFIXupstream; '
                             'give runs sharing a server different '
                             'prefixes')
    parser.add_argument('--workdir', help='configurations and logs '
                                          '(default: a new temporary one)')
    args = parser.parse_args(argv)
    if args.quick:
        args.sizes, args.reps, args.claims_seconds = '1000', 10, 10
    args.sizes = [int(s) for s in args.sizes.split(',')]
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.replot:
        with open(args.replot) as f:
            saved = json.load(f)
        draw(saved['results'], args.chart, saved['title'],
             saved['timeout'] * 1000)
        return 0
    if not args.no_upstream:
        ensure_upstream_venv(args.upstream_venv, args.upstream_version)
    workdir = args.workdir or tempfile.mkdtemp(prefix='placement-bench-')
    os.makedirs(workdir, exist_ok=True)
    when = datetime.datetime.now(datetime.timezone.utc)
    machine = '%s, %d cores, %s' % (platform.node(), os.cpu_count(),
                                    platform.python_version())
    reference = machine_reference()
    load = os.getloadavg()[0]
    print('%s UTC; %s; load %s; machine reference %.3f s (pure-Python '
          'loop, lower is faster); logs in %s'
          % (when.strftime('%Y-%m-%d %H:%M'), machine,
             ' '.join('%.1f' % x for x in os.getloadavg()), reference,
             workdir), flush=True)
    results = []
    for i, size in enumerate(args.sizes):
        do_upstream = (not args.no_upstream
                       and size <= args.upstream_max_size)
        if not do_upstream and not args.no_upstream:
            print('\n(upstream skipped at %d: above --upstream-max-size)'
                  % size)
        results.append(run_size(args, size, workdir, do_upstream,
                                i == 0 and args.api_populate > 0))
    print_scaling(results)
    title = ('GET /allocation_candidates p50, solid: ours, dashed: upstream '
             'Placement %s\n%s on %s, %s UTC (machine reference %.3f s, '
             'load %.1f at the start)'
             % (args.upstream_version, args.db, machine,
                when.strftime('%Y-%m-%d %H:%M'), reference,
                load))
    if args.chart:
        draw(results, args.chart, title, args.query_timeout * 1000)
    if args.json:
        with open(args.json, 'w') as f:
            json.dump({'when': when.isoformat(), 'machine': machine,
                       'reference': reference, 'load': load,
                       'db': args.db, 'title': title,
                       'timeout': args.query_timeout,
                       'results': results}, f, indent=1)
    return 0


if __name__ == '__main__':
    sys.exit(main())
