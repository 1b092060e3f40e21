"""Versioned notifications of allocation changes, as upstream sends them.

The real WSGI application and an in-process conductor; the notifier is
oslo.messaging's with its in-memory ``test`` driver, so each test reads
exactly the envelopes (event type, priority, publisher, payload) that a
consumer of the message bus would get.
"""

import fixtures
import oslo_messaging
from oslo_messaging.notify import _impl_test as impl_test
from oslo_utils import uuidutils

from alloc_framework.common import states
from alloc_framework.objects.baremetal import node as node_obj
from alloc_framework.objects.baremetal import notification
from tests import base as tests_base
from tests.functional.api.baremetal import base
from tests.functional.conductor import test_rpc_oslo

PAYLOAD_FIELDS = {'uuid', 'name', 'node_uuid', 'state', 'last_error',
                  'owner', 'resource_class', 'traits', 'candidate_nodes',
                  'extra', 'created_at', 'updated_at', 'error'}
PUBLISHER = 'alloc-api.api-host'


class NotificationTestCase(base.BaremetalTestCase):

    # The notifier of an operator's configuration; None keeps the default.
    notification_driver = 'test'

    def setUp(self):
        super().setUp()
        self.config(host='api-host')
        # Registers [oslo_messaging_notifications] on this configuration.
        oslo_messaging.get_notification_transport(self.conf,
                                                  url='fake:/')
        self.config(transport_url='fake:/')
        if self.notification_driver:
            self.config(driver=[self.notification_driver],
                        group='oslo_messaging_notifications')
        impl_test.reset()
        self.addCleanup(impl_test.reset)

    def sent(self):
        """``[(event_type, priority, publisher, data)]`` in order sent."""
        result = []
        for _ctx, message, _priority, _retry in impl_test.NOTIFICATIONS:
            payload = message['payload']
            self.assertEqual('alloc_framework',
                             payload['alloc_framework_object.namespace'])
            self.assertEqual('AllocationCRUDPayload',
                             payload['alloc_framework_object.name'])
            self.assertEqual('1.0', payload['alloc_framework_object.version'])
            data = payload['alloc_framework_object.data']
            self.assertEqual(PAYLOAD_FIELDS, set(data))
            result.append((message['event_type'], message['priority'],
                           message['publisher_id'], data))
        impl_test.reset()
        return result

    def events(self):
        return [(event, priority) for event, priority, _p, _d in self.sent()]

    def wait(self, ident):
        def processed():
            body = self.get('/v1/allocations/%s' % ident,
                            status=200).json_body
            return body if body['state'] != 'allocating' else None
        return tests_base.wait_for(processed, 'allocation %s to be processed'
                                   % ident, timeout=30, interval=0.05)

    def allocate(self, **body):
        body.setdefault('resource_class', 'baremetal')
        created = self.post('/v1/allocations', body, status=201).json_body
        return self.wait(created['uuid'])


class TestCreate(NotificationTestCase):

    def test_start_and_end(self):
        node = self.make_node(name='n-1', owner='proj')
        resp = self.post('/v1/allocations',
                         {'resource_class': 'baremetal', 'name': 'a-1',
                          'traits': [], 'candidate_nodes': ['n-1'],
                          'extra': {'k': 'v'}, 'owner': 'proj'},
                         status=201).json_body
        sent = self.sent()
        (start, start_prio, start_pub, before), (end, end_prio, end_pub,
                                                 after) = sent
        self.assertEqual(('baremetal.allocation.create.start', 'INFO',
                          PUBLISHER),
                         (start, start_prio, start_pub))
        self.assertEqual(('baremetal.allocation.create.end', 'INFO',
                          PUBLISHER),
                         (end, end_prio, end_pub))
        # Both name the allocation the response names; the start is sent
        # before the allocation exists: no state nor dates yet.
        self.assertEqual(resp['uuid'], before['uuid'])
        self.assertEqual({'uuid': resp['uuid'], 'name': 'a-1',
                          'node_uuid': None, 'state': None,
                          'last_error': None, 'owner': 'proj',
                          'resource_class': 'baremetal', 'traits': None,
                          'candidate_nodes': [node.uuid],
                          'extra': {'k': 'v'}, 'created_at': None,
                          'updated_at': None, 'error': None}, before)
        self.assertEqual(resp['uuid'], after['uuid'])
        self.assertEqual('allocating', after['state'])
        self.assertEqual([], after['traits'])
        self.assertIsNotNone(after['created_at'])
        self.assertIsNone(after['error'])
        # The conductor's processing sends nothing (nor does upstream's).
        self.assertEqual('active', self.wait(resp['uuid'])['state'])
        self.assertEqual([], self.sent())

    def test_backfill_names_the_node(self):
        node = self.make_node(provision_state=states.ACTIVE)
        self.post('/v1/allocations', {'node': node.uuid}, status=201)
        sent = self.sent()
        self.assertEqual(['baremetal.allocation.create.start',
                          'baremetal.allocation.create.end'],
                         [event for event, _p, _pub, _d in sent])
        self.assertEqual([node.uuid, node.uuid],
                         [data['node_uuid'] for _e, _p, _pub, data in sent])
        self.assertEqual('active', sent[1][3]['state'])

    def test_refused_creation_sends_error(self):
        self.allocate(name='taken')
        self.sent()
        resp = self.post('/v1/allocations', {'resource_class': 'baremetal',
                                             'name': 'taken'})
        fault = self.assertError(resp, 409)
        (start, _p, _pub, _d), (error, prio, pub, data) = self.sent()
        self.assertEqual('baremetal.allocation.create.start', start)
        self.assertEqual(('baremetal.allocation.create.error', 'ERROR',
                          PUBLISHER), (error, prio, pub))
        self.assertEqual(fault['faultstring'], data['error'])
        self.assertEqual('taken', data['name'])

    def test_request_refused_before_the_change_sends_nothing(self):
        resp = self.post('/v1/allocations', {'resource_class': 'baremetal',
                                             'bogus': 1})
        self.assertError(resp, 400)
        resp = self.post('/v1/allocations', {'resource_class': 'baremetal',
                                             'candidate_nodes': ['nope']})
        self.assertError(resp, 400)
        self.assertEqual([], self.sent())


class TestUpdateDelete(NotificationTestCase):

    def setUp(self):
        super().setUp()
        self.node = self.make_node()
        self.alloc = self.allocate(candidate_nodes=[self.node.uuid])
        self.assertEqual('active', self.alloc['state'])
        self.path = '/v1/allocations/%s' % self.alloc['uuid']
        self.sent()

    def test_update(self):
        self.patch(self.path, [{'op': 'add', 'path': '/name',
                                'value': 'renamed'}], status=200)
        sent = self.sent()
        self.assertEqual([('baremetal.allocation.update.start', 'INFO',
                           PUBLISHER),
                          ('baremetal.allocation.update.end', 'INFO',
                           PUBLISHER)],
                         [(e, p, pub) for e, p, pub, _d in sent])
        for _e, _p, _pub, data in sent:
            self.assertEqual('renamed', data['name'])
            self.assertEqual(self.node.uuid, data['node_uuid'])
            self.assertEqual('active', data['state'])

    def test_refused_update_sends_error(self):
        self.allocate(resource_class='other', name='taken')
        self.sent()
        resp = self.patch(self.path, [{'op': 'add', 'path': '/name',
                                       'value': 'taken'}])
        fault = self.assertError(resp, 409)
        (start, _p, _pub, _d), (error, prio, _pub2, data) = self.sent()
        self.assertEqual('baremetal.allocation.update.start', start)
        self.assertEqual(('baremetal.allocation.update.error', 'ERROR'),
                         (error, prio))
        self.assertEqual(fault['faultstring'], data['error'])
        # A refused patch (bad field) never starts the change.
        resp = self.patch(self.path, [{'op': 'replace', 'path': '/state',
                                       'value': 'x'}])
        self.assertError(resp, 400)
        self.assertEqual([], self.sent())

    def test_delete(self):
        self.delete(self.path, status=204)
        sent = self.sent()
        self.assertEqual([('baremetal.allocation.delete.start', 'INFO',
                           PUBLISHER),
                          ('baremetal.allocation.delete.end', 'INFO',
                           PUBLISHER)],
                         [(e, p, pub) for e, p, pub, _d in sent])
        for _e, _p, _pub, data in sent:
            self.assertEqual(self.alloc['uuid'], data['uuid'])
            self.assertEqual(self.node.uuid, data['node_uuid'])
            self.assertIsNone(data['error'])

    def test_delete_through_the_node(self):
        self.delete('/v1/nodes/%s/allocation' % self.node.uuid, status=204)
        self.assertEqual([('baremetal.allocation.delete.start', 'INFO'),
                          ('baremetal.allocation.delete.end', 'INFO')],
                         self.events())

    def test_refused_deletion_sends_error(self):
        node = node_obj.Node.get_by_id(self.context, self.node.id)
        node.provision_state = states.ACTIVE
        node.save(self.context)
        fault = self.assertError(self.delete(self.path), 409)
        (start, _p, _pub, _d), (error, prio, pub, data) = self.sent()
        self.assertEqual('baremetal.allocation.delete.start', start)
        self.assertEqual(('baremetal.allocation.delete.error', 'ERROR',
                          PUBLISHER), (error, prio, pub))
        self.assertEqual(fault['faultstring'], data['error'])
        self.assertEqual(self.node.uuid, data['node_uuid'])

    def test_unknown_allocation_sends_nothing(self):
        self.assertError(self.delete('/v1/allocations/nope'), 404)
        self.assertEqual([], self.sent())


class TestLevel(NotificationTestCase):

    def test_error_level_sends_errors_only(self):
        self.config(notification_level='error', group='allocation')
        self.allocate(name='taken')
        self.assertError(self.post('/v1/allocations',
                                   {'resource_class': 'baremetal',
                                    'name': 'taken'}), 409)
        self.assertEqual([('baremetal.allocation.create.error', 'ERROR')],
                         self.events())

    def test_none_sends_nothing(self):
        self.config(notification_level='none', group='allocation')
        alloc = self.allocate()
        self.delete('/v1/allocations/%s' % alloc['uuid'], status=204)
        self.assertEqual([], self.sent())


class TestNotifierOffByDefault(NotificationTestCase):

    notification_driver = None

    def test_nothing_sent_without_a_driver(self):
        self.assertEqual([], self.conf.oslo_messaging_notifications.driver)
        alloc = self.allocate()
        self.delete('/v1/allocations/%s' % alloc['uuid'], status=204)
        self.assertEqual([], self.sent())

    def test_no_payload_built_without_a_driver(self):
        # The no-op driver would drop it: the payload is not even made.
        built = []
        real = notification.AllocationCRUDNotification.for_allocation

        def spy(*args, **kwargs):
            built.append(args[1:3])
            return real(*args, **kwargs)

        self.useFixture(fixtures.MockPatchObject(
            notification.AllocationCRUDNotification, 'for_allocation',
            side_effect=spy))
        alloc = self.allocate()
        self.delete('/v1/allocations/%s' % alloc['uuid'], status=204)
        self.assertEqual([], built)


class _Collector:
    """A notification endpoint keeping what it receives."""

    def __init__(self):
        self.received = []

    def info(self, ctxt, publisher_id, event_type, payload, metadata):
        self.received.append((event_type, 'INFO', publisher_id, payload))

    def error(self, ctxt, publisher_id, event_type, payload, metadata):
        self.received.append((event_type, 'ERROR', publisher_id, payload))


class TestOverRabbitMQ(base.BaremetalTestCase):
    """The ``messagingv2`` driver to the machine's RabbitMQ, and back.

    Skipped when the broker cannot be reached, except in CI (see
    ``test_rpc_oslo``).
    """

    def setUp(self):
        super().setUp()
        error = test_rpc_oslo.broker_error()
        if error:
            if tests_base.IN_CI:
                self.fail(error)
            self.skipTest(error)
        self.config(host='api-host')
        transport = oslo_messaging.get_notification_transport(
            self.conf, url=test_rpc_oslo.TRANSPORT_URL)
        self.addCleanup(transport.cleanup)
        # A topic of its own: concurrent test runs share the broker.
        topic = 'alloc-notifications-%s' % uuidutils.generate_uuid()[:12]
        self.config(driver=['messagingv2'], topics=[topic],
                    transport_url=test_rpc_oslo.TRANSPORT_URL,
                    group='oslo_messaging_notifications')
        self.collector = _Collector()
        listener = oslo_messaging.get_notification_listener(
            transport, [oslo_messaging.Target(topic=topic)],
            [self.collector], executor='threading')
        listener.start()
        self.addCleanup(listener.wait)
        self.addCleanup(listener.stop)

    def test_create_and_refused_delete(self):
        node = self.make_node()
        created = self.post('/v1/allocations',
                            {'resource_class': 'baremetal',
                             'candidate_nodes': [node.uuid]},
                            status=201).json_body
        tests_base.wait_for(
            lambda: self.get('/v1/allocations/%s' % created['uuid'],
                             status=200).json_body['state'] == 'active',
            'allocation to be active', timeout=30, interval=0.05)
        node = node_obj.Node.get_by_id(self.context, node.id)
        node.provision_state = states.ACTIVE
        node.save(self.context)
        fault = self.assertError(
            self.delete('/v1/allocations/%s' % created['uuid']), 409)
        tests_base.wait_for(lambda: len(self.collector.received) >= 4,
                            'four notifications', timeout=30, interval=0.05)
        received = self.collector.received
        self.assertEqual(
            [('baremetal.allocation.create.start', 'INFO', PUBLISHER),
             ('baremetal.allocation.create.end', 'INFO', PUBLISHER),
             ('baremetal.allocation.delete.start', 'INFO', PUBLISHER),
             ('baremetal.allocation.delete.error', 'ERROR', PUBLISHER)],
            [(event, priority, publisher)
             for event, priority, publisher, _p in received])
        payload = received[3][3]
        self.assertEqual('AllocationCRUDPayload',
                         payload['alloc_framework_object.name'])
        data = payload['alloc_framework_object.data']
        self.assertEqual((created['uuid'], node.uuid, fault['faultstring']),
                         (data['uuid'], data['node_uuid'], data['error']))
