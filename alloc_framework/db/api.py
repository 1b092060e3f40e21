"""The one enginefacade of the project.

Every database access goes through ``reader`` or ``writer`` from this module;
the transaction belongs to the outermost decorated function.
"""

import functools
import os

from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import enginefacade
import sqlalchemy as sa

context_manager = enginefacade.transaction_context()
reader = context_manager.reader
writer = context_manager.writer

# Deadlock victims are retried at once (no sleep: callers are API and
# worker threads); InnoDB picks a victim and the retry usually finds its
# way.
DEADLOCK_RETRIES = 5


def retry_on_deadlock(func):
    """Re-run a whole transaction (the decorated function) on DBDeadlock.

    Put it outside ``@writer`` so that each attempt is a fresh
    transaction. (oslo.db's own ``retry_on_deadlock`` only marks a
    function for its DBAPI loader, which this project does not use.)
    """
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        for attempt in range(DEADLOCK_RETRIES):
            try:
                return func(*args, **kwargs)
            except db_exc.DBDeadlock:
                if attempt == DEADLOCK_RETRIES - 1:
                    raise
    return wrapper


def _sqlite_setup(engine):
    """Make SQLite safe for concurrent writers.

    pysqlite starts transactions lazily, so two transactions that read and
    then write deadlock on the lock upgrade and fail at once with "database
    is locked" instead of waiting. Taking the write lock at BEGIN
    (``BEGIN IMMEDIATE``) serializes transactions, and the busy timeout lets
    them queue rather than fail. WAL keeps readers of other processes going.
    """
    if engine.dialect.name != 'sqlite':
        return

    @sa.event.listens_for(engine, 'connect')
    def _on_connect(dbapi_conn, record):
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute('PRAGMA busy_timeout = 60000')
        if engine.url.database not in (None, '', ':memory:'):
            cur.execute('PRAGMA journal_mode = WAL')
        cur.execute('PRAGMA foreign_keys = ON')
        cur.close()

    # Runs before oslo.db's own hook, which then sees the marker and does
    # not emit a second, plain BEGIN.
    @sa.event.listens_for(engine, 'begin', insert=True)
    def _on_begin(conn):
        if 'in_transaction' not in conn.info:
            conn.exec_driver_sql('BEGIN IMMEDIATE')
            conn.info['in_transaction'] = True

    @sa.event.listens_for(engine, 'rollback')
    @sa.event.listens_for(engine, 'commit')
    def _on_end(conn):
        conn.info.pop('in_transaction', None)

    # ``insert=True`` does not put a listener before those already
    # registered on an Engine: move the others (oslo.db's plain BEGIN)
    # behind ours, or BEGIN IMMEDIATE is never emitted.
    for other in [fn for fn in engine.dispatch.begin if fn is not _on_begin]:
        sa.event.remove(engine, 'begin', other)
        sa.event.listen(engine, 'begin', other)

    # Connections opened before the listeners existed lack the set-up.
    engine.dispose()


context_manager.append_on_engine_create(_sqlite_setup)


def configure(conf):
    """Configure the enginefacade from ``conf`` (call once per process)."""
    connection = conf.database.connection
    if connection.startswith('sqlite:///'):
        path = connection[len('sqlite:///'):]
        directory = os.path.dirname(path)
        if directory:
            os.makedirs(directory, exist_ok=True)
    context_manager.configure(
        connection=connection,
        sqlite_fk=True,
        max_retries=conf.database.max_retries,
        max_pool_size=conf.database.max_pool_size,
        max_overflow=conf.database.max_overflow,
        pool_timeout=conf.database.pool_timeout,
        connection_recycle_time=conf.database.connection_recycle_time,
        # oslo.db sleeps 0 s whenever a connection returns to the pool, to
        # let eventlet green threads run. With real threads that only hands
        # the GIL away on every transaction, and getting it back can take a
        # whole switch interval while another thread computes.
        thread_checkin=False,
    )


def get_engine():
    return context_manager.writer.get_engine()


def create_engine(url, **kwargs):
    """Create an engine outside the facade (tests, offline tools).

    It gets the same SQLite set-up as the facade's own engine.
    """
    from oslo_db.sqlalchemy import engines
    engine = engines.create_engine(url, **kwargs)
    _sqlite_setup(engine)
    return engine
