"""Both APIs over real HTTP: broken framing and slow or idle clients.

Each test serves the bare metal and the Placement applications with
``WSGIService`` on 127.0.0.1 (random ports), as the console scripts do,
and talks to them over raw sockets.
"""

import http.client
import logging
import socket
import threading
import time

import fixtures

from alloc_framework.api.baremetal import app as bm_app
from alloc_framework.api.placement import deploy
from alloc_framework.common import wsgi_service
from alloc_framework.conductor import manager as manager_mod
from tests import base

# A request each API answers with its data, and one that creates something.
READ = {'baremetal': '/v1/nodes', 'placement': '/resource_providers'}
CREATE = {
    'baremetal': ('/v1/nodes', b'{"driver": "fake-hardware"}', 201),
    'placement': ('/resource_providers', b'{"name": "rp1"}', 200),
}
HEADERS = {
    'baremetal': b'X-OpenStack-Ironic-API-Version: latest\r\n',
    'placement': (b'X-Auth-Token: admin\r\n'
                  b'OpenStack-API-Version: placement latest\r\n'),
}


def read_all(sock, timeout=10):
    """Everything the server sends until it closes (or ``timeout``)."""
    sock.settimeout(timeout)
    data = b''
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return data
            data += chunk
    except OSError:
        return data


def status_of(response):
    return int(response.split(b' ', 2)[1]) if response else None


class _ServingTestCase(base.DBTestCase):
    # HTTP framing and slow clients: the same on every database.
    dialect_neutral = True

    read_deadline = 30
    max_body_size = 1000

    def setUp(self):
        super().setUp()
        self.conf([], project='alloc_framework', default_config_files=[],
                  default_config_dirs=[])
        self.config(auth_strategy='noauth', rpc_transport='local')
        self.config(max_request_body_size=self.max_body_size,
                    group='oslo_middleware')
        self.logger = self.useFixture(fixtures.FakeLogger(
            level=logging.INFO))
        manager = manager_mod.ConductorManager('test-host', self.conf)
        manager.init_host()
        self.addCleanup(manager.del_host)
        self.ports = {
            'baremetal': self.serve('alloc-api', bm_app.setup_app(self.conf),
                                    'api'),
            'placement': self.serve('alloc-placement-api',
                                    deploy.loadapp(self.conf),
                                    'placement_api'),
        }

    def serve(self, name, app, group):
        self.config(host_ip='127.0.0.1', port=0,
                    request_read_deadline=self.read_deadline, group=group)
        server = wsgi_service.WSGIService.from_conf(name, app, self.conf,
                                                    group)
        server.start()
        self.addCleanup(server.stop)
        return server.bound_port

    def connect(self, api):
        sock = socket.create_connection(('127.0.0.1', self.ports[api]),
                                        timeout=10)
        self.addCleanup(sock.close)
        return sock

    def head(self, api, method, path, *lines):
        return (b'%s %s HTTP/1.1\r\nHost: localhost\r\n%s'
                b'Content-Type: application/json\r\n%s\r\n'
                % (method, path.encode(), HEADERS[api], b''.join(lines)))

    def get(self, api, timeout=10):
        """A normal client's GET: (status, seconds it took)."""
        client = http.client.HTTPConnection('127.0.0.1', self.ports[api],
                                            timeout=timeout)
        self.addCleanup(client.close)
        headers = dict(line.split(': ', 1) for line in
                       HEADERS[api].decode().splitlines())
        start = time.monotonic()
        client.request('GET', READ[api], headers=headers)
        resp = client.getresponse()
        resp.read()
        return resp.status, time.monotonic() - start

    def assertNoTraceback(self):
        output = self.logger.output
        self.assertNotIn('Traceback', output)
        self.assertNotIn('ERROR', output)


class FramingTestCase(_ServingTestCase):
    """A request whose body cannot be framed is a 400 and closes."""

    def _send(self, api, data, half_close=False):
        sock = self.connect(api)
        sock.sendall(data)
        if half_close:
            sock.shutdown(socket.SHUT_WR)
        return read_all(sock)

    def assertRefused(self, response, status=400):
        self.assertEqual(status, status_of(response), response)
        self.assertIn(b'\r\nConnection: close\r\n', response)

    def test_content_length_and_chunked(self):
        for api, (path, body, _status) in CREATE.items():
            data = self.head(api, b'POST', path,
                             b'Content-Length: %d\r\n' % len(body),
                             b'Transfer-Encoding: chunked\r\n')
            data += b'%x\r\n%s\r\n0\r\n\r\n' % (len(body), body)
            self.assertRefused(self._send(api, data))
        self.assertNoTraceback()

    def test_bad_chunk_size(self):
        for api, (path, body, _status) in CREATE.items():
            data = self.head(api, b'POST', path,
                             b'Transfer-Encoding: chunked\r\n')
            data += b'zz\r\n%s\r\n0\r\n\r\n' % body
            self.assertRefused(self._send(api, data))
        self.assertNoTraceback()

    def test_chunk_cut_short(self):
        for api, (path, body, _status) in CREATE.items():
            data = self.head(api, b'POST', path,
                             b'Transfer-Encoding: chunked\r\n')
            data += b'%x\r\n%s' % (len(body) + 10, body)
            self.assertRefused(self._send(api, data, half_close=True))
        self.assertNoTraceback()

    def test_body_over_the_limit_is_not_read(self):
        # The whole body is never sent: the answer comes from the headers,
        # in each API's own error format, and the connection closes.
        for api, (path, _body, _status) in CREATE.items():
            data = self.head(api, b'POST', path,
                             b'Content-Length: %d\r\n' % (1 << 30))
            response = self._send(api, data + b'{"name": "')
            self.assertRefused(response, 413)
            self.assertIn(b'larger than 1000 bytes', response)
        self.assertNoTraceback()

    def test_chunked_body_over_the_limit(self):
        for api, (path, _body, _status) in CREATE.items():
            data = self.head(api, b'POST', path,
                             b'Transfer-Encoding: chunked\r\n')
            data += b'800\r\n%s\r\n' % (b'x' * 0x800)
            self.assertRefused(self._send(api, data), 413)
        self.assertNoTraceback()

    def test_malformed_content_length(self):
        for api, (path, body, _status) in CREATE.items():
            for length in (b'-1', b'+27', b'1_0'):
                data = self.head(api, b'POST', path,
                                 b'Content-Length: %s\r\n' % length) + body
                self.assertEqual(400, status_of(self._send(api, data)))
        self.assertNoTraceback()

    def test_client_gone_before_the_whole_body(self):
        for api, (path, body, _status) in CREATE.items():
            data = self.head(api, b'POST', path,
                             b'Content-Length: %d\r\n' % (len(body) + 50))
            # Nothing to answer to a client that stopped sending.
            self.assertEqual(b'', self._send(api, data + body,
                                             half_close=True))
        self.assertIn('the client went away while sending the body',
                      self.logger.output)
        self.assertNoTraceback()

    def test_chunked_body_is_served(self):
        for api, (path, body, status) in CREATE.items():
            data = self.head(api, b'POST', path,
                             b'Transfer-Encoding: chunked\r\n',
                             b'Connection: close\r\n')
            data += b'5\r\n%s\r\n%x\r\n%s\r\n0\r\n\r\n' % (
                body[:5], len(body) - 5, body[5:])
            response = self._send(api, data)
            self.assertEqual(status, status_of(response), response)
        self.assertNoTraceback()


class SlowClientsTestCase(_ServingTestCase):
    """Slow or idle clients do not delay the others."""

    read_deadline = 3
    # A request held behind the slow clients would wait for the deadline
    # to end one of them (3 s); one served at once takes a fraction of a
    # second, but can take over 1 s on a busy test machine.
    prompt = read_deadline - 1

    def trickle(self, socks, interval=0.3):
        """Send one more header line on each of ``socks`` every interval."""
        stop = threading.Event()

        def run():
            number = 0
            while not stop.wait(interval):
                number += 1
                for sock in socks:
                    try:
                        sock.sendall(b'X-Slow-%d: yes\r\n' % number)
                    except OSError:
                        pass
        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        self.addCleanup(thread.join)
        self.addCleanup(stop.set)

    def test_slow_clients_do_not_delay_others(self):
        slow = {}
        for api in self.ports:
            # More slow clients than the API runs requests at a time.
            slow[api] = [self.connect(api) for _ in range(10)]
            for sock in slow[api]:
                sock.sendall(b'GET %s HTTP/1.1\r\nHost: slow\r\n'
                             % READ[api].encode())
        self.trickle(slow['baremetal'] + slow['placement'])
        for api in self.ports:
            for _ in range(3):
                status, took = self.get(api)
                self.assertEqual(200, status)
                self.assertLess(took, self.prompt)
        # The deadline ends them with 408.
        for api in self.ports:
            for sock in slow[api]:
                response = read_all(sock, timeout=self.read_deadline + 10)
                self.assertEqual(408, status_of(response), response)
        self.assertNoTraceback()

    def test_slow_body_is_408(self):
        for api, (path, body, _status) in CREATE.items():
            sock = self.connect(api)
            sock.sendall(self.head(api, b'POST', path,
                                   b'Content-Length: %d\r\n' % len(body))
                         + body[:3])
            start = time.monotonic()
            response = read_all(sock, timeout=self.read_deadline + 10)
            self.assertEqual(408, status_of(response), response)
            self.assertLess(time.monotonic() - start,
                            self.read_deadline + 1)
        self.assertIn('the request did not arrive within 3 seconds',
                      self.logger.output)
        self.assertNoTraceback()

    def test_idle_connections_hold_no_thread(self):
        for api in self.ports:
            # More than [*]connection_threads clients that say nothing.
            for _ in range(self.conf.api.connection_threads + 10):
                self.connect(api)
        for api in self.ports:
            status, took = self.get(api)
            self.assertEqual(200, status)
            self.assertLess(took, self.prompt)
