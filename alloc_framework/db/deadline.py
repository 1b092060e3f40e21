"""Hold the statements of one transaction to a request's deadline.

:func:`bounded` wraps the part of a transaction that does a request's
work, given a ``common.deadline.Deadline``:

* before each statement, the deadline is checked in Python (so the
  Python phases between statements are bounded too);
* the database itself stops a statement that runs past the time left
  when the block started:

  - PostgreSQL: ``SET LOCAL statement_timeout``, which ends with the
    transaction;
  - MariaDB: the session's ``max_statement_time``, set and restored at
    the end of the block;
  - MySQL (not MariaDB) has no such limit for every statement
    (``max_execution_time`` covers read-only SELECTs only): nothing is
    set, and the watcher below interrupts the statement;
  - SQLite: a progress handler on the connection, which interrupts the
    statement once the deadline passed, removed at the end of the block;

* a watcher thread (``Deadline.watch``) interrupts the running statement
  when the deadline passes or the client goes away: PostgreSQL's cancel
  request (``connection.cancel()``), ``KILL QUERY`` from another
  connection on MySQL and MariaDB, ``interrupt()`` on SQLite.

An error of the database while the deadline says stop becomes
``DeadlineExceeded`` (or ``ClientGone``); the transaction is then rolled
back by its decorator as after any error. The connection goes back to
the pool as it came: no limit, no handler, no listener left on it.
"""

import contextlib
import math

from oslo_db import exception as db_exc
from oslo_log import log
import sqlalchemy as sa

LOG = log.getLogger(__name__)

# SQLite calls the progress handler every this many virtual machine
# instructions: often enough to stop within a millisecond or so, seldom
# enough to cost nothing measurable.
_SQLITE_PROGRESS_STEPS = 10000


class _Stopped(db_exc.DBError):
    """The deadline stopped a statement before it was sent.

    A ``DBError``, which oslo.db's exception filters let through as it
    is (anything else they wrap and log as an unexpected error);
    :func:`bounded` turns it into the deadline's own error.
    """


def _is_mariadb(connection):
    return bool(getattr(connection.dialect, 'is_mariadb', False))


def _set_limit(connection, dbapi_conn, seconds, stopped):
    """Have the database stop statements after ``seconds``.

    :returns: a function that removes the limit.
    """
    name = connection.dialect.name
    if name == 'postgresql':
        connection.exec_driver_sql(
            'SET LOCAL statement_timeout = %d'
            % max(1, math.ceil(seconds * 1000)))
        return lambda: None
    if name == 'mysql' and _is_mariadb(connection):
        connection.exec_driver_sql(
            'SET @alloc_max_statement_time = @@SESSION.max_statement_time, '
            'SESSION max_statement_time = %.3f' % max(0.001, seconds))

        def restore():
            connection.exec_driver_sql(
                'SET SESSION max_statement_time = '
                '@alloc_max_statement_time')
        return restore
    if name == 'sqlite':
        dbapi_conn.set_progress_handler(stopped, _SQLITE_PROGRESS_STEPS)
        return lambda: dbapi_conn.set_progress_handler(
            None, _SQLITE_PROGRESS_STEPS)
    return lambda: None


def _canceller(connection, dbapi_conn):
    """A function that interrupts the statement running on ``connection``.

    It runs in another thread than the one waiting for the statement.
    """
    name = connection.dialect.name
    if name == 'postgresql':
        return dbapi_conn.cancel
    if name == 'mysql':
        thread_id = dbapi_conn.thread_id()
        engine = connection.engine

        def kill():
            with engine.connect() as other:
                other.exec_driver_sql('KILL QUERY %d' % thread_id)
        return kill
    if name == 'sqlite':
        return dbapi_conn.interrupt
    return lambda: None


@contextlib.contextmanager
def bounded(connection, deadline):
    """Run the block's statements on ``connection`` within ``deadline``.

    :param connection: the SQLAlchemy connection of the current
        transaction (``context.session.connection()``).
    :param deadline: a ``common.deadline.Deadline``, or None.
    :raises: DeadlineExceeded, ClientGone (from the block).
    """
    if deadline is None or not deadline.active:
        yield
        return
    deadline.check()
    dbapi_conn = connection.connection.dbapi_connection

    def before_statement(conn, cursor, statement, parameters, context,
                         executemany):
        if deadline.stopped():
            raise _Stopped()

    remaining = deadline.remaining()
    remove_limit = (lambda: None) if remaining is None else _set_limit(
        connection, dbapi_conn, remaining, deadline.stopped)
    sa.event.listen(connection, 'before_cursor_execute', before_statement)
    try:
        with deadline.watch(_canceller(connection, dbapi_conn)):
            yield
    except (db_exc.DBError, sa.exc.DBAPIError) as exc:
        if deadline.stopped():
            LOG.debug('A statement was stopped (%s): %s',
                      deadline.reason, exc)
            raise deadline.error() from exc
        raise
    finally:
        sa.event.remove(connection, 'before_cursor_execute',
                        before_statement)
        try:
            remove_limit()
        except Exception:
            # The connection cannot be trusted to be clean: drop it
            # rather than give it back to the pool with a limit.
            LOG.exception('Could not remove the statement limit; the '
                          'connection is discarded')
            connection.invalidate()
