"""A server database whose schema is behind stops the services, by name.

With ``ALLOC_TEST_DB_BACKEND`` postgresql or mysql: a database of the
server migrated to an older revision. The service refuses it in one line
naming ``alloc-manage db sync``, which then brings it to the newest
revision. (The embedded SQLite database is upgraded by the services
themselves: see tests.functional.conductor.test_server.)
"""

import uuid

import sqlalchemy as sa

from alloc_framework.db import api as db_api
from alloc_framework.db import migration
from tests import base


class SchemaBehindTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        if base.BACKEND not in base.ADMIN_URLS:
            self.skipTest('a server database only')
        admin_url = sa.engine.make_url(base.ADMIN_URLS[base.BACKEND])
        name = 'alloc_behind_%s' % uuid.uuid4().hex[:8]
        try:
            admin = sa.create_engine(admin_url, isolation_level='AUTOCOMMIT')
            with admin.connect() as conn:
                conn.exec_driver_sql('CREATE DATABASE %s' % name)
        except sa.exc.OperationalError as exc:
            if base.IN_CI:
                raise
            self.skipTest('%s unreachable: %s' % (base.BACKEND, exc))

        def drop():
            with admin.connect() as conn:
                conn.exec_driver_sql('DROP DATABASE IF EXISTS %s%s' % (
                    name, ' WITH (FORCE)'
                    if base.BACKEND == 'postgresql' else ''))
            admin.dispose()
        self.addCleanup(drop)
        self.url = admin_url.set(database=name).render_as_string(
            hide_password=False)
        engine = db_api.create_engine(self.url)
        migration.upgrade('0006', engine=engine)
        engine.dispose()

    def run_command(self, command, *args):
        returncode, output = self.run_console_script(
            command,
            '[DEFAULT]\nstate_path = %s\nhost = behind\n'
            '[database]\nconnection = %s\n' % (self.state_path, self.url),
            args)
        self.assertNotIn('Traceback', output)
        return returncode, output

    def test_behind_then_synced(self):
        status, output = self.run_command('alloc-conductor')
        self.assertEqual(1, status, output)
        self.assertIn('ERROR alloc_framework.cmd.service_setup [-] The '
                      'database schema is at revision 0006, this version '
                      'needs %s: run "alloc-manage db sync" first'
                      % migration.head(), output)
        self.assertNotIn('Loaded hardware types', output)

        status, output = self.run_command('alloc-manage', 'db', 'sync')
        self.assertEqual(0, status, output)
        self.assertIn('Database schema is at revision %s'
                      % migration.head(), output)
