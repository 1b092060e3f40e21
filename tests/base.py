"""Base test classes and the database fixture.

Tests run on SQLite always. ``ALLOC_TEST_DB_BACKEND`` selects another
backend for a whole run: ``postgresql`` or ``mysql`` (MariaDB). Each test
process creates its own database on that server, migrates it once and
empties it after every test. On SQLite each test process migrates a
template file once and copies it into its database before every test.
When the server cannot be reached the database tests are skipped, except
when ``CI`` is true: then they fail.
"""

import atexit
import json
import logging
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid

import fixtures
from futurist import _thread as futurist_thread
from oslo_config import fixture as config_fixture
import sqlalchemy as sa
import testtools

from alloc_framework import conf as af_conf
from alloc_framework.db import api as db_api
from alloc_framework.db import migration
from alloc_framework.db.sqlalchemy import models

BACKEND = os.environ.get('ALLOC_TEST_DB_BACKEND', 'sqlite')
ADMIN_URLS = {
    'postgresql': os.environ.get(
        'ALLOC_TEST_POSTGRESQL_URL',
        'postgresql+psycopg2://postgres@127.0.0.1:5432/test'),
    'mysql': os.environ.get(
        'ALLOC_TEST_MYSQL_URL',
        'mysql+pymysql://root@127.0.0.1:3306/test?charset=utf8mb4'),
}
IN_CI = os.environ.get('CI', '').lower() in ('1', 'true', 'yes')
# A test process holds about 10 to 40 descriptors between tests (the
# runner's pipes, pooled database connections, per-process helper
# servers); see TestCase._check_descriptors.
MAX_DESCRIPTORS = 256
# Seconds between two looks of an idle futurist pool thread for its
# pool's shutdown, in tests (futurist's own: 1); see TestCase.setUp.
IDLE_POOL_POLL = 0.05
_FD_DIR = '/proc/self/fd'


def wait_for(condition, message, timeout=30, interval=0.02, progress=None):
    """Poll ``condition()`` until it returns something true, and return it.

    For work finished in the background (conductor workers, a server
    process starting): raises ``AssertionError``, which fails the test,
    once ``timeout`` seconds have passed, naming what was awaited
    (``message``) and the last value seen. ``condition`` may itself fail
    the test to stop waiting at once.

    With ``progress``, a callable whose value changes as the work goes on
    (the number of items done, say), ``timeout`` counts from its last
    change instead: a long piece of work on a loaded machine may take
    as long as it needs, while work that stopped still fails the test.
    """
    deadline = time.monotonic() + timeout
    last = progress() if progress else None
    while True:
        result = condition()
        if result:
            return result
        if progress:
            now = progress()
            if now != last:
                last, deadline = now, time.monotonic() + timeout
        if time.monotonic() > deadline:
            raise AssertionError(
                'Timed out after %ss%s waiting for %s (last: %r)'
                % (timeout, ' without progress (%r)' % (last,)
                   if progress else '', message, result))
        time.sleep(interval)


def run_threads(target, count):
    """Call ``target(i)`` for each i in ``range(count)``, each in a thread
    of its own started at once, and return when every one has ended."""
    threads = [threading.Thread(target=target, args=(i,))
               for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def http_request(url, method='GET', body=None, headers=None):
    """``(status, text)`` of one HTTP request, for tests of real processes.

    ``body`` is sent as JSON; an error status is returned, not raised.
    """
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method,
                                 headers=dict(headers or {}))
    if data is not None:
        req.add_header('Content-Type', 'application/json')
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def free_port():
    """A TCP port of 127.0.0.1 that nothing listens on right now.

    For servers started as processes, whose port must be configured
    before they start; a server in the test process listens on port 0
    instead (see ``Server``).
    """
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def _no_flush_at_commit(engine):
    """Commit without waiting for the disk, on the test's connections.

    A test database is thrown away with its process: what a commit must
    survive is a crash of the machine, which no test looks at. Waiting
    for the disk at each commit (about 4 ms here) was most of the time
    of the database tests on SQLite and PostgreSQL. Isolation, locking
    and every other behaviour are unchanged. MariaDB's equivalent is a
    server-wide setting, which the tests leave alone.
    """
    if engine.dialect.name == 'sqlite':
        statement = 'PRAGMA synchronous = OFF'
    elif engine.dialect.name == 'postgresql':
        statement = 'SET synchronous_commit = off'
    else:
        return

    @sa.event.listens_for(engine, 'connect')
    def _on_connect(dbapi_conn, record):
        cursor = dbapi_conn.cursor()
        cursor.execute(statement)
        cursor.close()
        if engine.dialect.name == 'postgresql':
            # The SET opened a transaction; a rollback would undo it.
            dbapi_conn.commit()


class _Provisioned:
    """The per-process database of the selected backend, made once."""

    url = None
    error = None
    sqlite_template = None
    _tmpdir = None

    @classmethod
    def get(cls):
        if cls.url is None and cls.error is None:
            try:
                cls._provision()
            except Exception as exc:  # reported by each test that needs it
                cls.error = '%s unreachable: %s' % (BACKEND, exc)
        return cls

    @classmethod
    def _provision(cls):
        if BACKEND == 'sqlite':
            cls._tmpdir = tempfile.mkdtemp(prefix='alloc-test-')
            atexit.register(shutil.rmtree, cls._tmpdir, True)
            cls.sqlite_template = os.path.join(cls._tmpdir, 'template.db')
            engine = db_api.create_engine(
                'sqlite:///' + cls.sqlite_template)
            migration.upgrade('head', engine=engine)
            engine.dispose()
            # The tests' database: one file and one engine per process,
            # as on the other backends, so that statements compiled in
            # one test are reused by the next (an engine per test
            # compiled them all again, each time).
            cls.url = 'sqlite:///' + os.path.join(cls._tmpdir, 'test.db')
            cls.engine = db_api.create_engine(cls.url)
            _no_flush_at_commit(cls.engine)
            return
        if BACKEND not in ADMIN_URLS:
            raise ValueError('unknown backend %r' % BACKEND)
        admin_url = sa.engine.make_url(ADMIN_URLS[BACKEND])
        name = 'alloc_test_%d_%s' % (os.getpid(), uuid.uuid4().hex[:8])
        admin = sa.create_engine(admin_url, isolation_level='AUTOCOMMIT')
        with admin.connect() as conn:
            conn.exec_driver_sql('CREATE DATABASE %s' % name)
        url = admin_url.set(database=name)

        def _drop():
            with admin.connect() as conn:
                if BACKEND == 'postgresql':
                    conn.exec_driver_sql(
                        'DROP DATABASE IF EXISTS %s WITH (FORCE)' % name)
                else:
                    conn.exec_driver_sql('DROP DATABASE IF EXISTS %s' % name)
            admin.dispose()
        atexit.register(_drop)
        engine = db_api.create_engine(url.render_as_string(
            hide_password=False))
        _no_flush_at_commit(engine)
        migration.upgrade('head', engine=engine)
        cls.engine = engine
        cls.url = url


class Database(fixtures.Fixture):
    """A fresh, migrated database behind the project's enginefacade.

    ``engine`` is the test process's engine, shared by its tests.
    """

    def _setUp(self):
        provisioned = _Provisioned.get()
        if provisioned.error:
            if IN_CI:
                raise RuntimeError(provisioned.error)
            raise testtools.TestCase.skipException(provisioned.error)
        self.engine = provisioned.engine
        if BACKEND == 'sqlite':
            self._restore_sqlite(provisioned.sqlite_template)
        else:
            self.addCleanup(self._empty)
        self.addCleanup(db_api.context_manager.patch_engine(self.engine))

    def _restore_sqlite(self, template):
        """Make the SQLite database a copy of the migrated template.

        SQLite's online backup, written through one of the engine's own
        connections: the others see the new content at their next
        transaction, as they would see another writer's.
        """
        source = sqlite3.connect(template)
        raw = self.engine.raw_connection()
        try:
            source.backup(raw.driver_connection)
        finally:
            raw.close()
            source.close()

    def _empty(self):
        """Delete every row the test left, in one transaction.

        ``DELETE``, not ``TRUNCATE``: a test leaves a few rows, and
        PostgreSQL's ``TRUNCATE`` gives each of the tables and indexes a
        new file, which cost about 200 ms after every test (most of the
        time of the PostgreSQL run) where ``DELETE`` costs a few. Children
        go before their parents (the tables in reverse dependency order;
        a self-referencing table is emptied by one statement, checked at
        its end). Row ids go on counting from one test to the next, as
        they always did on MariaDB: no test may expect a particular id.
        """
        tables = [t.name for t in reversed(models.BASE.metadata.sorted_tables)]
        with self.engine.begin() as conn:
            if BACKEND == 'mysql':
                # InnoDB checks a foreign key at each row, not at the end
                # of the statement as PostgreSQL does.
                conn.exec_driver_sql('SET FOREIGN_KEY_CHECKS = 0')
            for table in tables:
                conn.exec_driver_sql('DELETE FROM %s' % table)
            if BACKEND == 'mysql':
                conn.exec_driver_sql('SET FOREIGN_KEY_CHECKS = 1')


class TestCase(testtools.TestCase):
    """Base for every test: isolated configuration and state directory."""

    #: True for a test that exercises no database dialect: what it checks
    #: (an emulated BMC, a real client over HTTP, the command line, a
    #: code path whose SQL other tests already cover) is the same on
    #: every database. ``tools/run-tests.sh`` runs such a test on SQLite
    #: only; every other functional test also runs on PostgreSQL and
    #: MariaDB. Leave it False for anything whose SQL differs by
    #: database: locks, conflicts, dialect branches, query plans.
    dialect_neutral = False

    def setUp(self):
        super().setUp()
        # Registered first, so checked after every other clean-up.
        self.addCleanup(self._check_descriptors)
        self.useFixture(fixtures.Timeout(
            int(os.environ.get('OS_TEST_TIMEOUT', 300)), gentle=True))
        # A futurist pool's idle thread sees that its pool is shut down
        # only when its wait for work times out, after a second: each
        # pool a test stops (a conductor's workers, its periodics) kept
        # the test idle that long. Patched before anything starts a pool,
        # restored after everything stopped; fails loudly if futurist
        # renames it.
        self.useFixture(fixtures.MockPatchObject(
            futurist_thread.ThreadWorker, 'MAX_IDLE_FOR', IDLE_POOL_POLL))
        # Warnings and errors the code under test logs belong to the test
        # (shown with a failure), not to the runner's output.
        self.useFixture(fixtures.FakeLogger(level=logging.WARNING))
        self.conf = af_conf.CONF
        self.config_fixture = self.useFixture(config_fixture.Config(self.conf))
        # The fixture's clean-up clears defaults set with set_default(),
        # such as [database]connection's: set them again for this test.
        af_conf.database.register_opts(self.conf)
        self.state_path = self.useFixture(fixtures.TempDir()).path
        self.config(state_path=self.state_path)
        self.config(host='test-host')
        # The BMC hardware types the service enables by default would
        # make every conductor of a test import their libraries: tests of
        # those types enable them themselves.
        self.config(enabled_hardware_types=['fake-hardware'])

    def config(self, **kw):
        self.config_fixture.config(**kw)

    def use_http_basic(self, user='alice', password=b'secret'):
        """Configure ``http_basic`` with one user; returns the file's path.

        A cheap bcrypt cost (4 rounds) keeps each check fast.
        """
        import bcrypt
        path = os.path.join(self.state_path, 'htpasswd')
        hashed = bcrypt.hashpw(password, bcrypt.gensalt(rounds=4))
        with open(path, 'w') as stream:
            stream.write('%s:%s\n' % (user, hashed.decode()))
        self.config(auth_strategy='http_basic',
                    http_basic_auth_user_file=path)
        return path

    def run_console_script(self, command, config, args=()):
        """Run an installed console script with ``config`` as its file.

        ``config`` is the text of the configuration file, written to the
        test's state directory. The test is skipped when the script is
        not installed.

        :returns: ``(exit status, stdout and stderr)``.
        """
        path = os.path.join(self.state_path, 'alloc.conf')
        with open(path, 'w') as stream:
            stream.write(config)
        exe = os.path.join(os.path.dirname(sys.executable), command)
        if not os.path.exists(exe):
            self.skipTest('%s console script not installed' % command)
        env = dict(os.environ)
        env.pop('OS_TEST_TIMEOUT', None)
        proc = subprocess.run([exe, '--config-file', path] + list(args),
                              capture_output=True, text=True, timeout=120,
                              env=env)
        return proc.returncode, proc.stdout + proc.stderr

    def _check_descriptors(self):
        """Fail a test after which the process holds too many descriptors.

        A test process runs a thousand tests or more: a fixture that
        leaves a socket, pipe or file open after each of them takes the
        process past 1,023 descriptors, where ``select()`` (still used
        by some libraries' IO threads) fails in unrelated tests.
        """
        if not os.path.isdir(_FD_DIR):
            return
        count = len(os.listdir(_FD_DIR))
        if count > MAX_DESCRIPTORS:
            self.fail('the test process holds %d file descriptors after '
                      'this test (at most %d expected): a fixture leaks '
                      'them' % (count, MAX_DESCRIPTORS))


class DBTestCase(TestCase):
    """A test that uses the database of the selected backend."""

    def setUp(self):
        super().setUp()
        self.db = self.useFixture(Database())


class Server(fixtures.Fixture):
    """Serve a WSGI application over real HTTP on 127.0.0.1 (random port).

    For tests with real clients (python-ironicclient, openstacksdk,
    osc-placement) and real concurrency. ``url`` is the base URL.
    """

    def __init__(self, app, name='test-server', workers=16):
        super().__init__()
        self.app = app
        self.name = name
        self.workers = workers

    def _setUp(self):
        from alloc_framework.common import wsgi_service
        self.service = wsgi_service.WSGIService(self.name, self.app,
                                                '127.0.0.1', 0,
                                                workers=self.workers)
        # cheroot's connection loop notices a stop between waits of this
        # many seconds (0.5 by default, the time every test's server
        # took to stop); it also checks keep-alive expiry then.
        self.service.server.expiration_interval = IDLE_POOL_POLL
        self.service.start()
        self.addCleanup(self.service.stop)
        self.url = 'http://127.0.0.1:%d' % self.service.bound_port
