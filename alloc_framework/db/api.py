"""The one enginefacade of the project, and the job of each access style.

Every database access goes through ``reader`` or ``writer`` from this module;
the transaction belongs to the outermost decorated function.

Three styles, one job each:

- **Core statements through the session**: the default, for all the SQL
  of an entity (``objects/``). A function decorated ``@reader`` or
  ``@writer`` runs ``context.session.execute(stmt)`` with SQLAlchemy Core
  statements on the tables (``models.X.__table__``, or the mapped
  columns as expressions) and gets rows back, not mapped instances.
  Nested calls join the outer transaction.
- **Core statements through the facade's connection**
  (``@reader.connection`` / ``@writer.connection``,
  ``context.connection``): where a job pays for the ORM session without
  using it, on request paths that run many times a second (reading,
  creating and saving a node allocation, reserving and releasing nodes,
  resolving many nodes at once). Inside an outer transaction they use its
  connection, so the two styles mix freely. Jobs outside the facade's
  transactions take a connection from ``get_engine()`` or
  ``create_engine()`` themselves: schema migrations (alembic), offline
  tools and tests.
- **ORM entities** (instances of ``models.X`` added to the session,
  ``select(models.X)`` loading them, attribute writes flushed by the
  unit of work): no job needs them; the models have no relationships,
  and the versioned objects copy rows into their own fields. The models
  exist for the schema (alembic compares them with the migrations), and
  their tables (``models.X.__table__``) are what statements select from
  and insert into: a row read is a named tuple, not an entity.
"""

import functools
import hashlib
import os
import threading
import time

from oslo_db import api as oslo_db_api
from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import enginefacade
import sqlalchemy as sa
from sqlalchemy.dialects import plugins as sa_plugins
from sqlalchemy.engine import CreateEnginePlugin

context_manager = enginefacade.transaction_context()
reader = context_manager.reader
writer = context_manager.writer

# Set while a snapshot_reader function runs in this thread.
_snapshot = threading.local()


def snapshot_reader(fn):
    """``@reader`` whose transaction takes no lock, SQLite included.

    Every SQLite transaction begins with ``BEGIN IMMEDIATE`` (see
    :func:`_sqlite_setup`), which takes the database's write lock for
    the whole transaction, readers included: a long read (a fleet-wide
    sum over 100,000 providers) would make every writer wait. A function
    decorated here begins a plain (deferred) transaction instead, which
    in WAL mode reads a snapshot and never blocks writers. Only for
    functions that read and call nothing that opens a transaction of its
    own; inside an outer transaction it joins that one, as ``@reader``
    does. PostgreSQL and MariaDB readers take no locks anyway.
    """
    return _in_snapshot(fn, reader(fn))


def snapshot_connection_reader(fn):
    """:func:`snapshot_reader` on the facade's connection
    (``@reader.connection``, ``context.connection``): for reads that run
    many times a second and need no ORM session."""
    return _in_snapshot(fn, reader.connection(fn))


def _in_snapshot(fn, read):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        outer = getattr(_snapshot, 'active', False)
        _snapshot.active = True
        try:
            return read(*args, **kwargs)
        finally:
            _snapshot.active = outer
    return wrapper


# Attempts after the first that a deadlock victim gets.
DEADLOCK_MAX_RETRIES = 4


def retrying(max_retries=DEADLOCK_MAX_RETRIES, exception_checker=None):
    """Re-run a whole transaction that lost a race: the project's one way.

    oslo.db's ``wrap_db_retry``, always on ``DBDeadlock`` (the database
    rolled the victim back, so running it again is safe) and on what
    ``exception_checker(exc)`` accepts (a lost compare-and-swap, a key
    taken concurrently), at most ``max_retries`` times; then the last
    exception propagates. Put it outside ``@reader``/``@writer`` so that
    each attempt is a fresh transaction. (oslo.db's ``retry_on_deadlock``
    only marks a function for its ``DBAPI`` loader, which the
    enginefacade does not use.)

    The attempts follow each other at once (``retry_interval=0``,
    ``time.sleep(0)``), as they always did here: the loser's new
    transaction queues in the database behind the row locks of the
    winner and runs as soon as that committed, without holding the
    interpreter; a pause would only add its length to the latency of
    the API request or of the conductor worker waiting for it, and
    worker threads do not sleep. So the interval does not grow either
    (``inc_retry_interval=False``; ``max_retry_interval`` is unused).
    Deadlocks are rare since MySQL sessions run in READ COMMITTED (see
    ``_mysql_setup``; what a benchmark run measured is in
    ``doc/source/performance.rst``).

    :param exception_checker: a callable that says whether an exception
        other than ``DBDeadlock`` is worth another attempt.
    """
    return oslo_db_api.wrap_db_retry(
        max_retries=max_retries, retry_interval=0, inc_retry_interval=False,
        retry_on_deadlock=True,
        exception_checker=exception_checker or (lambda exc: False))


# Writers that can meet concurrent transactions on MariaDB (node locks,
# allocations, reservations) are retried when chosen as deadlock victim.
retry_on_deadlock = retrying()


def _md5_hex(value):
    if value is None:
        return None
    return hashlib.md5(str(value).encode('utf-8'),
                       usedforsecurity=False).hexdigest()


def _sqlite_setup(engine):
    """Make SQLite safe for concurrent writers.

    pysqlite starts transactions lazily, so two transactions that read and
    then write deadlock on the lock upgrade and fail at once with "database
    is locked" instead of waiting. Taking the write lock at BEGIN
    (``BEGIN IMMEDIATE``) serializes transactions, and the busy timeout lets
    them queue rather than fail. WAL keeps readers of other processes going.
    ``md5()`` is defined as on PostgreSQL and MariaDB (a hash ring filter
    in SQL: :meth:`DeferredAction.candidates`).
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
        dbapi_conn.create_function('md5', 1, _md5_hex, deterministic=True)

    # Runs before oslo.db's own hook, which then sees the marker and does
    # not emit a second, plain BEGIN.
    @sa.event.listens_for(engine, 'begin', insert=True)
    def _on_begin(conn):
        if 'in_transaction' not in conn.info:
            conn.exec_driver_sql(
                'BEGIN' if getattr(_snapshot, 'active', False)
                else 'BEGIN IMMEDIATE')
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


_READ_COMMITTED = 'SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED'
# Index dives for every IN list, however long (see _mysql_setup).
_INDEX_DIVES = 'SET SESSION eq_range_index_dive_limit = 0'
# The execution option of a statement that needs no dive past the
# server's default limit (see _mysql_setup), and how MariaDB runs it.
FEW_INDEX_DIVES = 'few_index_dives'
_FEW_DIVES = 'SET STATEMENT eq_range_index_dive_limit = 200 FOR '


def _mysql_setup(engine):
    """Run MySQL/MariaDB sessions in READ COMMITTED, as PostgreSQL does,
    and let the optimizer count the rows of every value of an IN list.

    InnoDB's default, REPEATABLE READ, makes locking reads and updates
    take gap locks in the indexes they scan; concurrent node reservations
    then deadlock on each other's gaps (the reserving UPDATE moves a node
    out of the range other transactions scan). Every transaction of the
    project is written for READ COMMITTED (row locks, each statement sees
    what was committed before it), the level it runs at on PostgreSQL.

    Past ``eq_range_index_dive_limit`` values (200 by default) the
    optimizer estimates the rows of an ``IN`` list from the average rows
    per value instead of looking each value up in the index. The
    allocation candidates' search puts hundreds of aggregate ids in such
    lists, the aggregates of sharing providers, which have few members
    next to the large aggregates of a cloud: the average made MariaDB
    scan the whole index of aggregate memberships (105,500 rows, 45 ms)
    instead of reading the 5,500 rows of those aggregates. A dive per
    value costs a few microseconds.

    Set once per connection, these cost no round trip per transaction.

    The dives are paid each time a statement is optimized, for every IN
    list of the statement, those of its correlated sub-selects too,
    where an index range on the list is never what the plan reads: the
    check of candidate roots (a few dozen root ids, each tree's
    conditions checked by look-ups from the root) spent 10 ms of
    MariaDB's optimizer diving into the aggregate index for the 500
    aggregates of one of its sub-selects, against 1 ms to run. On
    MariaDB a statement run with the execution option
    ``FEW_INDEX_DIVES`` set is sent as ``SET STATEMENT
    eq_range_index_dive_limit = 200 FOR ...``: the server's default for
    that statement alone, no round trip more. MySQL runs it unchanged.
    """
    if engine.dialect.name != 'mysql':
        return

    @sa.event.listens_for(engine, 'connect')
    def _on_connect(dbapi_conn, record):
        cur = dbapi_conn.cursor()
        cur.execute(_READ_COMMITTED)
        cur.execute(_INDEX_DIVES)
        cur.close()

    @sa.event.listens_for(engine, 'before_cursor_execute', retval=True)
    def _few_dives(conn, cursor, statement, parameters, context,
                   executemany):
        if (context is not None and conn.dialect.is_mariadb and
                context.execution_options.get(FEW_INDEX_DIVES)):
            statement = _FEW_DIVES + statement
        return statement, parameters

    # Connections opened before the listener existed lack the set-up.
    engine.dispose()


def _postgresql_setup(engine):
    """Turn PostgreSQL's JIT compilation off for the project's sessions.

    PostgreSQL compiles a query to machine code when its estimated cost
    passes ``jit_above_cost``, which is slow. The project's queries are
    short and bounded, but their correlated sub-selects (the allocation
    candidates' search) can be estimated far above that cost from poor
    row estimates: compiling then takes much longer than running the
    query (``doc/source/performance.rst``). Set once per connection, it
    costs no round trip per transaction.
    """
    if engine.dialect.name != 'postgresql':
        return

    @sa.event.listens_for(engine, 'connect')
    def _on_connect(dbapi_conn, record):
        cur = dbapi_conn.cursor()
        cur.execute('SET jit = off')
        cur.close()
        # The SET opened a transaction: end it, so that the session's
        # first transaction starts as the pool expects.
        dbapi_conn.commit()

    engine.dispose()


SQLITE_POOL_PLUGIN = 'alloc_framework_sqlite_pool'
_SQLITE_POOL_SIZE = 'alloc_framework_pool_size'


class SQLitePool(CreateEnginePlugin):
    """Keep the connections of a SQLite file in a pool.

    oslo.db gives a SQLite file a ``NullPool``: every transaction opens
    the file, reads its schema and runs the connect-time pragmas, then
    closes it again. A conductor running deferred actions makes tens of
    thousands of short transactions: opening and closing connections was
    a fifth of its CPU (``benchmarks/README.md``). This plugin, which
    the URLs of :func:`configure` and :func:`create_engine` name, puts
    back SQLAlchemy's own choice for SQLite files, a ``QueuePool`` of
    ``[database]max_pool_size`` connections shared by the threads, with
    no limit on the connections opened beyond it (a thread never waits
    for a SQLite connection: the write lock is what serializes writers).

    It is SQLAlchemy's public way to choose the pool of an engine that
    another library (here oslo.db's ``create_engine``) builds.
    """

    def __init__(self, url, kwargs):
        super().__init__(url, kwargs)
        kwargs['poolclass'] = sa.pool.QueuePool
        kwargs['pool_size'] = int(url.query.get(_SQLITE_POOL_SIZE, 5))
        kwargs['max_overflow'] = -1

    def update_url(self, url):
        return url.difference_update_query([_SQLITE_POOL_SIZE])


sa_plugins.register(SQLITE_POOL_PLUGIN, __name__, 'SQLitePool')


def _pooled(url, pool_size):
    """``url`` naming :class:`SQLitePool` when it is a SQLite file."""
    parsed = sa.engine.make_url(url)
    if (parsed.get_backend_name() != 'sqlite'
            or parsed.database in (None, '', ':memory:')
            or 'plugin' in parsed.query):
        return url
    return parsed.update_query_dict({
        'plugin': SQLITE_POOL_PLUGIN,
        _SQLITE_POOL_SIZE: str(pool_size)}).render_as_string(
            hide_password=False)


# A pooled connection idle for longer than this is pinged before use.
PING_AFTER_IDLE = 1.0

_SERVER_STATUS_IN_TRANS = 1  # MySQL protocol status flag


def _in_transaction(dbapi_conn):
    """Whether the driver says a transaction is open (None: cannot tell).

    Asks the driver's own state, without a round trip: libpq (psycopg2,
    psycopg) knows the transaction status and sqlite3 has its
    ``in_transaction`` flag, both exact. PyMySQL keeps the server status
    of the last reply, which flags transactions that wrote but not those
    that only read: see ``_pool_setup`` for what covers those.
    """
    tx_status = getattr(getattr(dbapi_conn, 'info', None),
                        'transaction_status', None)
    if isinstance(tx_status, int):
        return tx_status != 0  # TRANSACTION_STATUS_IDLE
    in_transaction = getattr(dbapi_conn, 'in_transaction', None)
    if isinstance(in_transaction, bool):
        return in_transaction
    status = getattr(dbapi_conn, 'server_status', None)
    if isinstance(status, int):
        return bool(status & _SERVER_STATUS_IN_TRANS)
    return None


def _take_over_pool_reset_and_ping(pool):
    """Switch off the pool's own reset-on-return and pre-ping.

    This is the one place that writes private SQLAlchemy attributes
    (``Pool._reset_on_return``, ``Pool._pre_ping``). The public way,
    ``create_engine(pool_reset_on_return=None, pool_pre_ping=False)``, is
    out of reach: the enginefacade builds every engine with oslo.db's
    ``create_engine``, which always passes ``pool_pre_ping=True`` and has
    no ``pool_reset_on_return`` argument, and a created pool has no
    public setter (a ``CreateEnginePlugin`` could rewrite the pool
    arguments, but only when every database URL names it). SQLAlchemy's
    own options could not express the policy anyway (``pool_pre_ping``
    pings every checkout or none). The listeners of :func:`_pool_setup`
    do both jobs instead, with fewer round trips.

    Worth it: on MariaDB and PostgreSQL every transaction is short, so
    the two round trips spared are a large part of its cost;
    ``benchmarks/db_pool_bench.py`` compares a stock pool with this one
    (results in ``doc/source/performance.rst``). On SQLite a ping and a
    reset cost no round trip, only a call into the library.

    Should SQLAlchemy rename the attributes, this fails at engine
    creation instead of silently keeping both round trips.

    :returns: whether the pool pinged on checkout (oslo.db asked for it).
    """
    for name in ('_reset_on_return', '_pre_ping'):
        if not hasattr(pool, name):
            raise RuntimeError('SQLAlchemy %s has no Pool.%s: review '
                               'db_api._take_over_pool_reset_and_ping'
                               % (sa.__version__, name))
    pre_ping = pool._pre_ping
    pool._reset_on_return = None
    pool._pre_ping = False
    return pre_ping


def _pool_setup(engine):
    """Spare two round trips per transaction that the pool makes by default.

    - *Reset on return*: the pool rolls back every connection it gets
      back, although the enginefacade has just committed or rolled back.
      Here it rolls back a connection only when a transaction is still
      open: one that SQLAlchemy began and did not end, or one the driver
      reports (or the driver cannot tell).
    - *Pre-ping*: oslo.db has the pool ping every connection it hands
      out. Here only connections idle for more than ``PING_AFTER_IDLE``
      seconds are pinged: what an idle timeout or a server restart broke
      is found before use, as before; a connection used a moment ago is
      not asked. A ping that finds the server gone invalidates the pool,
      and the checkout takes a new connection.
    """
    pool = engine.pool
    dialect = engine.dialect

    @sa.event.listens_for(engine, 'begin')
    def _on_begin(conn):
        conn.info['transaction_open'] = True

    @sa.event.listens_for(engine, 'rollback')
    @sa.event.listens_for(engine, 'commit')
    def _on_end(conn):
        conn.info.pop('transaction_open', None)

    pre_ping = _take_over_pool_reset_and_ping(pool)

    @sa.event.listens_for(pool, 'reset')
    def _on_reset(dbapi_conn, record, reset_state):
        if ((record is not None and record.info.get('transaction_open'))
                or _in_transaction(dbapi_conn) is not False):
            dbapi_conn.rollback()
        if record is not None:
            record.info.pop('transaction_open', None)

    if not pre_ping:
        return

    @sa.event.listens_for(pool, 'connect')
    @sa.event.listens_for(pool, 'checkin')
    def _on_idle(dbapi_conn, record):
        if record is not None:
            record.info['idle_since'] = time.monotonic()

    @sa.event.listens_for(pool, 'checkout')
    def _on_checkout(dbapi_conn, record, proxy):
        idle_since = record.info.pop('idle_since', None)
        if (idle_since is not None
                and time.monotonic() - idle_since <= PING_AFTER_IDLE):
            return
        try:
            dialect.do_ping(dbapi_conn)
        except dialect.loaded_dbapi.Error as exc:
            if dialect.is_disconnect(exc, dbapi_conn, None):
                raise sa.exc.InvalidatePoolError() from exc
            raise


# Every engine gets these, in this order: the facade's own (on creation)
# and those of create_engine().
_ENGINE_SETUP = (_sqlite_setup, _mysql_setup, _postgresql_setup,
                 _pool_setup)
for _setup in _ENGINE_SETUP:
    context_manager.append_on_engine_create(_setup)


def configure(conf):
    """Configure the enginefacade from ``conf`` (call once per process)."""
    connection = conf.database.connection
    if connection.startswith('sqlite:///'):
        path = connection[len('sqlite:///'):]
        directory = os.path.dirname(path)
        if directory:
            os.makedirs(directory, exist_ok=True)
    context_manager.configure(
        connection=_pooled(connection, conf.database.max_pool_size),
        sqlite_fk=True,
        # oslo.db would test the first connection itself, with a retry
        # loop of its own: the commands wait for the database once, as
        # [database]max_retries and retry_interval say, before anything
        # else (cmd.service_setup.wait_for_database).
        max_retries=0,
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


def connection(context):
    """The connection of the transaction ``context`` is in, either style.

    For helpers that run inside ``@reader.connection`` functions on hot
    paths and inside ``@reader``/``@writer`` functions elsewhere.
    """
    try:
        return context.connection
    except db_exc.ContextNotRequestedError:
        return context.session.connection()


def create_engine(url, **kwargs):
    """Create an engine outside the facade (tests, offline tools).

    It gets the same set-up as the facade's own engine, and, as the
    facade's (see :func:`configure`), gives up the GIL only where real
    threads need it, not at every return of a connection to the pool.
    """
    from oslo_db.sqlalchemy import engines
    kwargs.setdefault('thread_checkin', False)
    engine = engines.create_engine(
        _pooled(url, kwargs.get('max_pool_size') or 5), **kwargs)
    for setup in _ENGINE_SETUP:
        setup(engine)
    return engine
