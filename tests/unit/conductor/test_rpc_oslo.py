"""The oslo transport's timeouts, with a stand-in for oslo.messaging."""

import oslo_messaging as messaging

from alloc_framework.common import exception
from alloc_framework.conductor import rpc_oslo
from tests import base


class FakeClient:
    """Records ``prepare`` arguments; calls raise ``error`` if set."""

    def __init__(self):
        self.prepared = []
        self.error = None

    def prepare(self, **kw):
        self.prepared.append(kw)
        return self

    def call(self, context, method, **kwargs):
        if self.error is not None:
            raise self.error
        return (method, kwargs)


class OsloTransportTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.config(rpc_failover_timeout=4, rpc_response_timeout=60)
        self.transport = rpc_oslo.OsloTransport(self.conf)
        self.client = FakeClient()
        self.transport._transport = object()
        self.transport._client = self.client

    def test_calls_are_monitored(self):
        self.assertEqual(('update_node', {'node_id': 1}),
                         self.transport.call(None, 'c1', 'update_node',
                                             node_id=1))
        self.assertEqual([{'server': 'c1', 'retry': rpc_oslo.CALL_RETRY,
                           'call_monitor_timeout': 4}],
                         self.client.prepared)

    def test_ping_is_bounded(self):
        self.assertEqual(('ping', {}), self.transport.ping(None, 'c1'))
        self.assertEqual([{'server': 'c1', 'retry': rpc_oslo.CALL_RETRY,
                           'timeout': 4}], self.client.prepared)

    def test_no_answer(self):
        self.client.error = messaging.MessagingTimeout('no reply')
        for call in (lambda: self.transport.call(None, 'c1', 'x'),
                     lambda: self.transport.ping(None, 'c1')):
            exc = self.assertRaises(exception.ConductorNotAnswering, call)
            self.assertEqual(503, exc.code)
            self.assertEqual('Conductor c1 did not answer, please retry.',
                             str(exc))

    def test_broker_failure_is_not_the_conductor(self):
        self.client.error = messaging.MessageDeliveryFailure('broker')
        exc = self.assertRaises(exception.TemporaryFailure,
                                self.transport.call, None, 'c1', 'x')
        self.assertNotIsInstance(exc, exception.ConductorNotAnswering)
        self.assertEqual(503, exc.code)

    def test_failover_timeout_below_response_timeout(self):
        self.config(rpc_failover_timeout=60)
        exc = self.assertRaises(ValueError, rpc_oslo.OsloTransport,
                                self.conf)
        self.assertEqual('[DEFAULT]rpc_failover_timeout (60) must be '
                         'smaller than [DEFAULT]rpc_response_timeout (60)',
                         str(exc))
        self.assertRaises(ValueError, self.config, rpc_failover_timeout=1)
