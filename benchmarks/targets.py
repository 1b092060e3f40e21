#!/usr/bin/env python3
"""Every performance target of the project, measured in one run.

Runs the benchmarks of this directory one after the other (never two at
once: they share the machine's cores), each against the upstream service
it is compared with where there is one, then prints one table of every
target (the measure, the target, the figure, met or not) and draws it as
one chart (``--chart``): each target's figure divided by the figure
asked, on a log scale, so that every bar past 1 is a target met.

    .venv/bin/python benchmarks/targets.py --chart benchmarks/targets.png
    .venv/bin/python benchmarks/targets.py --steps flat-sqlite,deferred-sqlite
    .venv/bin/python benchmarks/targets.py --report OUT   # table of a run
    .venv/bin/python benchmarks/targets.py --quick        # the script itself

The steps and what each runs are listed by ``--list``; see
benchmarks/README.md. Each step writes its log (``STEP.log``) and what
was read from it (``STEP.json``) into ``--out``; ``--report`` reads such
a directory again. ``--quick`` runs every step at a small size (minutes,
not an hour): it checks that the steps run, its figures are not the
targets' sizes and the table says so.
"""

import argparse
import datetime
import glob
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON = sys.executable
PG_ADMIN = 'postgresql+psycopg2://postgres@127.0.0.1/test'
IRONIC_VERSION = '39.0.0'
PREFIX = 'targets_'


def placement(db, sizes, *extra):
    return [PYTHON, os.path.join(HERE, 'placement_bench.py'), '--db', db,
            '--sizes', sizes, '--api-populate', '0', '--db-prefix', PREFIX,
            *extra]


def matrix(*steps):
    return ['bash', os.path.join(HERE, 'allocation_matrix.sh'), *steps]


def deferred(nodes, *extra):
    return [PYTHON, os.path.join(HERE, 'deferred_actions_bench.py'),
            '--no-blocking', '-n', str(nodes), *extra]


def steps(quick):
    """(name, command, what it measures) of every step, in order."""
    if quick:
        flat, sched, large, nodes, small = '200', '1000', '2000', 100, 50
        claims, reps = ['--claims-seconds', '5'], ['--reps', '3']
        firmware = ['--bmc-seconds', '5', '--poll', '2']
        dur = '30'
    else:
        flat, sched, large, nodes, small = ('1000', '1000,10000', '100000',
                                            1000, 200)
        claims, reps = ['--claims-seconds', '30'], ['--reps', '10']
        firmware = []
        dur = '90'
    return [
        ('flat-sqlite',
         placement('sqlite', flat, '--queries', 'flat', '--claims-seconds',
                   '0', '--reps', '3' if quick else '20'),
         'the flat set of candidates queries on SQLite, ours and upstream'),
        ('scheduler-pg',
         placement('postgresql', sched, '--query-budget', '10', *reps,
                   *claims),
         'the scheduler set and claims on PostgreSQL, ours and upstream'),
        ('large-pg',
         placement('postgresql', large, '--no-upstream', '--query-budget',
                   '10', '--reps', '3' if quick else '5',
                   '--claims-seconds', '0'),
         'the scheduler set at the largest size, ours, PostgreSQL'),
        ('large-mysql',
         placement('mysql', large, '--no-upstream', '--query-budget', '10',
                   '--reps', '3' if quick else '5', '--claims-seconds', '0'),
         'the same on MariaDB'),
        ('backends-pg',
         matrix('ours postgresql default %d 16 %s' % (nodes, dur),
                'ours_placement postgresql default %d 16 %s' % (nodes, dur)),
         'node allocations, database backend and placement backend, '
         'PostgreSQL'),
        ('backends-sqlite',
         matrix('ours sqlite default %d 16 %s' % (nodes, dur),
                'ours_placement sqlite default %d 16 %s' % (nodes, dur)),
         'the same on SQLite'),
        ('ironic-mysql',
         matrix('ours mysql default %d 16' % small,
                'upstream mysql %d 16' % small,
                'ours mysql default %d 16 %s' % (nodes, dur),
                'upstream mysql %d 16 %s' % (nodes, dur)),
         'node allocations, ours (default configuration) and ironic %s, '
         'MariaDB' % IRONIC_VERSION),
        ('deferred-sqlite',
         deferred(small if quick else 1000, *firmware),
         'firmware updates of 60 s of BMC time, 8 workers, SQLite'),
        ('deferred-pg',
         deferred(nodes if quick else 5000, *firmware, '--db-url', PG_ADMIN,
                  '--db-name', PREFIX + 'deferred'),
         'the same on PostgreSQL'),
    ]


# --- reading each step's output -----------------------------------------

def _matrix_results(out):
    rows = {}
    for path in sorted(glob.glob(os.path.join(out, '*.out'))):
        text = open(path).read()
        start = text.rfind('\n[')
        if start >= 0:
            rows[os.path.basename(path)[:-4]] = json.loads(text[start:])
    return rows


def read_step(name, log, out):
    """What a step measured, from its output, as plain data."""
    if name in ('flat-sqlite', 'scheduler-pg', 'large-pg', 'large-mysql'):
        with open(os.path.join(out, 'placement.json')) as f:
            return json.load(f)['results']
    if name.startswith(('backends-', 'ironic-')):
        return _matrix_results(out)
    text = open(log).read()
    done = re.search(r'all completed: (\w+) .* in ([\d.]+) s, (\d+) calls',
                     text)
    threads = re.search(r'threads: (\d+) before the conductor, peak (\d+)',
                        text)
    cpu = re.search(r'CPU time of this process: ([\d.]+) s', text)
    nodes = re.search(r': (\d+) nodes, (\d+) worker threads', text)
    if not (done and threads and nodes):
        return None
    return {'completed': done.group(1) == 'True',
            'seconds': float(done.group(2)), 'calls': int(done.group(3)),
            'threads_before': int(threads.group(1)),
            'threads_peak': int(threads.group(2)),
            'cpu': float(cpu.group(1)) if cpu else None,
            'nodes': int(nodes.group(1)), 'pool': int(nodes.group(2))}


# --- the targets ---------------------------------------------------------

class Row:
    def __init__(self, measure, target, figure, score, note=''):
        self.measure, self.target, self.figure = measure, target, figure
        # figure / target, so that >= 1 is met; None: not measured.
        self.score = score
        self.note = note

    @property
    def met(self):
        if self.score is None:
            return 'not measured'
        return 'met' if self.score >= 1 else 'not met'


def _query(result, label, name):
    return result['services'].get(label, {}).get('queries', {}).get(name, {})


def _speedup(result, name):
    ours, up = _query(result, 'ours', name), _query(result, 'upstream', name)
    if 'p50' not in ours or 'p50' not in up:
        return None, 'ours %s, upstream %s' % (
            ours.get('error') or ours.get('p50'),
            up.get('error') or up.get('p50'))
    ratio = up['p50'] / ours['p50']
    same = '' if ours.get('count') == up.get('count') else ', other answers'
    return ratio, '%.1f / %.1f ms = %.1f×%s' % (ours['p50'], up['p50'],
                                                ratio, same)


def _by_size(results, size):
    for result in results or ():
        if result['size'] == size:
            return result
    return None


def flat_rows(data, size):
    rows = []
    result = _by_size(data, size)
    for name in ('limit10', 'required', 'forbidden', 'member_of1',
                 'member_of2', 'plain'):
        want = 20 if name == 'limit10' else 5
        if result is None:
            rows.append(Row('SQLite %d flat, `%s`, p50' % (size, name),
                            '≥ %d× upstream' % want, '', None))
            continue
        ratio, text = _speedup(result, name)
        rows.append(Row('SQLite %d flat, `%s`, p50' % (size, name),
                        '≥ %d× upstream' % want, text,
                        ratio / want if ratio else None))
    return rows


def scheduler_rows(data, small, large):
    rows = []
    result = _by_size(data, large)
    if result is not None:
        ratio, text = _speedup(result, 'plain')
        rows.append(Row('PostgreSQL %d flat, no limit, p50' % large,
                        '≥ 5× upstream', text,
                        ratio / 5 if ratio else None))
        rss = result['services']['ours'].get('rss_plain', [None])[0]
        rows.append(Row('PostgreSQL %d flat, no limit, API process RSS'
                        % large, '< 300 MiB',
                        '%.0f MiB' % rss if rss else '',
                        300 / rss if rss else None))
        for name in ('member_of', 'sharing', 'traits'):
            ratio, text = _speedup(result, name)
            rows.append(Row('PostgreSQL %d, `%s`, p50' % (large, name),
                            '≥ 30× upstream', text,
                            ratio / 30 if ratio else None))
        ours = _query(result, 'ours', 'limit10')
        rows.append(Row('PostgreSQL %d flat, `limit10`, p50' % large,
                        '< 15 ms', '%.1f ms' % ours['p50']
                        if 'p50' in ours else str(ours.get('error')),
                        15 / ours['p50'] if 'p50' in ours else None))
    for size, want in ((small, 20), (large, 100)):
        result = _by_size(data, size)
        if result is None or (want == 100 and large == small):
            continue
        ours = result['services']['ours'].get('claims') or {}
        up = result['services'].get('upstream', {}).get('claims') or {}
        over = ours.get('overcommitted')
        score, text = None, 'ours %.1f/s' % ours.get('rate', 0)
        if up.get('rate'):
            ratio = ours['rate'] / up['rate']
            text = '%.1f / %.1f per s = %.1f×' % (ours['rate'], up['rate'],
                                                  ratio)
            score = ratio / want if not over else 0
        text += ', %s overcommitted (upstream %s)' % (
            over, up.get('overcommitted'))
        rows.append(Row('claims/s, 16 clients, %d flat, PostgreSQL' % size,
                        '≥ %d× upstream, 0 overcommitted' % want, text,
                        score))
    return rows


def large_rows(pg, mysql, size):
    rows = []
    pg, mysql = _by_size(pg, size), _by_size(mysql, size)
    if pg is None or mysql is None:
        return [Row('MariaDB %d, every query' % size,
                    '≤ 2× PostgreSQL, < 100 ms with a limit', '', None)]
    for name in pg['queries']:
        a, b = _query(pg, 'ours', name), _query(mysql, 'ours', name)
        if 'p50' not in a or 'p50' not in b:
            rows.append(Row('MariaDB %d, `%s`' % (size, name), '≤ 2× PG',
                            'PG %s, MariaDB %s' % (a.get('error'),
                                                   b.get('error')), 0))
            continue
        score = 2 * a['p50'] / b['p50']
        target = '≤ 2× PostgreSQL'
        if name != 'plain':
            target += ', < 100 ms'
            score = min(score, 100 / b['p50'])
        rows.append(Row('MariaDB %d, `%s`, p50' % (size, name), target,
                        '%.1f ms (PostgreSQL %.1f ms)' % (b['p50'],
                                                          a['p50']),
                        score))
    return rows


def _rate(rows, prefix, nodes):
    for tag, summaries in rows.items():
        if tag.startswith(prefix) and tag.endswith('-n%d' % nodes):
            for s in summaries:
                if s['clients'] == 16:
                    return s
    return None


def backend_rows(data, kind, nodes):
    base = _rate(data or {}, 'ours-', nodes)
    mine = _rate(data or {}, 'oursplacement-', nodes)
    measure = ('node allocations/s, `placement` / `database` backend, '
               '%d nodes, %s' % (nodes, kind))
    if not base or not mine or not base['allocations_per_second']:
        return [Row(measure, '≥ 1×', '', None)]
    ratio = mine['allocations_per_second'] / base['allocations_per_second']
    return [Row(measure, '≥ 1×', '%.1f / %.1f per s = %.2f×' % (
        mine['allocations_per_second'], base['allocations_per_second'],
        ratio), ratio)]


def ironic_rows(data, small, large):
    rows = []
    for nodes, want in ((small, 30), (large, 60)):
        ours = _rate(data or {}, 'ours-', nodes)
        theirs = _rate(data or {}, 'upstream-', nodes)
        measure = ('node allocations/s vs ironic %s, %d nodes, MariaDB'
                   % (IRONIC_VERSION, nodes))
        target = '≥ %d×' % want + (', p50 < 100 ms' if want == 60 else '')
        if not ours or not theirs or not theirs['allocations_per_second']:
            rows.append(Row(measure, target, '', None))
            continue
        ratio = (ours['allocations_per_second']
                 / theirs['allocations_per_second'])
        score = ratio / want
        if want == 60:
            score = min(score, 100 / ours['latency_p50_ms'])
        rows.append(Row(measure, target, '%.1f / %.1f per s = %.1f×, '
                        'p50 %.0f ms' % (ours['allocations_per_second'],
                                         theirs['allocations_per_second'],
                                         ratio, ours['latency_p50_ms']),
                        score))
    return rows


def deferred_rows(sqlite, pg):
    rows = []
    for data, kind in ((sqlite, 'SQLite'), (pg, 'PostgreSQL')):
        if not data:
            rows.append(Row('firmware updates, %s' % kind, '< 120 s', '',
                            None))
            continue
        measure = ('%d firmware updates, 8 workers, %s' % (data['nodes'],
                                                           kind))
        rows.append(Row(measure, '< 120 s, all completed',
                        '%.1f s, %d calls, %.1f s of CPU' % (
                            data['seconds'], data['calls'],
                            data['cpu'] or 0),
                        120 / data['seconds'] if data['completed'] else 0))
    if sqlite and pg:
        grown = ((pg['threads_peak'] - pg['threads_before'])
                 - (sqlite['threads_peak'] - sqlite['threads_before']))
        # The periodic tasks' pool grows by a few threads when runs
        # overlap on a loaded machine: 4 threads of slack.
        rows.append(Row('peak threads, %d against %d actions'
                        % (pg['nodes'], sqlite['nodes']),
                        'independent of the count',
                        '+%d and +%d over the threads before' % (
                            pg['threads_peak'] - pg['threads_before'],
                            sqlite['threads_peak']
                            - sqlite['threads_before']),
                        1.0 if grown <= 4 else 4.0 / grown))
    return rows


def table(found, quick):
    if quick:
        sizes = dict(flat=200, small=1000, large=1000, huge=2000, nodes=100,
                     few=50)
    else:
        sizes = dict(flat=1000, small=1000, large=10000, huge=100000,
                     nodes=1000, few=200)
    rows = flat_rows(found.get('flat-sqlite'), sizes['flat'])
    rows += scheduler_rows(found.get('scheduler-pg'), sizes['small'],
                           sizes['large'])
    rows += large_rows(found.get('large-pg'), found.get('large-mysql'),
                       sizes['huge'])
    rows += backend_rows(found.get('backends-pg'), 'PostgreSQL',
                         sizes['nodes'])
    rows += backend_rows(found.get('backends-sqlite'), 'SQLite',
                         sizes['nodes'])
    rows += ironic_rows(found.get('ironic-mysql'), sizes['few'],
                        sizes['nodes'])
    rows += deferred_rows(found.get('deferred-sqlite'),
                          found.get('deferred-pg'))
    return rows


def print_table(rows, header):
    print(header)
    print()
    print('| measure | target | measured (ours / upstream) | |')
    print('|---|---|---|---|')
    for row in rows:
        print('| %s | %s | %s | %s |' % (row.measure, row.target,
                                         row.figure or '', row.met))
    met = sum(1 for r in rows if r.met == 'met')
    print('\n%d of %d targets met; %d not measured'
          % (met, len(rows), sum(1 for r in rows if r.score is None)))


def draw(rows, path, title):
    try:
        import matplotlib
        matplotlib.use('Agg')
        from matplotlib import pyplot
    except ImportError:
        print('matplotlib is not installed: no chart written')
        return
    shown = [r for r in rows if r.score is not None]
    height = 0.34 * len(shown) + 1.8
    fig, ax = pyplot.subplots(figsize=(13, height))
    labels = [textwrap.shorten('%s (%s)' % (r.measure, r.target), 95)
              for r in shown]
    scores = [max(r.score, 0.01) for r in shown]
    colours = ['tab:green' if r.score >= 1 else 'tab:red' for r in shown]
    y = list(range(len(shown)))[::-1]
    ax.barh(y, scores, color=colours)
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=6)
    ax.set_xscale('log')
    ax.axvline(1, color='black', linewidth=1)
    ax.set_xlabel('figure / target (past 1: met)')
    ax.set_title('\n'.join(textwrap.wrap(title, 90)), fontsize=8)
    ax.grid(True, axis='x', which='both', alpha=0.3)
    fig.subplots_adjust(left=0.42, right=0.97, top=1 - 0.8 / height,
                        bottom=0.7 / height)
    fig.savefig(path, dpi=90)
    print('chart written to %s' % path)


# --- running ---------------------------------------------------------------

def ensure_ironic(venv):
    if os.path.exists(os.path.join(venv, 'bin', 'ironic')):
        return
    print('Installing ironic==%s into %s' % (IRONIC_VERSION, venv),
          flush=True)
    subprocess.run([sys.executable, '-m', 'venv', venv], check=True)
    pip = os.path.join(venv, 'bin', 'pip')
    subprocess.run([pip, 'install', '-q', 'ironic==%s' % IRONIC_VERSION,
                    'pymysql', 'psycopg2-binary'], check=True)


def run_step(name, command, out):
    step_out = os.path.join(out, name)
    shutil.rmtree(step_out, ignore_errors=True)
    os.makedirs(step_out)
    env = dict(os.environ, OUT=step_out,
               ALLOC_BIN=os.path.dirname(PYTHON),
               PYTHON=PYTHON, PYTHONPATH=os.path.dirname(HERE))
    if command[1].endswith('placement_bench.py'):
        command = command + ['--json', os.path.join(step_out,
                                                    'placement.json'),
                             '--workdir', step_out]
    log = os.path.join(out, name + '.log')
    started = time.monotonic()
    print('%s %s: %s' % (time.strftime('%H:%M:%S'), name,
                         shlex.join(command)), flush=True)
    with open(log, 'w') as f:
        code = subprocess.call(command, stdout=f, stderr=subprocess.STDOUT,
                               cwd=step_out, env=env)
    seconds = time.monotonic() - started
    try:
        data = read_step(name, log, step_out)
    except (OSError, ValueError, KeyError) as exc:
        data = None
        print('  could not read its results: %s' % exc)
    print('  exit %d in %.0f s%s' % (code, seconds,
                                     '' if data else ', no result'),
          flush=True)
    with open(os.path.join(out, name + '.json'), 'w') as f:
        json.dump({'exit': code, 'seconds': seconds,
                   'load': os.getloadavg()[0], 'data': data}, f, indent=1)


def load(out):
    found = {}
    for path in glob.glob(os.path.join(out, '*.json')):
        with open(path) as f:
            found[os.path.basename(path)[:-5]] = json.load(f).get('data')
    return found


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split('\n\n')[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument('--steps', help='comma separated steps to run '
                        '(default: every step; see --list)')
    parser.add_argument('--list', action='store_true',
                        help='print the steps and their commands')
    parser.add_argument('--quick', action='store_true',
                        help='small sizes: checks the script, not targets')
    parser.add_argument('--out', help='directory of the logs and results '
                        '(default: a new temporary one)')
    parser.add_argument('--report', metavar='OUT',
                        help='only print the table (and --chart) of the '
                        'run whose --out this was')
    parser.add_argument('--chart', help='PNG to write (needs matplotlib)')
    parser.add_argument('--ironic-venv',
                        default=os.path.join(HERE, '.ironic-venv'),
                        help='virtualenv of upstream ironic, created with '
                        'ironic==%s from PyPI when missing' % IRONIC_VERSION)
    args = parser.parse_args(argv)
    plan = steps(args.quick)
    if args.list:
        for name, command, what in plan:
            print('%-16s %s\n%16s %s' % (name, what, '',
                                         shlex.join(command)))
        return 0
    out = args.report or args.out or tempfile.mkdtemp(prefix='targets-')
    meta_path = os.path.join(out, 'run.meta')
    if not args.report:
        os.makedirs(out, exist_ok=True)
        wanted = (set(args.steps.split(',')) if args.steps
                  else {name for name, _, _ in plan})
        unknown = wanted - {name for name, _, _ in plan}
        if unknown:
            parser.error('unknown steps: %s' % ', '.join(sorted(unknown)))
        when = datetime.datetime.now(datetime.timezone.utc)
        with open(meta_path, 'w') as f:
            json.dump({'when': when.strftime('%Y-%m-%d %H:%M'),
                       'machine': '%s, %d cores' % (platform.node(),
                                                    os.cpu_count()),
                       'load': os.getloadavg()[0], 'quick': args.quick}, f)
        print('results in %s' % out, flush=True)
        if 'ironic-mysql' in wanted:
            ensure_ironic(args.ironic_venv)
            os.environ['IRONIC_VENV'] = args.ironic_venv
        for name, command, _ in plan:
            if name in wanted:
                run_step(name, command, out)
    with open(meta_path) as f:
        meta = json.load(f)
    header = ('%s UTC, %s, load %.1f at the start%s' % (
        meta['when'], meta['machine'], meta['load'],
        ' (--quick: not the sizes of the targets)' if meta['quick']
        else ''))
    rows = table(load(out), meta['quick'])
    print_table(rows, header)
    if args.chart:
        draw(rows, args.chart, 'Performance targets, one run: ' + header)
    return 0


if __name__ == '__main__':
    sys.exit(main())
