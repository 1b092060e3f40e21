"""How many processes alloc-server runs, and where they keep metrics."""

import os
from unittest import mock

import fixtures

from alloc_framework.api import prometheus
from alloc_framework.cmd import server
from tests import base

PG = 'postgresql+psycopg2://postgres@127.0.0.1/test'
MARIADB = 'mysql+pymysql://root@127.0.0.1/test?charset=utf8mb4'


class WorkerCountTestCase(base.TestCase):

    def count(self, connection, cpus, **kw):
        self.config(connection=connection, group='database')
        self.config(**kw)
        with mock.patch.object(server.os, 'sched_getaffinity',
                               return_value=set(range(cpus))):
            return server.worker_count(self.conf)

    def test_unset_is_one_per_cpu_on_a_database_server(self):
        self.assertEqual(2, self.count(PG, 2))
        self.assertEqual(3, self.count(MARIADB, 3))

    def test_unset_is_at_most_four(self):
        self.assertEqual(4, self.count(PG, 64))

    def test_unset_is_one_on_sqlite(self):
        # One writer at a time: more processes would wait for each other.
        self.assertEqual(1, self.count(
            'sqlite:///%s/alloc.sqlite' % self.state_path, 8))
        self.assertEqual(1, self.count('sqlite://', 8))

    def test_the_cpus_this_process_may_use(self):
        # A container's CPU set, not the host's count.
        self.config(connection=PG, group='database')
        with mock.patch.object(server.os, 'sched_getaffinity',
                               return_value={5}), \
                mock.patch.object(server.os, 'cpu_count', return_value=32):
            self.assertEqual(1, server.worker_count(self.conf))

    def test_without_affinity(self):
        self.config(connection=PG, group='database')
        with mock.patch.object(server.os, 'sched_getaffinity',
                               side_effect=AttributeError), \
                mock.patch.object(server.os, 'cpu_count', return_value=3):
            self.assertEqual(3, server.worker_count(self.conf))

    def test_a_set_value_wins(self):
        self.assertEqual(1, self.count(PG, 8, server_workers=1))
        self.assertEqual(6, self.count(PG, 2, server_workers=6))
        self.assertEqual(3, self.count(
            'sqlite:///%s/alloc.sqlite' % self.state_path, 8,
            server_workers=3))

    def test_not_a_database_url(self):
        # The start refuses it afterwards, with its own error.
        self.assertEqual(1, self.count('not a url', 8))


class MultiprocDirTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.EnvironmentVariable(prometheus.MULTIPROC_ENV))

    def test_one_process_needs_none(self):
        prometheus.setup_process(self.conf, 1)
        self.assertNotIn(prometheus.MULTIPROC_ENV, os.environ)

    def test_several_processes_get_their_own_under_state_path(self):
        self.config(host='h1')
        expected = os.path.join(self.state_path, 'prometheus',
                                'alloc-server-h1')
        os.makedirs(expected)
        stale = os.path.join(expected, 'histogram_1.db')
        open(stale, 'w').close()
        with mock.patch.object(prometheus, '_check_mode') as check:
            prometheus.setup_process(self.conf, 2)
        self.assertEqual(expected, os.environ[prometheus.MULTIPROC_ENV])
        check.assert_called_once_with(expected)
        # Emptied of an earlier run's files.
        self.assertFalse(os.path.exists(stale))

    def test_each_service_its_own(self):
        self.config(host='h1')
        with mock.patch.object(prometheus, '_check_mode'):
            prometheus.setup_process(self.conf, 2,
                                     service='alloc-placement-api')
        self.assertEqual(
            os.path.join(self.state_path, 'prometheus',
                         'alloc-placement-api-h1'),
            os.environ[prometheus.MULTIPROC_ENV])

    def test_configured_directory_wins(self):
        directory = os.path.join(self.state_path, 'mine')
        self.config(prometheus_multiproc_dir=directory, group='metrics')
        with mock.patch.object(prometheus, '_check_mode'):
            prometheus.setup_process(self.conf, 2)
        self.assertEqual(directory, os.environ[prometheus.MULTIPROC_ENV])

    def test_environment_wins(self):
        os.environ[prometheus.MULTIPROC_ENV] = '/somewhere/else'
        prometheus.setup_process(self.conf, 2)
        self.assertEqual('/somewhere/else',
                         os.environ[prometheus.MULTIPROC_ENV])
        self.assertFalse(os.path.exists(
            os.path.join(self.state_path, 'prometheus')))

    def test_metrics_disabled(self):
        self.config(prometheus_enabled=False, group='metrics')
        prometheus.setup_process(self.conf, 4)
        self.assertNotIn(prometheus.MULTIPROC_ENV, os.environ)
