"""Write the recorded durations of the slow tests as a subunit v2 stream.

stestr spreads tests over its workers by the durations its repository
holds; a fresh clone holds none and deals tests out in turn, so a few
slow tests can end up on one worker and keep the whole run waiting.
``tools/run-tests.sh`` feeds this stream to ``stestr load`` once, when it
creates the repository, so that the first run is balanced too. Later
runs use the durations they measured themselves.

``tools/test_times.txt`` lists ``<seconds> <test id>`` for the tests
that took over a second in a full run. It need not be current: a test
it does not name is dealt out in turn, and a name that no longer exists
is ignored. Refresh it after adding slow tests with::

    python tools/seed_test_times.py --refresh

which rewrites it from the repository's last run.
"""

import datetime
import os
import subprocess
import sys

import subunit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMES = os.path.join(ROOT, 'tools', 'test_times.txt')
SLOW = 1.0


def read_times(path=TIMES):
    """``[(test id, seconds)]`` from the times file."""
    times = []
    with open(path, encoding='utf-8') as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith('#'):
                continue
            seconds, test_id = line.split(None, 1)
            times.append((test_id, float(seconds)))
    return times


def write_stream(times, out):
    """Each test as started and passed ``seconds`` later."""
    stream = subunit.StreamResultToBytes(out)
    start = datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc)
    for test_id, seconds in times:
        stream.status(test_id=test_id, test_status='inprogress',
                      timestamp=start)
        stream.status(test_id=test_id, test_status='success',
                      timestamp=start + datetime.timedelta(seconds=seconds))


def refresh(path=TIMES):
    """Rewrite the times file from the repository's last run."""
    out = subprocess.run(['stestr', 'slowest', '--all'], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    rows = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) != 2 or not parts[0].startswith('tests.'):
            continue
        try:
            seconds = float(parts[1])
        except ValueError:
            continue
        if seconds >= SLOW:
            rows.append((seconds, parts[0]))
    with open(path, 'w', encoding='utf-8') as f:
        f.write('# seconds test-id: see tools/seed_test_times.py\n')
        for seconds, test_id in sorted(rows, key=lambda r: r[1]):
            f.write('%.1f %s\n' % (seconds, test_id))
    return len(rows)


def main(argv):
    if argv[1:] == ['--refresh']:
        print('%d slow tests recorded in %s' % (refresh(), TIMES))
        return 0
    write_stream(read_times(), sys.stdout.buffer)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
