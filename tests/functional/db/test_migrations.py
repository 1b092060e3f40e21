"""The migrations create exactly the schema the models describe."""

import sys

from alembic import autogenerate
from alembic import migration as alembic_migration
import sqlalchemy as sa

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


class TestUpgradeLeavesTheProcessAlone(base.TestCase):
    # An in-memory SQLite database: what is checked is the process.
    dialect_neutral = True

    def test_import_path_unchanged(self):
        # A service upgrades its embedded database at start: the working
        # directory must not become a place modules are imported from
        # (nor change the entry points' cache key of every later plugin
        # look-up).
        before = list(sys.path)
        engine = sa.create_engine('sqlite://')
        self.addCleanup(engine.dispose)
        migration.upgrade('head', engine=engine)
        self.assertEqual(migration.head(), migration.version(engine=engine))
        self.assertEqual(before, sys.path)
