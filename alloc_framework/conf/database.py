"""Options of the [database] group (oslo.db), with an embedded default."""

from oslo_db import options as db_options

DEFAULT_CONNECTION = 'sqlite:///$state_path/alloc_framework.sqlite'


def register_opts(conf):
    db_options.set_defaults(conf, connection=DEFAULT_CONNECTION)


def list_opts():
    return db_options.list_opts()
