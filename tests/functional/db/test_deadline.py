"""``db.deadline.bounded`` on the database of the run.

A statement made slow by its data (a count over a billion joined rows)
is stopped at the deadline or when the client goes away; the connection
is clean afterwards.
"""

import socket
import threading
import time

from oslo_db import exception as db_exc
import sqlalchemy as sa

from alloc_framework.common import deadline as deadline_mod
from alloc_framework.common import exception
from alloc_framework.db import deadline as db_deadline
from tests import base

# Counts a billion rows: far longer than any test waits, on every
# database (a recursion of at most 1,000 steps, MariaDB's default bound).
SLOW = ('WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c '
        'WHERE n < 1000) SELECT count(*) FROM c a, c b, c d '
        'WHERE a.n + b.n + d.n > 0')
# The same over 1,000 rows, done in a moment.
QUICK = SLOW.replace('n < 1000', 'n < 10')
OPTION = '[placement] candidates_deadline'
# What a loaded test machine may add to a deadline before the statement
# is seen to stop.
SLACK = 5.0


class BoundedTestCase(base.DBTestCase):

    def setUp(self):
        super().setUp()
        self.conn = self.db.engine.connect()
        self.addCleanup(self.conn.close)
        self.dialect = self.db.engine.dialect

    def _limit(self):
        """The database's own per-statement limit of the session.

        Read in the current transaction, or in one of its own.
        """
        own = not self.conn.in_transaction()
        value = None
        if self.dialect.name == 'postgresql':
            value = self.conn.exec_driver_sql(
                'SHOW statement_timeout').scalar()
        elif self.dialect.name == 'mysql':
            value = float(self.conn.exec_driver_sql(
                'SELECT @@SESSION.max_statement_time').scalar())
        if own:
            self.conn.commit()
        return value

    def _quick(self):
        """The statement that the deadline stopped, short: it runs."""
        value = self.conn.exec_driver_sql(QUICK).scalar()
        self.conn.commit()
        return value

    def _run(self, deadline, statement, wait=0):
        with self.conn.begin():
            with db_deadline.bounded(self.conn, deadline):
                time.sleep(wait)
                return self.conn.exec_driver_sql(statement).scalar()

    def _run_slow(self, deadline, expected):
        start = time.monotonic()
        self.assertRaises(expected, self._run, deadline, SLOW)
        return time.monotonic() - start

    def test_stopped_at_deadline(self):
        before = self._limit()
        deadline = deadline_mod.Deadline(0.5, OPTION)
        elapsed = self._run_slow(deadline, exception.DeadlineExceeded)
        self.assertGreaterEqual(elapsed, 0.5)
        self.assertLess(elapsed, 0.5 + SLACK)
        self.assertEqual(deadline_mod.DEADLINE, deadline.reason)
        self.assertIn('after 0.5 seconds', str(deadline.error()))
        self.assertIn(OPTION, str(deadline.error()))
        # The connection is clean: no limit, no handler, no listener;
        # the deadline passed long ago and a statement still runs.
        self.assertEqual(before, self._limit())
        self.assertEqual(1000, self._quick())

    def test_database_limit_only_inside(self):
        if self.dialect.name == 'sqlite':
            self.skipTest('SQLite has no statement limit to read')
        before = self._limit()
        with self.conn.begin():
            with db_deadline.bounded(self.conn,
                                     deadline_mod.Deadline(20, OPTION)):
                inside = self._limit()
            after = self._limit()
        if self.dialect.name == 'postgresql':
            self.assertIn(inside, ('20s', '19999ms', '20000ms'))
            # SET LOCAL lasts until the end of the transaction.
            self.assertEqual(inside, after)
        else:
            self.assertGreater(inside, 19)
            self.assertLessEqual(inside, 20)
            self.assertEqual(before, after)
        self.assertEqual(before, self._limit())

    def test_stopped_when_client_goes(self):
        before = self._limit()
        server_side, client_side = socket.socketpair()
        self.addCleanup(server_side.close)
        # No time limit: only the client's departure stops the statement.
        deadline = deadline_mod.Deadline(0, OPTION, client=server_side)
        timer = threading.Timer(0.5, client_side.close)
        timer.start()
        self.addCleanup(timer.cancel)
        elapsed = self._run_slow(deadline, exception.ClientGone)
        self.assertLess(elapsed, 0.5 + SLACK)
        self.assertEqual(deadline_mod.CLIENT_GONE, deadline.reason)
        self.assertEqual(before, self._limit())
        self.assertEqual(1000, self._quick())

    def test_other_errors_pass_through(self):
        deadline = deadline_mod.Deadline(20, OPTION)
        self.assertRaises((db_exc.DBError, sa.exc.DBAPIError), self._run,
                          deadline,
                          'SELECT no_such_column FROM nodes')
        self.assertIsNone(deadline.reason)

    def test_statements_after_deadline_are_refused(self):
        deadline = deadline_mod.Deadline(0.05, OPTION)
        # Checked before the statement reaches the database.
        self.assertRaises(exception.DeadlineExceeded, self._run, deadline,
                          QUICK, wait=0.1)
        self.assertEqual(1000, self._quick())

    def test_no_deadline_is_free(self):
        deadline = deadline_mod.Deadline(0, OPTION)
        self.assertFalse(deadline.active)
        self.assertEqual(1000, self._run(deadline, QUICK))
