"""The NodeHistory versioned object: events in the life of a node.

Conductors record failures (and other notable events) here so that
operators can see them after ``last_error`` has been overwritten.

From version 1.2 an event also keeps the node's provision ``state`` and
``target_provision_state`` when it was recorded and, for an event that
records a change of provision state, ``duration_seconds``: how long the
node stayed in the state it left (bare metal API 1.115).
"""

from oslo_utils import timeutils
from oslo_utils import uuidutils
from oslo_utils import versionutils
import sqlalchemy as sa

from alloc_framework.common import exception
from alloc_framework.db import api as db_api
from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects.baremetal import base
from alloc_framework.objects.baremetal import fields

# Severities and event types used by the conductor.
INFO = 'INFO'
WARNING = 'WARNING'
ERROR = 'ERROR'
PROVISIONING = 'provisioning'
POWER = 'power'
ALLOCATION = 'allocation'
DEFERRED_ACTION = 'deferred_action'
# Upstream's type for what the power state sync finds.
MONITORING = 'monitoring'


HISTORY = models.NodeHistory.__table__


@db_api.writer
def _create(context, values):
    result = context.session.execute(sa.insert(HISTORY).values(**values))
    return context.session.execute(
        sa.select(HISTORY).where(
            HISTORY.c.id == result.inserted_primary_key[0])).one()


@db_api.reader
def _get_by_uuid(context, uuid):
    return context.session.execute(
        sa.select(HISTORY).where(HISTORY.c.uuid == uuid)).one_or_none()


@db_api.reader
def _list_by_node(context, node_id, limit, marker):
    H = HISTORY.c
    query = sa.select(HISTORY).where(H.node_id == node_id).order_by(H.id)
    if marker is not None:
        marker_id = context.session.execute(
            sa.select(H.id).where(H.uuid == marker)).scalar_one_or_none()
        if marker_id is None:
            raise exception.InvalidParameterValue(
                err='Marker %s could not be found.' % marker)
        query = query.where(H.id > marker_id)
    if limit:
        query = query.limit(limit)
    return context.session.execute(query).all()


def node_state(node, state_entered_at=None):
    """The state fields of an event of ``node`` recorded now.

    :param state_entered_at: see :meth:`NodeHistory.record`.
    """
    duration = None
    if state_entered_at is not None:
        # Node fields are aware datetimes; the database's are naive UTC.
        entered = timeutils.normalize_time(state_entered_at)
        duration = max(0, int((base.utcnow() - entered).total_seconds()))
    return {'state': node.provision_state,
            'target_provision_state': node.target_provision_state,
            'duration_seconds': duration}


@base.AllocObjectRegistry.register
class NodeHistory(base.AllocObject):
    """One event of a node's history."""

    # Version 1.0: initial version
    # Version 1.1: project
    # Version 1.2: state, target_provision_state, duration_seconds
    VERSION = '1.2'

    fields = {
        'id': fields.IntegerField(),
        'uuid': fields.UUIDField(nullable=True),
        'node_id': fields.IntegerField(),
        'conductor': fields.StringField(nullable=True),
        'event_type': fields.StringField(nullable=True),
        'severity': fields.StringField(nullable=True),
        'event': fields.StringField(nullable=True),
        'user': fields.StringField(nullable=True),
        'project': fields.StringField(nullable=True),
        'state': fields.StringField(nullable=True),
        'target_provision_state': fields.StringField(nullable=True),
        'duration_seconds': fields.IntegerField(nullable=True),
        'created_at': fields.DateTimeField(nullable=True),
        'updated_at': fields.DateTimeField(nullable=True),
    }

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
        target = versionutils.convert_version_to_tuple(target_version)
        if target < (1, 2):
            for name in ('state', 'target_provision_state',
                         'duration_seconds'):
                primitive.pop(name, None)
        if target < (1, 1):
            primitive.pop('project', None)

    def create(self, context=None):
        """Insert the event (a UUID is generated when unset)."""
        context = context or self._context
        values = self._changes_for_db()
        values.pop('id', None)
        values.setdefault('uuid', uuidutils.generate_uuid())
        values.setdefault('created_at', base.utcnow())
        row = _create(context, values)
        self._from_db_row(context, self, row)

    @classmethod
    def record(cls, context, node, event, event_type=PROVISIONING,
               severity=ERROR, conductor=None, state_entered_at=None):
        """Shortcut: record ``event`` for ``node`` (a Node) and return it.

        The event keeps the node's provision state and target as they
        are now.

        :param state_entered_at: for an event that records a change of
            provision state (made before this call), when the node had
            entered the state it left (its ``provision_updated_at`` then):
            the event's ``duration_seconds`` is the time since.
        """
        entry = cls(context, node_id=node.id, event=event,
                    event_type=event_type, severity=severity,
                    conductor=conductor,
                    user=getattr(context, 'user_id', None),
                    project=getattr(context, 'project_id', None),
                    **node_state(node, state_entered_at))
        entry.create(context)
        return entry

    @classmethod
    def get_by_uuid(cls, context, uuid):
        """:raises: NodeHistoryNotFound"""
        row = _get_by_uuid(context, uuid)
        if row is None:
            raise exception.NodeHistoryNotFound(history=uuid)
        return cls._from_db_row(context, cls(), row)

    @classmethod
    def list_by_node_id(cls, context, node_id, limit=None, marker=None):
        """Events of a node, oldest first.

        :param marker: UUID of the last event of the previous page.
        :raises: InvalidParameterValue for an unknown marker.
        """
        return [cls._from_db_row(context, cls(), row)
                for row in _list_by_node(context, node_id, limit, marker)]
