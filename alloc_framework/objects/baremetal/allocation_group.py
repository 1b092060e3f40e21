"""The *AllocationGroup* versioned object and its SQL (an extension).

A group asks for several nodes at once, all or none: ``members`` is a
list of requests (``count`` nodes of a ``resource_class``, optionally
with ``traits`` and among ``candidate_nodes``) and ``spread`` optionally
names a node field over whose values the nodes of each member are spread.
It moves from ``allocating`` to ``active`` (every member got its nodes,
each as an ordinary allocation whose UUID is in ``allocations``) or to
``error`` (nothing is reserved). Like single allocations, every write of
an ``allocating`` group is guarded by its ``conductor_affinity``.

Reserving and releasing the nodes of a group is in
:mod:`alloc_framework.objects.baremetal.group_reservation`.
"""

from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import utils as db_utils
from oslo_utils import uuidutils
import sqlalchemy as sa

from alloc_framework.common import exception
from alloc_framework.common import utils
from alloc_framework.db import api as db_api
from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects.baremetal import base
from alloc_framework.objects.baremetal import fields

ALLOCATING = 'allocating'
ACTIVE = 'active'
ERROR = 'error'
STATES = (ALLOCATING, ACTIVE, ERROR)
# The group state machine, as data: a group is processed once.
TRANSITIONS = {
    ALLOCATING: (ACTIVE, ERROR),
    ACTIVE: (),
    ERROR: (),
}

GROUPS = models.NodeAllocationGroup.__table__
SORT_KEYS = ('id', 'uuid', 'name', 'state', 'owner', 'created_at',
             'updated_at')
FILTERS = ('state', 'owner', 'conductor_affinity',
           'conductor_affinity_not_in')
_COLUMNS = ('id', 'uuid', 'name', 'owner', 'state', 'last_error', 'members',
            'spread', 'allocations', 'conductor_affinity', 'created_at',
            'updated_at')


def guard_clause(affinity):
    """``conductor_affinity`` is ``affinity`` (NULL when None)."""
    column = GROUPS.c.conductor_affinity
    return column.is_(None) if affinity is None else column == affinity


def finish_statement(group, state, allocations=None, error=None):
    """UPDATE making an ``allocating`` group ``state``, guarded.

    The guard is the affinity the object was read with: a conductor that
    lost the group to a take-over changes nothing.
    """
    return (sa.update(GROUPS)
            .where(GROUPS.c.id == group.id,
                   GROUPS.c.state == ALLOCATING,
                   guard_clause(group.conductor_affinity))
            .values(state=state, allocations=allocations, last_error=error,
                    updated_at=base.utcnow()))


def lost_group_error(conn, group):
    """Why an update of ``group`` matched no row: gone, or not ours."""
    row = conn.execute(sa.select(GROUPS.c.conductor_affinity,
                                 GROUPS.c.state)
                       .where(GROUPS.c.id == group.id)).first()
    if row is None:
        return exception.AllocationGroupNotFound(group=group.uuid)
    return exception.AllocationTakenOver(allocation=group.uuid,
                                         conductor=row.conductor_affinity)


@base.AllocObjectRegistry.register
class AllocationGroup(base.AllocObject):
    """All or none of several allocations; see the module docstring."""

    # Version 1.0: initial version
    VERSION = '1.0'

    fields = {
        'id': fields.IntegerField(),
        'uuid': fields.UUIDField(nullable=True),
        'name': fields.StringField(nullable=True),
        'owner': fields.StringField(nullable=True),
        'state': fields.StringField(),
        'last_error': fields.StringField(nullable=True),
        'members': fields.ListOfFlexibleDictsField(),
        'spread': fields.FlexibleDictField(nullable=True),
        'allocations': fields.ListOfStringsField(nullable=True),
        'conductor_affinity': fields.IntegerField(nullable=True),
        'created_at': fields.DateTimeField(nullable=True),
        'updated_at': fields.DateTimeField(nullable=True),
    }

    @classmethod
    def _from_row(cls, context, row):
        obj = cls(context)
        for name in _COLUMNS:
            value = getattr(row, name)
            if name in ('spread',) and not value:
                value = None
            if name == 'allocations':
                value = list(value or [])
            setattr(obj, name, value)
        obj.obj_reset_changes()
        return obj

    def member_count(self):
        """How many nodes the group asks for."""
        return sum(int(m['count']) for m in self.members)

    # --- reading ------------------------------------------------------------

    @classmethod
    def get(cls, context, ident):
        """A group by UUID or name (as the API names it).

        :raises: AllocationGroupNotFound
        """
        if uuidutils.is_uuid_like(ident):
            return cls._get(context, GROUPS.c.uuid,
                            utils.canonical_uuid(ident), ident)
        return cls._get(context, GROUPS.c.name, ident, ident)

    @classmethod
    def get_by_id(cls, context, group_id):
        return cls._get(context, GROUPS.c.id, group_id, group_id)

    @classmethod
    @db_api.reader.connection
    def _get(cls, context, column, value, ident):
        row = context.connection.execute(
            sa.select(GROUPS).where(column == value)).first()
        if row is None:
            raise exception.AllocationGroupNotFound(group=ident)
        return cls._from_row(context, row)

    @classmethod
    @db_api.reader.connection
    def list(cls, context, filters=None, limit=None, marker=None,
             sort_key='id', sort_dir='asc'):
        """List groups.

        :param filters: dict with any of ``state``, ``owner``,
            ``conductor_affinity`` and ``conductor_affinity_not_in`` (a
            list of conductor ids; matches also groups without affinity).
        :param marker: UUID of the last group of the previous page.
        :raises: InvalidParameterValue on an unknown filter or sort key;
            AllocationGroupNotFound when the marker does not exist.
        """
        filters = dict(filters or {})
        unknown = set(filters) - set(FILTERS)
        if unknown:
            raise exception.InvalidParameterValue(
                err='Unknown allocation group filters: %s'
                    % ', '.join(sorted(unknown)))
        if sort_key not in SORT_KEYS:
            raise exception.InvalidParameterValue(
                err='The sort_key value "%s" is invalid. Allowed values '
                    'are: %s' % (sort_key, ', '.join(SORT_KEYS)))
        conn = context.connection
        model = models.NodeAllocationGroup
        query = sa.select(GROUPS)
        for key in ('state', 'owner', 'conductor_affinity'):
            if key in filters:
                query = query.where(GROUPS.c[key] == filters[key])
        if 'conductor_affinity_not_in' in filters:
            ids = list(filters['conductor_affinity_not_in'])
            column = GROUPS.c.conductor_affinity
            query = query.where(sa.or_(column.is_(None),
                                       column.notin_(ids) if ids
                                       else sa.true()))
        marker_row = None
        if marker is not None:
            marker_row = conn.execute(
                sa.select(GROUPS).where(GROUPS.c.uuid == marker)).first()
            if marker_row is None:
                raise exception.AllocationGroupNotFound(group=marker)
        sort_keys = [sort_key] if sort_key == 'id' else [sort_key, 'id']
        query = db_utils.paginate_query(query, model, limit, sort_keys,
                                        marker=marker_row,
                                        sort_dir=sort_dir)
        return [cls._from_row(context, row)
                for row in conn.execute(query).all()]

    # --- writing ------------------------------------------------------------

    def create(self, context=None):
        """Record the group (state ``allocating``).

        :raises: AllocationGroupAlreadyExists,
            AllocationGroupDuplicateName
        """
        context = context or self._context
        if not self.obj_attr_is_set('uuid') or not self.uuid:
            self.uuid = uuidutils.generate_uuid()
        self.state = ALLOCATING
        self._create(context)

    @db_api.retry_on_deadlock
    @db_api.writer.connection
    def _create(self, context):
        values = {}
        for name in _COLUMNS:
            if name in ('id', 'created_at', 'updated_at'):
                continue
            values[name] = (base.to_db_value(getattr(self, name))
                            if self.obj_attr_is_set(name) else None)
        values['allocations'] = []
        now = base.utcnow()
        values.update(created_at=now, updated_at=None)
        try:
            result = context.connection.execute(sa.insert(GROUPS), values)
        except db_exc.DBDuplicateEntry as exc:
            if 'name' in (exc.columns or ()):
                raise exception.AllocationGroupDuplicateName(
                    name=values.get('name'))
            raise exception.AllocationGroupAlreadyExists(uuid=self.uuid)
        self.id = result.inserted_primary_key[0]
        for name in _COLUMNS:
            if not self.obj_attr_is_set(name):
                setattr(self, name, None)
        self.allocations = []
        self.created_at = now
        self.updated_at = None
        self._context = context
        self.obj_reset_changes()

    def fail(self, reason, context=None):
        """Make the group ``error`` if it is still ``allocating`` (guarded).

        :returns: whether it was failed.
        :raises: AllocationGroupNotFound, AllocationTakenOver
        """
        return self._fail(context or self._context, str(reason))

    @db_api.retry_on_deadlock
    @db_api.writer.connection
    def _fail(self, context, reason):
        conn = context.connection
        result = conn.execute(finish_statement(self, ERROR, [], reason))
        if result.rowcount == 1:
            self.state = ERROR
            self.last_error = reason
            self.obj_reset_changes(['state', 'last_error'])
            return True
        error = lost_group_error(conn, self)
        if isinstance(error, exception.AllocationGroupNotFound):
            raise error
        row = conn.execute(sa.select(GROUPS.c.conductor_affinity)
                           .where(GROUPS.c.id == self.id)).first()
        if row.conductor_affinity != self.conductor_affinity:
            raise error
        return False

    def refresh(self, context=None):
        fresh = self.get_by_id(context or self._context, self.id)
        for name in self.fields:
            setattr(self, name, getattr(fresh, name))
        self.obj_reset_changes()

    @staticmethod
    @db_api.retry_on_deadlock
    @db_api.writer.connection
    def take_over(context, group_id, old_conductor_id, new_conductor_id):
        """Move a group to another conductor (compare-and-swap).

        :returns: whether this call moved it.
        """
        result = context.connection.execute(
            sa.update(GROUPS)
            .where(GROUPS.c.id == group_id, guard_clause(old_conductor_id))
            .values(conductor_affinity=new_conductor_id,
                    updated_at=base.utcnow()))
        return result.rowcount == 1
