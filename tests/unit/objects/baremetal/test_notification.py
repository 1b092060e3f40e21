"""The allocation CRUD notification and its payload, without a notifier."""

from alloc_framework.objects.baremetal import allocation as allocation_obj
from alloc_framework.objects.baremetal import notification
from tests import base

NODE = '1be26c0b-03f2-4d2e-ae87-c02d7f33c123'
UUID = '5344a3e2-978a-444e-990a-cbf47c62ef88'


class TestAllocationCRUDNotification(base.TestCase):

    def notification(self, allocation, action='create', status='start',
                     **kw):
        return notification.AllocationCRUDNotification.for_allocation(
            allocation, action, status, 'h1', **kw)

    def test_envelope(self):
        alloc = allocation_obj.Allocation(uuid=UUID)
        for action in ('create', 'update', 'delete'):
            for status, level in (('start', 'info'), ('end', 'info'),
                                  ('error', 'error')):
                sent = self.notification(alloc, action, status)
                self.assertEqual(
                    ('baremetal.allocation.%s.%s' % (action, status),
                     level, 'alloc-api.h1'),
                    (sent.event_type, sent.level, sent.publisher))

    def test_unknown_action_or_status(self):
        alloc = allocation_obj.Allocation(uuid=UUID)
        self.assertRaises(ValueError, self.notification, alloc, 'reshape')
        self.assertRaises(ValueError, self.notification, alloc, 'create',
                          'done')

    def test_payload_of_an_allocation_not_created_yet(self):
        alloc = allocation_obj.Allocation(uuid=UUID, name='a',
                                          resource_class='rc')
        payload = self.notification(alloc).payload
        self.assertEqual(
            {'uuid': UUID, 'name': 'a', 'node_uuid': None, 'state': None,
             'last_error': None, 'owner': None, 'resource_class': 'rc',
             'traits': None, 'candidate_nodes': None, 'extra': {},
             'created_at': None, 'updated_at': None, 'error': None},
            {name: getattr(payload, name) for name in payload.fields})

    def test_node_uuid_and_error(self):
        alloc = allocation_obj.Allocation(uuid=UUID, node_uuid=NODE)
        self.assertEqual(NODE, self.notification(alloc).payload.node_uuid)
        other = '0c1fdbd4-5b8f-4c6e-9b8a-7b4f3a1c2d3e'
        self.assertEqual(other, self.notification(
            alloc, node_uuid=other).payload.node_uuid)
        # The error is said by error notifications only.
        self.assertIsNone(self.notification(
            alloc, 'delete', 'end', error='boom').payload.error)
        self.assertEqual('boom', self.notification(
            alloc, 'delete', 'error', error='boom').payload.error)
