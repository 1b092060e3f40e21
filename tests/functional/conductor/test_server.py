"""The console commands as real processes: serving and a clean stop.

``alloc-server`` (both APIs, a conductor), ``alloc-api``,
``alloc-conductor`` and ``alloc-placement-api``.
"""

import json
import os
import re
import signal
import subprocess
import sys
from unittest import mock

import sqlalchemy as sa
from testtools import content

from alloc_framework.db import api as db_api
from alloc_framework.db import migration
from tests import base

BM_VERSION = {'X-OpenStack-Ironic-API-Version': 'latest'}
# Generous: the first start creates the schema and the standard data.
START_TIMEOUT = 90


def _request(method, url, body=None, headers=None):
    status, text = base.http_request(url, method, body, headers)
    if status < 400 and text:
        return status, json.loads(text)
    return status, text if status >= 400 else None


class _ProcessTestCase(base.TestCase):
    """Runs one console command of the project as a child process."""
    # Process management; the processes use SQLite whatever the run.
    dialect_neutral = True

    def start(self, command, extra_config='', placement_config=''):
        self.bm_port, self.pl_port = base.free_port(), base.free_port()
        config = os.path.join(self.state_path, 'alloc.conf')
        with open(config, 'w') as f:
            f.write('[DEFAULT]\nstate_path = %s\nhost = server-test\n%s\n'
                    '[api]\nport = %d\n[placement_api]\nport = %d\n%s\n'
                    % (self.state_path, extra_config, self.bm_port,
                       self.pl_port, placement_config))
        self.log = open(os.path.join(self.state_path, 'server.log'), 'w+')
        self.addCleanup(self.log.close)
        self.addOnException(lambda exc_info: self.addDetail(
            'server output', content.text_content(self._output())))
        env = dict(os.environ)
        env.pop('OS_TEST_TIMEOUT', None)
        self.proc = subprocess.Popen(
            [sys.executable, '-c',
             'import sys; from alloc_framework.cmd import %s as cmd; '
             'sys.exit(cmd.main())' % command, '--config-file', config],
            stdout=self.log, stderr=subprocess.STDOUT, env=env)
        self.addCleanup(self._kill)
        self.bm = 'http://127.0.0.1:%d' % self.bm_port
        self.pl = 'http://127.0.0.1:%d' % self.pl_port

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.assertEqual(0, self.proc.wait(timeout=60), self._output())
        output = self._output()
        self.assertNotIn('Traceback', output)
        return output

    def _kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def _output(self):
        self.log.seek(0)
        return self.log.read()

    def _until(self, check, what, timeout=START_TIMEOUT):
        """Poll ``check`` until true; fail at once if the process exits."""
        def running_and_check():
            if self.proc.poll() is not None:
                self.fail('alloc-server exited (%s) while waiting for %s'
                          % (self.proc.returncode, what))
            return check()
        return base.wait_for(running_and_check, what, timeout=timeout,
                             interval=0.2)

    def _answers(self, url):
        def check():
            try:
                return _request('GET', url)[0] == 200
            except OSError:
                return False
        return check

    def allocate_a_node(self):
        """Enroll a node, make it available, allocate it; the allocation.

        Each provisioning request waits for the previous one to finish
        and release the node's lock, so it is answered 202 at once.
        """
        status, node = _request('POST', self.bm + '/v1/nodes',
                                {'driver': 'fake-hardware',
                                 'resource_class': 'gold'}, BM_VERSION)
        self.assertEqual(201, status, node)

        def settled_in(state):
            body = _request('GET', self.bm + '/v1/nodes/' + node['uuid'],
                            headers=BM_VERSION)[1]
            return (body['provision_state'] == state
                    and body['reservation'] is None)
        for action, state in (('manage', 'manageable'),
                              ('provide', 'available')):
            status, body = _request(
                'PUT', self.bm + '/v1/nodes/%s/states/provision'
                % node['uuid'], {'target': action}, BM_VERSION)
            self.assertEqual(202, status, body)
            self._until(lambda: settled_in(state), state)
        status, alloc = _request('POST', self.bm + '/v1/allocations',
                                 {'resource_class': 'gold'}, BM_VERSION)
        self.assertEqual(201, status, alloc)

        def active():
            body = _request('GET', self.bm + '/v1/allocations/'
                            + alloc['uuid'], headers=BM_VERSION)[1]
            self.assertNotEqual('error', body['state'], body)
            return body['state'] == 'active' and body
        done = self._until(active, 'the allocation')
        self.assertEqual(node['uuid'], done['node_uuid'])
        return done


class ServerProcessTestCase(_ProcessTestCase):

    def test_serves_and_stops_on_sigterm(self):
        self.start('server')
        self._until(self._answers(self.bm + '/'), 'the bare metal API')
        self._until(self._answers(self.pl + '/'), 'the Placement API')

        # The conductor of the process does the work behind the API.
        self.allocate_a_node()

        self.assertIn('Conductor server-test stopped', self.stop())


class SeparateProcessesTestCase(_ProcessTestCase):
    """alloc-api and alloc-conductor each start, serve and stop."""

    def setUp(self):
        super().setUp()
        engine = db_api.create_engine('sqlite:///%s/alloc_framework.sqlite'
                                      % self.state_path)
        migration.upgrade('head', engine=engine)
        engine.dispose()

    def test_api(self):
        self.start('api')
        self._until(self._answers(self.bm + '/v1'), 'the bare metal API')
        # No conductor anywhere: writes are refused, reads work.
        status, body = _request('POST', self.bm + '/v1/nodes',
                                {'driver': 'fake-hardware'}, BM_VERSION)
        self.assertEqual(503, status, body)
        status, body = _request('GET', self.bm + '/v1/nodes',
                                headers=BM_VERSION)
        self.assertEqual((200, []), (status, body['nodes']))
        self.stop()

    def test_conductor(self):
        self.start('conductor')
        self._until(lambda: 'Conductor server-test started'
                    in self._output(), 'the conductor')
        self.assertIn('Conductor server-test stopped', self.stop())


class ServerWorkersTestCase(_ProcessTestCase):
    """alloc-server with [DEFAULT]server_workers = 2."""

    def _conductors(self):
        engine = db_api.create_engine('sqlite:///%s/alloc_framework.sqlite'
                                      % self.state_path)
        try:
            with engine.connect() as conn:
                return {row.hostname: row.online for row in conn.execute(
                    sa.text('SELECT hostname, online FROM conductors'))}
        finally:
            engine.dispose()

    def test_two_workers_share_the_ports(self):
        self.start('server', extra_config='server_workers = 2')
        self._until(self._answers(self.bm + '/'), 'the bare metal API')
        # Each process registers its own conductor, numbered from 0.
        self._until(lambda: self._conductors() == {'server-test-0': True,
                                                   'server-test-1': True},
                    'two conductors')
        # Connections land on either process; all of them are served.
        for _ in range(20):
            status, _body = _request('GET', self.bm + '/v1/nodes',
                                     headers=BM_VERSION)
            self.assertEqual(200, status)
            self.assertEqual(200, _request('GET', self.pl + '/')[0])

        self.allocate_a_node()

        output = self.stop()
        self.assertIn('Conductor server-test-0 stopped', output)
        self.assertIn('Conductor server-test-1 stopped', output)
        self.assertEqual({'server-test-0': False, 'server-test-1': False},
                         self._conductors())


class PlacementApiProcessesTestCase(_ProcessTestCase):
    """alloc-placement-api with [placement_api]processes = 2."""

    # A request line of the Placement API's log: the pid of the process
    # that served it, and the probe number it was asked.
    REQUEST_LOG = re.compile(
        r'^\S+ \S+ (\d+) INFO alloc_framework\.api\.placement\.requestlog '
        r'.*"GET /\?probe=(\d+)" status: 200', re.MULTILINE)

    def _alive(self, pid):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True

    def test_two_processes_share_the_port_and_stop(self):
        self.start('placement_api', placement_config='processes = 2')
        self._until(self._answers(self.pl + '/'), 'the Placement API')
        self._until(lambda: self._output().count(
            'alloc-placement-api listening on') == 2, 'two processes')
        # Each request on a new connection: the kernel spreads them over
        # both listening processes, and every one is answered.
        for probe in range(40):
            status, body = _request('GET', self.pl + '/?probe=%d' % probe)
            self.assertEqual(200, status, body)

        served = {}
        for pid, probe in self.REQUEST_LOG.findall(self._output()):
            served.setdefault(int(pid), set()).add(int(probe))
        self.assertEqual(set(range(40)), set().union(*served.values()))
        # Both serving processes, none of them the launcher.
        self.assertEqual(2, len(served), served)
        self.assertNotIn(self.proc.pid, served)
        self.assertTrue(all(self._alive(pid) for pid in served))

        # SIGTERM to the launcher stops both of them.
        self.stop()
        self.assertEqual([], [pid for pid in served if self._alive(pid)])

    def test_one_process_by_default(self):
        self.start('placement_api')
        self._until(self._answers(self.pl + '/'), 'the Placement API')
        for probe in range(10):
            self.assertEqual(
                200, _request('GET', self.pl + '/?probe=%d' % probe)[0])
        pids = {int(pid) for pid, _probe
                in self.REQUEST_LOG.findall(self._output())}
        self.assertEqual(1, len(pids))
        self.stop()


class WorkerSlotTestCase(base.TestCase):
    dialect_neutral = True

    def test_slots_are_claimed_lowest_first_and_freed(self):
        from alloc_framework.cmd import server
        conf = mock.Mock(state_path=self.state_path, host='h')
        first, lock0 = server.claim_worker_slot(conf, 2)
        # A lock is per process: another process sees slot 0 taken.
        out = subprocess.run(
            [sys.executable, '-c',
             'import sys; from unittest import mock; '
             'from alloc_framework.cmd import server; '
             'conf = mock.Mock(state_path=sys.argv[1], host="h"); '
             'print(server.claim_worker_slot(conf, 2)[0]); '
             'server.claim_worker_slot(conf, 1)', self.state_path],
            capture_output=True, text=True)
        self.assertEqual(0, first)
        self.assertEqual('1', out.stdout.strip())
        self.assertIn('WorkerSlotError', out.stderr)
        self.assertIn('All 1 worker slots of host h are taken', out.stderr)
        lock0.release()
