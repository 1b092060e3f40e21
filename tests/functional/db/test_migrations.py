"""The migrations create exactly the schema the models describe."""

from alembic import autogenerate
from alembic import migration as alembic_migration

from alloc_framework.db import migration
from alloc_framework.db.sqlalchemy import models
from tests import base


class TestMigrations(base.DBTestCase):

    def test_at_head(self):
        self.assertEqual(migration.head(),
                         migration.version(engine=self.db.engine))

    def test_models_match_migrations(self):
        with self.db.engine.connect() as conn:
            context = alembic_migration.MigrationContext.configure(
                conn, opts={'compare_type': True})
            diff = autogenerate.compare_metadata(context,
                                                 models.BASE.metadata)
        # alembic's own bookkeeping table is not a model.
        diff = [d for d in diff
                if not (d[0] == 'remove_table' and
                        d[1].name == 'alembic_version')]
        self.assertEqual([], diff)
