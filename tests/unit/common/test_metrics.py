"""Metrics emitters: loading by name and the statsd line protocol."""

import socket

from alloc_framework.common import exception
from alloc_framework.common import metrics
from tests import base


class TestEmitters(base.TestCase):

    def test_noop_by_default(self):
        emitter = metrics.get_emitter(self.conf)
        self.assertIsInstance(emitter, metrics.NoopEmitter)
        with emitter.timer('x'):
            emitter.send_gauge('y', 1)

    def test_unknown_backend(self):
        self.config(backend='missing', group='metrics')
        self.assertRaises(exception.DriverLoadError, metrics.get_emitter,
                          self.conf)

    def test_statsd_lines(self):
        receiver = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.addCleanup(receiver.close)
        receiver.bind(('127.0.0.1', 0))
        receiver.settimeout(10)
        self.config(backend='statsd', statsd_host='127.0.0.1',
                    statsd_port=receiver.getsockname()[1], prefix='af',
                    group='metrics')
        emitter = metrics.get_emitter(self.conf)
        self.assertIsInstance(emitter, metrics.StatsdEmitter)
        emitter.send_gauge('DeferredActionsPendingCount', 3)
        self.assertEqual(b'af.DeferredActionsPendingCount:3|g',
                         receiver.recv(100))
        with emitter.timer('DeferredActions.launch'):
            pass
        line = receiver.recv(100)
        self.assertTrue(line.startswith(b'af.DeferredActions.launch:'))
        self.assertTrue(line.endswith(b'|ms'))

    def test_statsd_without_daemon_never_raises(self):
        self.config(backend='statsd', statsd_host='127.0.0.1',
                    statsd_port=base.free_port(), group='metrics')
        emitter = metrics.get_emitter(self.conf)
        for _ in range(3):
            emitter.send_gauge('g', 1)
