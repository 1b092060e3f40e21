"""The enginefacade helpers of alloc_framework.db.api."""

import os
import threading
import time
from unittest import mock

import fixtures
from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import enginefacade
import sqlalchemy as sa

from alloc_framework.db import api as db_api
from tests import base


class RetryOnDeadlockTestCase(base.TestCase):

    def test_retries_deadlock_victims(self):
        attempts = []

        @db_api.retry_on_deadlock
        def work(value):
            attempts.append(value)
            if len(attempts) < 3:
                raise db_exc.DBDeadlock()
            return value * 2

        self.assertEqual(42, work(21))
        self.assertEqual([21, 21, 21], attempts)

    def test_gives_up_after_the_last_attempt(self):
        attempts = []

        @db_api.retry_on_deadlock
        def work():
            attempts.append(1)
            raise db_exc.DBDeadlock()

        self.assertRaises(db_exc.DBDeadlock, work)
        self.assertEqual(db_api.DEADLOCK_MAX_RETRIES + 1, len(attempts))
        self.assertEqual(5, len(attempts))

    def test_other_errors_are_not_retried(self):
        attempts = []

        @db_api.retry_on_deadlock
        def work():
            attempts.append(1)
            raise db_exc.DBDuplicateEntry()

        self.assertRaises(db_exc.DBDuplicateEntry, work)
        self.assertEqual(1, len(attempts))

    def test_attempts_follow_each_other_without_a_pause(self):
        attempts = []

        @db_api.retry_on_deadlock
        def work():
            attempts.append(1)
            raise db_exc.DBDeadlock()

        with mock.patch('time.sleep') as sleep:
            self.assertRaises(db_exc.DBDeadlock, work)
        self.assertEqual([mock.call(0)] * db_api.DEADLOCK_MAX_RETRIES,
                         sleep.call_args_list)


class RetryingTestCase(base.TestCase):

    def test_checked_errors_are_retried_up_to_the_bound(self):
        attempts = []

        @db_api.retrying(max_retries=2,
                         exception_checker=lambda exc: isinstance(
                             exc, db_exc.DBDuplicateEntry))
        def work():
            attempts.append(1)
            raise db_exc.DBDuplicateEntry()

        self.assertRaises(db_exc.DBDuplicateEntry, work)
        self.assertEqual(3, len(attempts))

    def test_deadlocks_are_retried_with_a_checker_too(self):
        attempts = []

        @db_api.retrying(max_retries=1, exception_checker=lambda exc: False)
        def work():
            attempts.append(1)
            if len(attempts) == 1:
                raise db_exc.DBDeadlock()
            return 'done'

        self.assertEqual('done', work())
        self.assertEqual(2, len(attempts))

    def test_unchecked_errors_propagate_at_once(self):
        attempts = []

        @db_api.retrying(max_retries=3, exception_checker=lambda exc: False)
        def work():
            attempts.append(1)
            raise ValueError('not a race')

        self.assertRaises(ValueError, work)
        self.assertEqual(1, len(attempts))


class PoolTestCase(base.DBTestCase):
    """The pool settings of db_api._pool_setup, on every backend."""

    def setUp(self):
        super().setUp()
        self.engine = self.db.engine
        # Start from connections that have been used and returned.
        with self.engine.connect() as conn:
            conn.execute(sa.text('SELECT 1'))

    def _count_projects(self):
        with self.engine.connect() as conn:
            return conn.execute(sa.text(
                'SELECT COUNT(*) FROM projects')).scalar()

    def test_pool_neither_rolls_back_nor_pings_by_itself(self):
        dialect = self.engine.dialect
        # A connection idle for longer is pinged (the next tests): however
        # long a loaded machine takes between set-up and here, this one
        # is not.
        self.useFixture(fixtures.MockPatchObject(db_api, 'PING_AFTER_IDLE',
                                                 3600.0))
        with mock.patch.object(dialect, 'do_rollback') as rollback, \
                mock.patch.object(dialect, 'do_ping') as ping:
            with self.engine.begin() as conn:
                conn.execute(sa.text('SELECT 1'))
        rollback.assert_not_called()
        ping.assert_not_called()

    def test_a_pool_without_the_private_attributes_stops_start_up(self):
        self.assertRaises(RuntimeError,
                          db_api._take_over_pool_reset_and_ping,
                          mock.Mock(spec=['_pre_ping']))

    def test_driver_tells_whether_a_transaction_is_open(self):
        with self.engine.connect() as conn:
            dbapi_conn = conn.connection.dbapi_connection
            with conn.begin():
                conn.execute(sa.text("INSERT INTO projects (external_id) "
                                     "VALUES ('x')"))
                self.assertIs(True, db_api._in_transaction(dbapi_conn))
            self.assertIs(False, db_api._in_transaction(dbapi_conn))

    def test_connection_returned_in_a_transaction_is_rolled_back(self):
        raw = self.engine.raw_connection()
        cursor = raw.cursor()
        if self.engine.dialect.name == 'sqlite':
            cursor.execute('BEGIN')  # the driver runs in autocommit mode
        cursor.execute("INSERT INTO projects (external_id) "
                       "VALUES ('left-open')")
        cursor.close()
        raw.close()  # back to the pool, transaction still open
        self.assertEqual(0, self._count_projects())

    def test_committed_connection_is_not_rolled_back_again(self):
        answers = []
        in_transaction = db_api._in_transaction

        def probe(dbapi_conn):
            answers.append(in_transaction(dbapi_conn))
            return answers[-1]

        with mock.patch.object(db_api, '_in_transaction', probe):
            with self.engine.begin() as conn:
                conn.execute(sa.text("INSERT INTO projects (external_id) "
                                     "VALUES ('kept')"))
        self.assertEqual([False], answers)
        self.assertEqual(1, self._count_projects())

    def test_sqlalchemy_marks_open_transactions(self):
        with self.engine.connect() as conn:
            conn.execute(sa.text('SELECT COUNT(*) FROM projects'))
            self.assertTrue(conn.info.get('transaction_open'))
            conn.rollback()
            self.assertNotIn('transaction_open', conn.info)

    def test_transaction_left_open_by_sqlalchemy_is_rolled_back(self):
        # Even when the driver does not report it (PyMySQL does not report
        # transactions that only read).
        dbapi_conn = mock.Mock(spec=['rollback'])
        record = mock.Mock(info={'transaction_open': True})
        with mock.patch.object(db_api, '_in_transaction', return_value=False):
            self.engine.pool.dispatch.reset(dbapi_conn, record, None)
        dbapi_conn.rollback.assert_called_once_with()
        self.assertNotIn('transaction_open', record.info)

    def test_driver_that_cannot_tell_is_rolled_back(self):
        dbapi_conn = mock.Mock(spec=['rollback'])
        self.assertIsNone(db_api._in_transaction(dbapi_conn))
        self.engine.pool.dispatch.reset(dbapi_conn, mock.Mock(info={}), None)
        dbapi_conn.rollback.assert_called_once_with()

    def test_only_idle_connections_are_pinged(self):
        with mock.patch.object(self.engine.dialect, 'do_ping',
                               wraps=self.engine.dialect.do_ping) as ping:
            with self.engine.connect() as conn:
                conn.execute(sa.text('SELECT 1'))
            self.assertEqual(0, ping.call_count)
            with mock.patch.object(db_api, 'PING_AFTER_IDLE', -1):
                with self.engine.connect() as conn:
                    conn.execute(sa.text('SELECT 1'))
            self.assertEqual(1, ping.call_count)

    def test_connection_killed_while_idle_is_replaced(self):
        dialect = self.engine.dialect.name
        if dialect == 'sqlite':
            self.skipTest('SQLite has no server to lose connections')
        own_id = {'mysql': 'SELECT CONNECTION_ID()',
                  'postgresql': 'SELECT pg_backend_pid()'}[dialect]
        kill = {'mysql': 'KILL %d',
                'postgresql': 'SELECT pg_terminate_backend(%d)'}[dialect]
        # Only one pooled connection, so the next checkout gets it back.
        self.engine.dispose()
        with self.engine.connect() as conn:
            victim = conn.execute(sa.text(own_id)).scalar()
        killer = sa.create_engine(self.engine.url, poolclass=sa.pool.NullPool)
        with killer.connect() as conn:
            conn.execute(sa.text(kill % victim))
        killer.dispose()
        with mock.patch.object(db_api, 'PING_AFTER_IDLE', -1):
            with self.engine.connect() as conn:
                self.assertNotEqual(victim,
                                    conn.execute(sa.text(own_id)).scalar())


class SQLitePoolTestCase(base.TestCase):
    """A SQLite file keeps its connections in a pool (oslo.db's engine
    alone would open one per transaction)."""
    dialect_neutral = True

    def _url(self, name='pooled.db'):
        return 'sqlite:///' + os.path.join(self.state_path, name)

    def test_the_facade_engine_keeps_its_connections(self):
        self.config(connection=self._url(), max_pool_size=3,
                    group='database')
        facade = enginefacade.transaction_context()
        url = db_api._pooled(self.conf.database.connection, 3)
        facade.configure(connection=url, sqlite_fk=True, max_retries=0)
        engine = facade.writer.get_engine()
        self.addCleanup(engine.dispose)
        self.assertIsInstance(engine.pool, sa.pool.QueuePool)
        self.assertEqual(3, engine.pool.size())
        # The plugin's own parameters never reach the driver.
        self.assertEqual({}, dict(engine.url.query))
        connects = []
        sa.event.listen(engine, 'connect', lambda *a: connects.append(1))
        for _ in range(5):
            with engine.begin() as conn:
                conn.exec_driver_sql('SELECT 1')
        self.assertEqual(1, len(connects))

    def test_configure_names_the_plugin_for_files_only(self):
        self.assertIn('plugin=%s' % db_api.SQLITE_POOL_PLUGIN,
                      db_api._pooled(self._url(), 7))
        for url in ('sqlite://', 'sqlite:///:memory:',
                    'postgresql+psycopg2://u@h/db',
                    'mysql+pymysql://root@h/db?charset=utf8mb4'):
            self.assertEqual(url, db_api._pooled(url, 7))

    def test_threads_share_the_pool_and_writers_queue(self):
        engine = db_api.create_engine(self._url('threads.db'))
        self.addCleanup(engine.dispose)
        self.assertIsInstance(engine.pool, sa.pool.QueuePool)
        with engine.begin() as conn:
            conn.exec_driver_sql('CREATE TABLE t (n INTEGER)')

        def write():
            for n in range(25):
                with engine.begin() as conn:
                    conn.exec_driver_sql('INSERT INTO t VALUES (%d)' % n)
        threads = [threading.Thread(target=write) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        with engine.begin() as conn:
            self.assertEqual(100, conn.exec_driver_sql(
                'SELECT COUNT(*) FROM t').scalar())
        self.assertLessEqual(engine.pool.checkedin(), 5)


class IsolationTestCase(base.DBTestCase):
    """Transactions run in READ COMMITTED on the server databases."""

    def test_a_transaction_sees_what_others_committed_since(self):
        engine = self.db.engine
        if engine.dialect.name == 'sqlite':
            self.skipTest('SQLite serializes writing transactions')
        with engine.connect() as reader, reader.begin():
            count = sa.text('SELECT COUNT(*) FROM projects')
            before = reader.execute(count).scalar()
            with engine.begin() as writer:
                writer.execute(sa.text("INSERT INTO projects (external_id) "
                                       "VALUES ('committed-meanwhile')"))
            # REPEATABLE READ (InnoDB's default) would still show `before`.
            self.assertEqual(before + 1, reader.execute(count).scalar())

    def test_every_mysql_session_is_read_committed_and_dives(self):
        engine = self.db.engine
        if engine.dialect.name != 'mysql':
            self.skipTest('MySQL/MariaDB only')
        # New connections as well as pooled ones.
        engine.dispose()
        for _ in range(2):
            with engine.connect() as conn:
                level = conn.exec_driver_sql(
                    'SELECT @@SESSION.tx_isolation').scalar()
                dives = conn.exec_driver_sql(
                    'SELECT @@SESSION.eq_range_index_dive_limit').scalar()
            self.assertEqual('READ-COMMITTED', level)
            # Every value of an IN list is looked up to estimate its rows.
            self.assertEqual(0, dives)

    def test_a_statement_can_run_with_few_dives_on_mariadb(self):
        engine = self.db.engine
        if engine.dialect.name != 'mysql':
            self.skipTest('MySQL/MariaDB only')
        dives = sa.select(sa.text('@@SESSION.eq_range_index_dive_limit'))
        with engine.connect() as conn:
            if not conn.dialect.is_mariadb:
                self.skipTest('MariaDB only (SET STATEMENT)')
            few = conn.execute(dives.execution_options(
                **{db_api.FEW_INDEX_DIVES: True})).scalar()
            after = conn.execute(dives).scalar()
        # The server's default for that statement, the session's after.
        self.assertEqual(200, few)
        self.assertEqual(0, after)


class SnapshotReaderTestCase(base.DBTestCase):
    """A snapshot reader never makes a writer wait, on any backend."""

    def test_a_writer_commits_while_a_snapshot_read_is_open(self):
        from alloc_framework.common import context as af_context
        from alloc_framework.db.sqlalchemy import models
        projects = models.Project.__table__
        reading = threading.Event()
        done_writing = threading.Event()
        seen = []

        @db_api.snapshot_reader
        def read(context):
            seen.append(context.session.execute(
                sa.select(sa.func.count()).select_from(projects)).scalar())
            reading.set()
            # Still inside the read transaction while the writer works.
            done_writing.wait(30)
            seen.append(context.session.execute(
                sa.select(sa.func.count()).select_from(projects)).scalar())

        reader_thread = threading.Thread(
            target=read, args=(af_context.get_admin_context(),))
        reader_thread.start()
        self.addCleanup(reader_thread.join, 30)
        self.addCleanup(done_writing.set)
        self.assertTrue(reading.wait(30))
        started = time.monotonic()
        conn = self.db.engine.connect()
        try:
            if self.db.engine.dialect.name == 'sqlite':
                # Fail at once rather than wait for the reader.
                conn.exec_driver_sql('PRAGMA busy_timeout = 0')
                conn.commit()
            with conn.begin():
                conn.execute(projects.insert().values(external_id='p-1'))
        finally:
            # Never back to the pool with the changed timeout.
            conn.invalidate()
            conn.close()
        elapsed = time.monotonic() - started
        done_writing.set()
        reader_thread.join(30)
        self.assertLess(elapsed, 5)
        # The reader kept its snapshot (PostgreSQL and MariaDB in READ
        # COMMITTED see the new row; SQLite's snapshot does not).
        self.assertEqual(0, seen[0])
        self.assertEqual(2, len(seen))
        if self.db.engine.dialect.name == 'sqlite':
            self.assertEqual(0, seen[1])

    def test_plain_readers_still_take_the_write_lock_on_sqlite(self):
        if self.db.engine.dialect.name != 'sqlite':
            self.skipTest('BEGIN IMMEDIATE is SQLite only')
        statements = []

        def record(conn, cursor, statement, *args):
            statements.append(statement)
        sa.event.listen(self.db.engine, 'before_cursor_execute', record)
        self.addCleanup(sa.event.remove, self.db.engine,
                        'before_cursor_execute', record)
        from alloc_framework.common import context as af_context

        @db_api.reader
        def plain(context):
            context.session.execute(sa.text('SELECT 1'))

        @db_api.snapshot_reader
        def snapshot(context):
            context.session.execute(sa.text('SELECT 1'))

        plain(af_context.get_admin_context())
        snapshot(af_context.get_admin_context())
        begins = [s for s in statements if s.startswith('BEGIN')]
        self.assertEqual(['BEGIN IMMEDIATE', 'BEGIN'], begins)
