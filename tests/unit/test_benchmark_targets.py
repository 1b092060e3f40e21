"""benchmarks/targets.py: what it calls met, from the benchmarks' results."""

import importlib.util
import json
import os

import fixtures

from tests import base

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, '..', '..', 'benchmarks', 'targets.py')


def load_script():
    spec = importlib.util.spec_from_file_location('bench_targets', SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def placement_result(size, ours, upstream, count=10, **extra):
    """One size of placement_bench.py's --json results."""
    def service(times):
        return {'queries': {name: {'p50': ms, 'count': count, 'n': 5,
                                   'error': None}
                            for name, ms in times.items()}, **extra}
    services = {'ours': service(ours)}
    if upstream is not None:
        services['upstream'] = service(upstream)
    return {'size': size, 'queries': list(ours), 'services': services}


class TargetsTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.targets = load_script()

    def rows(self, found, quick=False):
        return {row.measure: row for row in self.targets.table(found, quick)}

    def test_nothing_run_is_not_measured(self):
        rows = self.targets.table({}, False)
        self.assertTrue(rows)
        self.assertEqual({'not measured'}, {row.met for row in rows})

    def test_flat_set_ratios(self):
        names = ('limit10', 'required', 'forbidden', 'member_of1',
                 'member_of2', 'plain')
        ours = dict.fromkeys(names, 10.0)
        upstream = dict.fromkeys(names, 60.0)
        upstream['limit10'] = 150.0    # 15x: short of 20x
        rows = self.rows({'flat-sqlite': [
            placement_result(1000, ours, upstream)]})
        self.assertEqual('not met',
                         rows['SQLite 1000 flat, `limit10`, p50'].met)
        self.assertIn('15.0×', rows['SQLite 1000 flat, `limit10`, p50'].figure)
        for name in names[1:]:
            self.assertEqual(
                'met', rows['SQLite 1000 flat, `%s`, p50' % name].met, name)

    def test_claims_overcommitted_is_never_met(self):
        queries = {'limit10': 10.0, 'traits': 10.0, 'member_of': 10.0,
                   'sharing': 10.0, 'plain': 100.0}
        slow = {name: 1000.0 for name in queries}
        small = placement_result(1000, queries, slow)
        small['services']['ours']['claims'] = {'rate': 300.0,
                                               'overcommitted': 1}
        small['services']['upstream']['claims'] = {'rate': 10.0,
                                                   'overcommitted': 0}
        large = placement_result(10000, queries, slow,
                                 rss_plain=[400.0, 800.0])
        rows = self.rows({'scheduler-pg': [small, large]})
        claims = rows['claims/s, 16 clients, 1000 flat, PostgreSQL']
        self.assertEqual('not met', claims.met)     # 30x, but overcommitted
        self.assertEqual(
            'not met',
            rows['PostgreSQL 10000 flat, no limit, API process RSS'].met)
        self.assertEqual('met',
                         rows['PostgreSQL 10000, `sharing`, p50'].met)
        self.assertEqual('met',
                         rows['PostgreSQL 10000 flat, `limit10`, p50'].met)

    def test_mariadb_against_postgresql(self):
        pg = placement_result(100000, {'limit10': 30.0, 'plain': 1000.0},
                              None)
        mysql = placement_result(100000, {'limit10': 110.0, 'plain': 1900.0},
                                 None)
        rows = self.rows({'large-pg': [pg], 'large-mysql': [mysql]})
        # Within 2x would allow 60 ms, and 110 ms is over 100 ms anyway.
        self.assertEqual('not met', rows['MariaDB 100000, `limit10`, p50'].met)
        self.assertEqual('met', rows['MariaDB 100000, `plain`, p50'].met)

    def test_deferred_actions_from_the_log(self):
        out = self.useFixture(fixtures.TempDir()).path
        log = os.path.join(out, 'deferred-pg.log')
        with open(log, 'w') as f:
            f.write('deferred (BMC job 60 s, polled every 15 s): 5000 '
                    'nodes, 8 worker threads\n'
                    "  all completed: True ({'COMPLETED': 5000}) in 100.5 "
                    's, 26000 calls\n'
                    '  CPU time of this process: 40.1 s (machine load '
                    'average 1.0 at the start, 2.0 at the end)\n'
                    '  threads: 3 before the conductor, peak 25 (+22): '
                    'x 1\n')
        data = self.targets.read_step('deferred-pg', log, out)
        self.assertEqual({'completed': True, 'seconds': 100.5,
                          'calls': 26000, 'threads_before': 3,
                          'threads_peak': 25, 'cpu': 40.1, 'nodes': 5000,
                          'pool': 8}, data)
        sqlite = dict(data, nodes=1000, seconds=130.0, threads_peak=24)
        rows = self.rows({'deferred-pg': data, 'deferred-sqlite': sqlite})
        self.assertEqual(
            'met', rows['5000 firmware updates, 8 workers, PostgreSQL'].met)
        self.assertEqual(
            'not met', rows['1000 firmware updates, 8 workers, SQLite'].met)
        self.assertEqual(
            'met', rows['peak threads, 5000 against 1000 actions'].met)

    def test_report_reads_a_run_directory(self):
        out = self.useFixture(fixtures.TempDir()).path
        with open(os.path.join(out, 'run.meta'), 'w') as f:
            json.dump({'when': '2026-01-01 00:00', 'machine': 'm, 2 cores',
                       'load': 0.1, 'quick': False}, f)
        with open(os.path.join(out, 'backends-pg.json'), 'w') as f:
            json.dump({'exit': 0, 'seconds': 1, 'load': 0.1, 'data': {
                'ours-postgresql-wdefault-n1000': [
                    {'clients': 16, 'allocations_per_second': 100.0}],
                'oursplacement-postgresql-wdefault-n1000': [
                    {'clients': 16, 'allocations_per_second': 120.0}]}}, f)
        found = self.targets.load(out)
        rows = self.rows(found)
        row = rows['node allocations/s, `placement` / `database` backend, '
                   '1000 nodes, PostgreSQL']
        self.assertEqual('met', row.met)
        self.assertIn('1.20×', row.figure)
