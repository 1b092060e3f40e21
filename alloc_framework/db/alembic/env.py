"""Alembic environment: runs migrations on the connection it is given."""

from alembic import context

from alloc_framework.db.sqlalchemy import models

target_metadata = models.BASE.metadata


def run_migrations_online():
    connectable = context.config.attributes.get('connection')
    if connectable is None:
        from alloc_framework.db import api as db_api
        connectable = db_api.get_engine()
        with connectable.connect() as connection:
            _run(connection)
    else:
        _run(connectable)


def _run(connection):
    context.configure(connection=connection,
                      target_metadata=target_metadata,
                      render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


run_migrations_online()
