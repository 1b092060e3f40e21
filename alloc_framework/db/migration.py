"""Schema migrations (alembic) of the database."""

import os

from alembic import command as alembic_command
from alembic import config as alembic_config
from alembic import migration as alembic_migration
from oslo_log import log

from alloc_framework.db import api as db_api

LOG = log.getLogger(__name__)

_INI = os.path.join(os.path.dirname(__file__), 'alembic.ini')


def _config(connection=None):
    config = alembic_config.Config(_INI)
    config.set_main_option('script_location',
                           os.path.join(os.path.dirname(__file__), 'alembic'))
    if connection is not None:
        config.attributes['connection'] = connection
    return config


def upgrade(revision='head', engine=None):
    """Upgrade the schema to ``revision`` (default: the newest)."""
    engine = engine or db_api.get_engine()
    with engine.begin() as connection:
        alembic_command.upgrade(_config(connection), revision)


def version(engine=None):
    """Return the current schema revision, or None for an empty database."""
    engine = engine or db_api.get_engine()
    with engine.connect() as connection:
        context = alembic_migration.MigrationContext.configure(connection)
        return context.get_current_revision()


def head():
    """Return the newest revision the code knows."""
    from alembic import script
    return script.ScriptDirectory.from_config(_config()).get_current_head()


def upgrade_embedded(conf):
    """Upgrade the schema when the database is a local SQLite file.

    The embedded default needs no set-up: a service started on it creates
    or upgrades its own schema. A server database is upgraded by the
    operator (``alloc-manage db sync``), never by a service.

    :returns: True when the schema was upgraded.
    """
    if not conf.database.connection.startswith('sqlite'):
        return False
    LOG.info('Embedded SQLite database: upgrading its schema')
    upgrade('head')
    return True
