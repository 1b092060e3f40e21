"""Versioned notifications of the bare metal side.

A notification is an event type, a priority, a publisher and a versioned
payload, sent through the oslo.messaging notifier, as upstream does
(``NodeSetPowerStateNotification``). Only deferred actions send any yet:
:class:`DeferredActionNotification` when an action reaches COMPLETED
(``info``) or FAILED (``error``), never for intermediate states.
"""

from alloc_framework.objects.baremetal import base
from alloc_framework.objects.baremetal import fields

# Priorities, lowest first; a notification below the configured level is
# not sent.
LEVELS = ('debug', 'info', 'warning', 'error', 'critical')
PUBLISHER = 'alloc-conductor'


@base.AllocObjectRegistry.register
class DeferredActionPayload(base.AllocObject):
    """What a deferred action notification says about the action."""

    # Version 1.0: initial version
    VERSION = '1.0'

    fields = {
        'uuid': fields.UUIDField(),
        'node_uuid': fields.UUIDField(),
        'state': fields.StringField(),
        'result': fields.StringField(nullable=True),
        'created_by': fields.StringField(nullable=True),
    }


class DeferredActionNotification:
    """``baremetal.deferred_action.<completed|failed>``.

    Only its payload is versioned: the notification itself never travels
    between services, its fields become the oslo.messaging envelope.
    """

    def __init__(self, event_type, level, publisher, payload):
        self.event_type = event_type
        self.level = level
        self.publisher = publisher
        self.payload = payload

    @classmethod
    def for_action(cls, action, node_uuid, host):
        """The notification of a terminal ``action`` of a node."""
        payload = DeferredActionPayload(
            uuid=action.uuid, node_uuid=node_uuid, state=action.state,
            result=action.result, created_by=action.created_by)
        return cls(event_type='baremetal.deferred_action.%s'
                              % action.state.lower(),
                   level='info' if action.state == 'COMPLETED' else 'error',
                   publisher='%s.%s' % (PUBLISHER, host), payload=payload)

    def emit(self, context, notifier, min_level):
        """Send through ``notifier`` unless below ``min_level``."""
        if min_level not in LEVELS or (LEVELS.index(self.level)
                                       < LEVELS.index(min_level)):
            return False
        getattr(notifier.prepare(publisher_id=self.publisher), self.level)(
            context.to_dict(), self.event_type,
            self.payload.obj_to_primitive())
        return True
