"""One conductor per host name, with the real console scripts.

A second process started with the ``[DEFAULT]host`` of a live conductor
stops with one line and status 1, and the live one keeps its
registration; once that one is dead (its heartbeat older than
``[conductor]heartbeat_timeout``) a new process takes the host over.
The processes use the database of the run: SQLite, or the test
database on PostgreSQL or MariaDB, where the conditional update that
takes a registration over runs on the server.
"""

import datetime
import os
import signal
import subprocess
import sys

from oslo_config import cfg
import sqlalchemy as sa
from testtools import content

from alloc_framework.cmd import server
from alloc_framework import conf as af_conf
from alloc_framework.db import api as db_api
from tests import base

START_TIMEOUT = 90


class ConductorHostTestCase(base.DBTestCase):

    def _connection(self):
        if base.BACKEND == 'sqlite':
            return 'sqlite:///%s/alloc_framework.sqlite' % self.state_path
        return self.db.engine.url.render_as_string(hide_password=False)

    def _script(self, command):
        exe = os.path.join(os.path.dirname(sys.executable), command)
        if not os.path.exists(exe):
            self.skipTest('%s console script not installed' % command)
        return exe

    def _config(self, name, workers='server_workers = 1\n'):
        path = os.path.join(self.state_path, name + '.conf')
        with open(path, 'w') as f:
            # One process each by default (on PostgreSQL and MariaDB
            # alloc-server otherwise runs one per CPU, named twin-0,
            # twin-1...).
            f.write('[DEFAULT]\nstate_path = %s\nhost = twin\n%s'
                    '[api]\nport = %d\n[placement_api]\nport = %d\n'
                    '[conductor]\nheartbeat_timeout = 30\n'
                    '[database]\nconnection = %s\n'
                    % (self.state_path, workers, base.free_port(),
                       base.free_port(), self._connection()))
        return path

    def _env(self):
        env = dict(os.environ)
        env.pop('OS_TEST_TIMEOUT', None)
        return env

    def _start(self, command, name, config=None):
        """Start ``command`` in a process group of its own."""
        log = open(os.path.join(self.state_path, name + '.log'), 'w+')
        self.addCleanup(log.close)
        proc = subprocess.Popen(
            [self._script(command), '--config-file',
             config or self._config(name)],
            stdout=log, stderr=subprocess.STDOUT, env=self._env(),
            start_new_session=True)

        def output():
            log.seek(0)
            return log.read()

        def kill():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        self.addCleanup(kill)
        self.addOnException(lambda exc_info: self.addDetail(
            name, content.text_content(output())))
        return proc, output

    def _wait_for_line(self, proc, output, line):
        def check():
            if proc.poll() is not None:
                self.fail('exited (%s) while waiting for %r:\n%s'
                          % (proc.returncode, line, output()))
            return line in output()
        base.wait_for(check, line, timeout=START_TIMEOUT, interval=0.2)

    def _row(self):
        engine = db_api.create_engine(self._connection())
        try:
            with engine.begin() as conn:
                return conn.execute(sa.text(
                    'SELECT online, registration FROM conductors '
                    'WHERE hostname = :h'), {'h': 'twin'}).one()
        finally:
            engine.dispose()

    def _age_row(self, seconds):
        engine = db_api.create_engine(self._connection())
        try:
            with engine.begin() as conn:
                conn.execute(sa.text(
                    'UPDATE conductors SET updated_at = :t '
                    'WHERE hostname = :h'),
                    {'h': 'twin', 't': datetime.datetime.utcnow()
                     - datetime.timedelta(seconds=seconds)})
        finally:
            engine.dispose()

    def test_one_process_per_host(self):
        first, first_output = self._start('alloc-server', 'first')
        self._wait_for_line(first, first_output, 'Conductor twin started')
        registration = self._row()

        # The same host name, other ports: refused, in one line.
        second = subprocess.run(
            [self._script('alloc-server'), '--config-file',
             self._config('second')],
            capture_output=True, text=True, timeout=120, env=self._env())
        output = second.stdout + second.stderr
        self.assertEqual(1, second.returncode, output)
        self.assertNotIn('Traceback', output)
        self.assertIn('Conductor twin is already registered and alive',
                      output)
        self.assertIn('[DEFAULT]host', output)
        # The first one keeps its registration.
        self.assertEqual(registration, self._row())
        self.assertTrue(registration.online)

        # Dead (killed, its heartbeat timed out): a new process takes the
        # host over, and stops cleanly.
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
        self._age_row(31)
        third, third_output = self._start('alloc-conductor', 'third')
        self._wait_for_line(third, third_output, 'Conductor twin started')
        self.assertIn('taking over the registration of a previous process',
                      third_output())
        taken = self._row()
        self.assertTrue(taken.online)
        self.assertNotEqual(registration.registration, taken.registration)
        os.killpg(third.pid, signal.SIGTERM)
        self.assertEqual(0, third.wait(timeout=60), third_output())
        self.assertNotIn('Traceback', third_output())
        self.assertFalse(self._row().online)

    def _online(self):
        engine = db_api.create_engine(self._connection())
        try:
            with engine.begin() as conn:
                return {row.hostname for row in conn.execute(sa.text(
                    'SELECT hostname FROM conductors WHERE online = :on'),
                    {'on': True})}
        finally:
            engine.dispose()

    def test_processes_by_default(self):
        # [DEFAULT]server_workers unset: one process on SQLite, else one
        # per CPU (at most 4), each its own conductor.
        config = self._config('default', workers='')
        conf = cfg.ConfigOpts()
        af_conf.register_opts(conf)
        conf(['--config-file', config], project='alloc_framework',
             default_config_files=[], default_config_dirs=[])
        count = server.worker_count(conf)
        if base.BACKEND == 'sqlite':
            self.assertEqual(1, count)
            expected = {'twin'}
        else:
            self.assertEqual(min(len(os.sched_getaffinity(0)), 4), count)
            expected = ({'twin'} if count == 1 else
                        {'twin-%d' % n for n in range(count)})
        proc, output = self._start('alloc-server', 'default', config)
        for name in sorted(expected):
            self._wait_for_line(proc, output, 'Conductor %s started' % name)
        self.assertEqual(expected, self._online())
        if count > 1:
            # The processes share their latency histograms without being
            # told where.
            self.assertTrue(os.path.isdir(os.path.join(
                self.state_path, 'prometheus', 'alloc-server-twin')))
        self.assertNotIn('prometheus_multiproc_dir', output())
        os.killpg(proc.pid, signal.SIGTERM)
        self.assertEqual(0, proc.wait(timeout=60), output())
        self.assertNotIn('Traceback', output())
        self.assertEqual(set(), self._online())
