"""Fixtures for IPMI tests: a BMC emulator process, an image server.

:class:`BMC` starts :mod:`tests.functional.drivers.ipmi.emulator` as a
subprocess on a free UDP port of 127.0.0.1 and stops it at clean-up.
"""

import collections
import http.server
import json
import os
import select
import subprocess
import sys
import threading
import time

import fixtures

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__))))))


class BMC(fixtures.Fixture):
    """An emulated BMC: ``port``, ``state()``; ``driver_info()``."""

    def __init__(self, user='admin', password='s3cret', silent=False,
                 stuck_power=False, power_delay=0.0):
        super().__init__()
        self.user = user
        self.password = password
        self.silent = silent
        self.stuck_power = stuck_power
        self.power_delay = power_delay

    def _setUp(self):
        tmp = self.useFixture(fixtures.TempDir()).path
        self.state_file = os.path.join(tmp, 'bmc.json')
        argv = [sys.executable, '-m', 'tests.functional.drivers.ipmi.emulator',
                '--state-file', self.state_file, '--user', self.user,
                '--password', self.password]
        if self.silent:
            argv.append('--silent')
        if self.stuck_power:
            argv.append('--stuck-power')
        if self.power_delay:
            argv += ['--power-delay', str(self.power_delay)]
        self.process = subprocess.Popen(
            argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True)
        self.addCleanup(self._stop)
        # poll(), not select(): a test process may hold descriptors
        # above select()'s limit of 1023.
        poller = select.poll()
        poller.register(self.process.stdout, select.POLLIN)
        ready = poller.poll(30000)
        line = self.process.stdout.readline() if ready else ''
        if not line.startswith('port '):
            self._stop()
            raise RuntimeError('BMC emulator did not start: %r %s'
                               % (line, self.process.stderr.read()))
        self.port = int(line.split()[1])

    def _stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for stream in (self.process.stdout, self.process.stderr):
            stream.close()

    def state(self):
        """What the BMC holds (see the emulator's ``save``)."""
        with open(self.state_file) as f:
            return json.load(f)

    def driver_info(self, **overrides):
        info = {'ipmi_address': '127.0.0.1', 'ipmi_port': self.port,
                'ipmi_username': self.user, 'ipmi_password': self.password}
        info.update(overrides)
        return info


class ImageServer(fixtures.Fixture):
    """Serves ``files`` (``{path: bytes}``) over HTTP on 127.0.0.1.

    ``trickle`` paths are sent 64 bytes at a time, ``trickle`` seconds
    apart (a slow server). ``requests`` counts the GETs of each path.
    """

    def __init__(self, files, trickle=None):
        super().__init__()
        self.files = files
        self.trickle = trickle or {}
        self.requests = collections.Counter()

    def _setUp(self):
        files, trickle, requests = self.files, self.trickle, self.requests

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                requests[self.path] += 1
                body = files.get(self.path)
                if body is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header('Content-Length', str(len(body)))
                self.end_headers()
                if self.path not in trickle:
                    self.wfile.write(body)
                    return
                for start in range(0, len(body), 64):
                    time.sleep(trickle[self.path])
                    self.wfile.write(body[start:start + 64])
                    self.wfile.flush()

            def log_message(self, *args):
                pass

        server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        self.addCleanup(thread.join, 10)
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        self.url = 'http://127.0.0.1:%d' % server.server_address[1]
