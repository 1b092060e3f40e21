"""Options of the [database] group (oslo.db), with an embedded default."""

from oslo_db import options as db_options

DEFAULT_CONNECTION = 'sqlite:///$state_path/alloc_framework.sqlite'

# oslo.db keeps 5 connections by default and opens and closes the others
# (up to max_overflow) per transaction: a TCP and authentication handshake
# each time. A service process here runs API threads and a conductor pool
# that all use the database at once, so keep as many as they need; the
# pool opens connections only on demand.
DEFAULT_MAX_POOL_SIZE = 32


def register_opts(conf):
    db_options.set_defaults(conf, connection=DEFAULT_CONNECTION,
                            max_pool_size=DEFAULT_MAX_POOL_SIZE)


def list_opts():
    return db_options.list_opts()
