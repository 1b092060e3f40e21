"""Print the ids of the functional tests that exercise a database dialect.

``tools/run-tests.sh`` runs every test on SQLite, then only these on
PostgreSQL and MariaDB. A test class opts out by setting
``dialect_neutral = True`` (see ``tests.base.TestCase``): its SQL is
already exercised by other tests on every database, and what it checks
(an emulated BMC, a real client over HTTP, the command line) does not
depend on the database. Everything else under ``tests/functional``
(gabbi suites included) is printed.

Usage: ``python tools/dialect_tests.py [OUTPUT_FILE]``; with no file the
ids go to standard output, one a line, in the form ``stestr run
--load-list`` reads.
"""

import os
import sys
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _walk(suite):
    """Every test case of a suite, however deeply it is nested."""
    for item in suite:
        if isinstance(item, unittest.TestSuite):
            yield from _walk(item)
        else:
            yield item


def dialect_test_ids(start_dir='tests/functional'):
    """Ids of the tests under ``start_dir`` not marked dialect-neutral."""
    loader = unittest.TestLoader()
    suite = loader.discover(os.path.join(ROOT, start_dir),
                            top_level_dir=ROOT)
    ids = []
    for test in _walk(suite):
        failure = getattr(unittest.loader, '_FailedTest', None)
        if failure is not None and isinstance(test, failure):
            # A module that does not import: keep it, so that its error
            # is reported by the run instead of being hidden here.
            ids.append(test.id())
            continue
        if not getattr(test, 'dialect_neutral', False):
            ids.append(test.id())
    return ids


def main(argv):
    sys.path.insert(0, ROOT)
    ids = dialect_test_ids()
    text = ''.join('%s\n' % i for i in ids)
    if len(argv) > 1:
        with open(argv[1], 'w', encoding='utf-8') as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
