"""Versioned notifications of the bare metal side.

A notification is an event type, a priority, a publisher and a versioned
payload, sent through the oslo.messaging notifier, as upstream does
(``NodeSetPowerStateNotification``). Two kinds are sent:

* :class:`DeferredActionNotification` when an action reaches COMPLETED
  (``info``) or FAILED (``error``), never for intermediate states; the
  conductor sends them.
* :class:`AllocationCRUDNotification` when the API creates, updates or
  deletes an allocation: ``baremetal.allocation.<action>.<status>``,
  ``start`` and ``end`` at ``info``, ``error`` at ``error``, as upstream's
  CRUD notifications. The conductor sends none when it ends processing
  an allocation (nor does upstream).
"""

from alloc_framework.objects.baremetal import base
from alloc_framework.objects.baremetal import fields

# Priorities, lowest first; a notification below the configured level is
# not sent.
LEVELS = ('debug', 'info', 'warning', 'error', 'critical')
PUBLISHER = 'alloc-conductor'
API_PUBLISHER = 'alloc-api'

# Actions and statuses of the allocation CRUD notifications.
CRUD_ACTIONS = ('create', 'update', 'delete')
START, END, ERROR = 'start', 'end', 'error'


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


@base.AllocObjectRegistry.register
class AllocationCRUDPayload(base.AllocObject):
    """What an allocation CRUD notification says about the allocation.

    The fields of upstream's ``AllocationCRUDPayload`` 1.1, and ``error``.
    """

    # Version 1.0: upstream's 1.1 fields (with owner) and error
    VERSION = '1.0'

    fields = {
        'uuid': fields.UUIDField(nullable=True),
        'name': fields.StringField(nullable=True),
        'node_uuid': fields.StringField(nullable=True),
        'state': fields.StringField(nullable=True),
        'last_error': fields.StringField(nullable=True),
        'owner': fields.StringField(nullable=True),
        'resource_class': fields.StringField(nullable=True),
        'traits': fields.ListOfStringsField(nullable=True),
        'candidate_nodes': fields.ListOfStringsField(nullable=True),
        'extra': fields.FlexibleDictField(nullable=True),
        'created_at': fields.DateTimeField(nullable=True),
        'updated_at': fields.DateTimeField(nullable=True),
        # Why the request failed, in ``error`` notifications only.
        'error': fields.StringField(nullable=True),
    }

    # Copied from the allocation when it has them (an allocation not yet
    # created has neither state nor dates).
    COPIED = ('uuid', 'name', 'state', 'last_error', 'owner',
              'resource_class', 'traits', 'candidate_nodes', 'extra',
              'created_at', 'updated_at')

    @classmethod
    def for_allocation(cls, allocation, node_uuid=None, error=None):
        """The payload of ``allocation``.

        :param node_uuid: the UUID of its node; by default the one the
            allocation read, if any.
        """
        values = {name: (getattr(allocation, name)
                         if allocation.obj_attr_is_set(name) else None)
                  for name in cls.COPIED}
        if node_uuid is None and allocation.obj_attr_is_set('node_uuid'):
            node_uuid = allocation.node_uuid
        return cls(node_uuid=node_uuid, error=error, **values)


class Notification:
    """An event type, a priority, a publisher and a versioned payload.

    Only the payload is versioned: the notification itself never travels
    between services, its fields become the oslo.messaging envelope.
    """

    def __init__(self, event_type, level, publisher, payload):
        self.event_type = event_type
        self.level = level
        self.publisher = publisher
        self.payload = payload

    def emit(self, context, notifier, min_level):
        """Send through ``notifier`` unless below ``min_level``."""
        if min_level not in LEVELS or (LEVELS.index(self.level)
                                       < LEVELS.index(min_level)):
            return False
        getattr(notifier.prepare(publisher_id=self.publisher), self.level)(
            context.to_dict(), self.event_type,
            self.payload.obj_to_primitive())
        return True


class DeferredActionNotification(Notification):
    """``baremetal.deferred_action.<completed|failed>``."""

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


class AllocationCRUDNotification(Notification):
    """``baremetal.allocation.<create|update|delete>.<start|end|error>``."""

    @classmethod
    def for_allocation(cls, allocation, action, status, host,
                       node_uuid=None, error=None):
        """The notification of ``action`` on ``allocation`` by the API."""
        if action not in CRUD_ACTIONS or status not in (START, END, ERROR):
            raise ValueError('No allocation notification %s.%s'
                             % (action, status))
        return cls(event_type='baremetal.allocation.%s.%s'
                              % (action, status),
                   level='error' if status == ERROR else 'info',
                   publisher='%s.%s' % (API_PUBLISHER, host),
                   payload=AllocationCRUDPayload.for_allocation(
                       allocation, node_uuid=node_uuid,
                       error=error if status == ERROR else None))
