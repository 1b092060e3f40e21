"""The WSGI service refuses an address it cannot listen on, up front."""

import http.client
import os
import socket
import subprocess
import sys

from alloc_framework.common import wsgi_service
from tests import base


def _app(environ, start_response):
    start_response('200 OK', [])
    return [b'ok']


class TestListenCheck(base.TestCase):

    def setUp(self):
        super().setUp()
        self.taken = socket.socket()
        self.addCleanup(self.taken.close)
        self.taken.bind(('127.0.0.1', 0))
        self.taken.listen(1)
        self.port = self.taken.getsockname()[1]

    def test_taken_port_is_a_clear_error(self):
        exc = self.assertRaises(wsgi_service.ListenError,
                                wsgi_service.WSGIService, 'alloc-api', _app,
                                '127.0.0.1', self.port)
        self.assertIn('alloc-api cannot listen on 127.0.0.1:%d' % self.port,
                      str(exc))

    def test_free_port_serves(self):
        server = wsgi_service.WSGIService('alloc-api', _app, '127.0.0.1', 0)
        server.start()
        self.addCleanup(server.stop)
        self.assertNotEqual(0, server.bound_port)

    def test_server_command_exits_instead_of_restarting(self):
        conf = os.path.join(self.state_path, 'alloc.conf')
        with open(conf, 'w') as f:
            f.write('[DEFAULT]\nstate_path = %s\n[api]\nport = %d\n'
                    '[placement_api]\nport = 0\n'
                    % (self.state_path, self.port))
        exe = os.path.join(os.path.dirname(sys.executable), 'alloc-server')
        proc = subprocess.run([exe, '--config-file', conf],
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(1, proc.returncode)
        self.assertIn('cannot listen on 127.0.0.1:%d' % self.port,
                      proc.stdout + proc.stderr)


class TestKeepAlive(base.TestCase):

    def test_many_clients_keep_their_connections(self):
        server = wsgi_service.WSGIService('alloc-api', _app, '127.0.0.1', 0,
                                          workers=2)
        server.start()
        self.addCleanup(server.stop)
        # More idle keep-alive connections than cheroot's default limit
        # (10): none of them is told to close.
        clients = [http.client.HTTPConnection('127.0.0.1',
                                              server.bound_port, timeout=10)
                   for _ in range(20)]
        for _round in range(2):
            for client in clients:
                client.request('GET', '/')
                resp = client.getresponse()
                self.assertEqual(b'ok', resp.read())
                self.assertNotEqual(
                    'close', (resp.getheader('Connection') or '').lower())
        for client in clients:
            client.close()
