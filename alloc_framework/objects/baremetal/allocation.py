"""The node *Allocation* versioned object and its SQL.

An allocation asks for one node of a resource class (optionally with traits
and among candidate nodes). It moves from ``allocating`` to ``active`` (a
node is reserved for it) or to ``error``. ``conductor_affinity`` is the id
of the conductor processing it; every update made through :meth:`save` is
guarded by the affinity the object was loaded with, so a conductor that
lost the allocation to a take-over cannot overwrite the new owner's work.

Reserving and releasing nodes touches nodes and allocations together and
lives in :mod:`alloc_framework.objects.baremetal.node_reservation`.
"""

import functools

from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import utils as db_utils
from oslo_utils import uuidutils
from oslo_utils import versionutils
import sqlalchemy as sa

from alloc_framework.common import exception
from alloc_framework.db import api as db_api
from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects.baremetal import base
from alloc_framework.objects.baremetal import fields

# The allocation state machine: ALLOCATING -> ACTIVE | ERROR, and
# ERROR -> ALLOCATING when a client retries a failed allocation.
ALLOCATING = 'allocating'
ACTIVE = 'active'
ERROR = 'error'
STATES = (ALLOCATING, ACTIVE, ERROR)
TRANSITIONS = {
    ALLOCATING: (ACTIVE, ERROR),
    ACTIVE: (),
    ERROR: (ALLOCATING,),
}
# The states a retry moves back to ALLOCATING.
RETRYABLE = tuple(state for state, targets in TRANSITIONS.items()
                  if ALLOCATING in targets)

ALLOCATIONS = models.NodeAllocation.__table__
TRAITS = models.NodeAllocationTrait.__table__
NODES = models.Node.__table__

# Columns the list may be sorted by (JSON columns are not sortable).
SORT_KEYS = ('id', 'uuid', 'name', 'node_id', 'state', 'owner',
             'resource_class', 'conductor_affinity', 'created_at',
             'updated_at')
FILTERS = ('state', 'resource_class', 'node_id', 'owner',
           'conductor_affinity', 'conductor_affinity_not_in')

_NO_GUARD = object()

_COLUMNS = ('id', 'uuid', 'name', 'node_id', 'state', 'owner', 'last_error',
            'resource_class', 'candidate_nodes', 'extra',
            'conductor_affinity', 'created_at', 'updated_at')


def _is_int_like(value):
    if isinstance(value, int):
        return not isinstance(value, bool)
    return isinstance(value, str) and value.isdigit()


def _load_traits(session, allocation_ids):
    """Traits of many allocations in one query: {id: sorted list}."""
    result = {i: [] for i in allocation_ids}
    if not allocation_ids:
        return result
    rows = session.execute(
        sa.select(TRAITS.c.allocation_id, TRAITS.c.trait).where(
            TRAITS.c.allocation_id.in_(allocation_ids)))
    for allocation_id, trait in rows:
        result[allocation_id].append(trait)
    for traits in result.values():
        traits.sort()
    return result


_INSERT = sa.insert(ALLOCATIONS)
_INSERT_TRAITS = sa.insert(TRAITS)


def insert_allocation(session, values, traits):
    """Insert an allocation row and its traits; return the new id.

    ``values`` gets the ``created_at`` written. Shared by
    :meth:`Allocation.create` and the backfill, which must write the
    allocation and the node in one transaction.

    :raises: AllocationAlreadyExists, AllocationDuplicateName
    """
    now = base.utcnow()
    values.update(created_at=now, updated_at=None)
    # No savepoint: a duplicate ends the whole transaction (callers never
    # go on after it), and a savepoint costs two round trips.
    try:
        result = session.execute(_INSERT, values)
    except db_exc.DBDuplicateEntry as exc:
        if 'name' in (exc.columns or ()):
            raise exception.AllocationDuplicateName(name=values.get('name'))
        raise exception.AllocationAlreadyExists(uuid=values['uuid'])
    allocation_id = result.inserted_primary_key[0]
    if traits:
        session.execute(_INSERT_TRAITS, [
            {'allocation_id': allocation_id, 'trait': t, 'created_at': now}
            for t in sorted(set(traits))])
    return allocation_id


def check_instance_uuid_free(session, uuid, node_id=None):
    """Refuse an allocation UUID used as ``instance_uuid`` of a node.

    ``node_id`` (a backfill) is the one node allowed to carry it already.

    :raises: InstanceAssociated
    """
    query = sa.select(NODES.c.id, NODES.c.uuid).where(
        NODES.c.instance_uuid == uuid)
    row = session.execute(query).first()
    if row is not None and row.id != node_id:
        raise exception.InstanceAssociated(instance_uuid=uuid, node=row.uuid)


def _guard_clause(affinity):
    """``conductor_affinity`` is ``affinity`` (NULL when None)."""
    column = ALLOCATIONS.c.conductor_affinity
    return column.is_(None) if affinity is None else column == affinity


# The hot statements are built once, with bound parameters: building a
# statement (and its cache key) costs more CPU than running it.

# Always read: what identifies the allocation, what the API's policy
# decides on and what guards a later save().
_KEY_COLUMNS = ('id', 'uuid', 'owner', 'conductor_affinity')


@functools.lru_cache(maxsize=128)
def _get_statement(column, fields=None):
    """SELECT of the allocation whose ``column`` is ``:value``.

    The row, its traits (one result row per trait, or one with a NULL
    trait) and the UUID of its node, in one round trip.

    :param fields: a sorted tuple of the fields to read besides
        ``_KEY_COLUMNS``, or None for all of them. The traits and the
        node are joined only when asked for: every column the database
        sends costs the driver a descriptor to parse, which matters for
        the read that clients poll.
    """
    if fields is None:
        names = _COLUMNS
    else:
        wanted = set(_KEY_COLUMNS) | (set(fields) & set(_COLUMNS))
        if 'node_uuid' in fields:
            wanted.add('node_id')
        names = [name for name in _COLUMNS if name in wanted]
    selected = [ALLOCATIONS.c[name] for name in names]
    joined = ALLOCATIONS
    if fields is None or 'traits' in fields:
        selected.append(TRAITS.c.trait.label('_trait'))
        joined = joined.outerjoin(
            TRAITS, TRAITS.c.allocation_id == ALLOCATIONS.c.id)
    if fields is None or 'node_uuid' in fields:
        selected.append(NODES.c.uuid.label('_node_uuid'))
        joined = joined.outerjoin(NODES,
                                  NODES.c.id == ALLOCATIONS.c.node_id)
    return (sa.select(*selected).select_from(joined)
            .where(ALLOCATIONS.c[column] == sa.bindparam('value')))


_NODE_UUIDS = sa.select(NODES.c.id, NODES.c.uuid).where(
    NODES.c.id.in_(sa.bindparam('ids', expanding=True)))
_NODE_UUID = sa.select(NODES.c.uuid).where(NODES.c.id == sa.bindparam('id'))


def _node_uuid(conn, node_id):
    """The UUID of node ``node_id`` (None for None)."""
    if node_id is None:
        return None
    return conn.execute(_NODE_UUID, {'id': node_id}).scalar()


def _guarded_where(kind):
    """WHERE clauses of the row ``:allocation_id`` under guard ``kind``.

    ``equal`` binds ``:guard``; see :func:`_guard_params`.
    """
    where = [ALLOCATIONS.c.id == sa.bindparam('allocation_id')]
    if kind == 'null':
        where.append(_guard_clause(None))
    elif kind == 'equal':
        where.append(_guard_clause(sa.bindparam('guard')))
    return where


def _guard_params(allocation):
    """The guard kind of an update of ``allocation`` and its parameters.

    The kind is ``unguarded``, ``null`` or ``equal``, after what
    ``Allocation._guard()`` says the row must hold.
    """
    guard = allocation._guard()
    if guard is _NO_GUARD:
        kind = 'unguarded'
    else:
        kind = 'null' if guard is None else 'equal'
    params = {'allocation_id': allocation.id}
    if kind == 'equal':
        params['guard'] = guard
    return kind, params


def _activate_statement(kind):
    """UPDATE ... SET state=active of an ``allocating`` allocation."""
    where = _guarded_where(kind) + [ALLOCATIONS.c.state == ALLOCATING]
    return (sa.update(ALLOCATIONS).where(*where)
            .values(node_id=sa.bindparam('new_node_id'), state=ACTIVE,
                    last_error=None, updated_at=sa.bindparam('now')))


_ACTIVATE = {kind: _activate_statement(kind)
             for kind in ('unguarded', 'null', 'equal')}


def _fail_statement(kind):
    """UPDATE ... SET state=error of an ``allocating`` allocation."""
    where = _guarded_where(kind) + [ALLOCATIONS.c.state == ALLOCATING]
    return (sa.update(ALLOCATIONS).where(*where)
            .values(node_id=None, state=ERROR,
                    last_error=sa.bindparam('error'),
                    updated_at=sa.bindparam('now')))


_FAIL = {kind: _fail_statement(kind)
         for kind in ('unguarded', 'null', 'equal')}

# A failed allocation back to ALLOCATING, for the conductor ``:affinity``
# (the retry): compare-and-swap on the state.
_RETRY = (sa.update(ALLOCATIONS)
          .where(ALLOCATIONS.c.id == sa.bindparam('allocation_id'),
                 ALLOCATIONS.c.state.in_(RETRYABLE))
          .values(state=ALLOCATING, node_id=None, last_error=None,
                  conductor_affinity=sa.bindparam('affinity'),
                  updated_at=sa.bindparam('now')))


@functools.lru_cache(maxsize=128)
def _update_statement(columns, kind):
    """UPDATE of ``columns`` (a sorted tuple) and ``updated_at``, built once.

    Bound parameters: ``allocation_id``, ``v_<column>`` for each column
    and ``now``; ``guard`` when ``kind`` is ``equal`` (see _guard_params).
    """
    values = {name: sa.bindparam('v_' + name) for name in columns}
    values['updated_at'] = sa.bindparam('now')
    return sa.update(ALLOCATIONS).where(*_guarded_where(kind)).values(values)


def activate_allocation(conn, allocation, node_id, now):
    """Make an ``allocating`` allocation ``active`` on ``node_id``.

    Guarded by the affinity the object holds (see ``Allocation.save``).

    :returns: whether the row was updated.
    """
    kind, params = _guard_params(allocation)
    params.update(new_node_id=node_id, now=now)
    result = conn.execute(_ACTIVATE[kind], params)
    return result.rowcount == 1


@base.AllocObjectRegistry.register
class Allocation(base.AllocObject):
    """A request for a node; see the module docstring."""

    # Version 1.0: initial version
    # Version 1.1: node_uuid
    VERSION = '1.1'

    fields = {
        'id': fields.IntegerField(),
        'uuid': fields.UUIDField(nullable=True),
        'name': fields.StringField(nullable=True),
        'node_id': fields.IntegerField(nullable=True),
        # Read only: the UUID of the node ``node_id`` names, read with the
        # allocation (API responses show it; no second lookup).
        'node_uuid': fields.UUIDField(nullable=True),
        'state': fields.StringField(),
        'owner': fields.StringField(nullable=True),
        'last_error': fields.StringField(nullable=True),
        'resource_class': fields.StringField(nullable=True),
        'traits': fields.ListOfStringsField(nullable=True),
        'candidate_nodes': fields.ListOfStringsField(nullable=True),
        'extra': fields.FlexibleDictField(nullable=True),
        'conductor_affinity': fields.IntegerField(nullable=True),
        'created_at': fields.DateTimeField(nullable=True),
        'updated_at': fields.DateTimeField(nullable=True),
    }

    # The affinity the row had when this object last read or wrote it: the
    # guard of the next save(). Unknown (_NO_GUARD) on objects built by
    # callers or received over RPC: see _guard().
    _guard_affinity = _NO_GUARD

    def _guard(self):
        """The affinity an update must find, or _NO_GUARD for none."""
        current = self._guard_affinity
        if current is _NO_GUARD:
            if (not self.obj_attr_is_set('conductor_affinity')
                    or 'conductor_affinity' in self.obj_what_changed()):
                return _NO_GUARD
            current = self.conductor_affinity
        return current

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
        if versionutils.convert_version_to_tuple(target_version) < (1, 1):
            primitive.pop('node_uuid', None)

    @classmethod
    def _from_row(cls, context, row, traits=None, node_uuid=None):
        """An allocation from a model instance or a row of ``_COLUMNS``.

        Fields without a column in a row stay unset, and so do
        ``traits`` and ``node_uuid`` when they are None (callers pass
        lists and UUIDs of what they read).
        """
        obj = cls(context)
        # A Core row knows its columns; a model instance has them all.
        mapping = getattr(row, '_mapping', None)
        names = (_COLUMNS if mapping is None
                 else [name for name in _COLUMNS if name in mapping])
        for name in names:
            value = getattr(row, name)
            if name == 'candidate_nodes' and value == []:
                value = None
            setattr(obj, name, value)
        if traits is not None:
            obj.traits = traits
        if node_uuid is not None or 'node_id' in names:
            obj.node_uuid = node_uuid
        obj._guard_affinity = row.conductor_affinity
        obj.obj_reset_changes()
        return obj

    # --- reading ------------------------------------------------------------

    @classmethod
    def get(cls, context, ident):
        """Find an allocation by id (int), UUID or name.

        :raises: AllocationNotFound
        """
        if _is_int_like(ident):
            return cls.get_by_id(context, int(ident))
        if uuidutils.is_uuid_like(ident):
            return cls.get_by_uuid(context, ident)
        return cls.get_by_name(context, ident)

    @classmethod
    def get_by_id(cls, context, allocation_id):
        return cls._get(context, 'id', allocation_id)

    @classmethod
    def get_by_uuid(cls, context, uuid, fields=None):
        """The allocation with ``uuid``; see :meth:`get_by_name`."""
        return cls._get(context, 'uuid', uuid, fields=fields)

    @classmethod
    def get_by_name(cls, context, name, fields=None):
        """The allocation named ``name``.

        :param fields: names of the fields to read (an iterable), or None
            for all of them. ``id``, ``uuid``, ``owner`` and
            ``conductor_affinity`` are always read; the others stay unset.
            For reads that answer a request: an object read in part must
            not be saved.
        :raises: AllocationNotFound
        """
        return cls._get(context, 'name', name, fields=fields)

    @classmethod
    @db_api.reader.connection
    def _get(cls, context, column, value, ident=None, fields=None):
        """The allocation whose ``column`` (id, uuid or name) is ``value``.

        :param ident: how to name it in AllocationNotFound (``value``).
        :param fields: see :meth:`get_by_name`.
        """
        if fields is not None:
            fields = tuple(sorted(set(fields)))
        # One round trip on a Core connection, not an ORM session: this
        # is the read every client polls.
        rows = context.connection.execute(
            _get_statement(column, fields), {'value': value}).all()
        if not rows:
            raise exception.AllocationNotFound(
                allocation=value if ident is None else ident)
        first = rows[0]._mapping
        traits = (sorted(r._trait for r in rows if r._trait is not None)
                  if '_trait' in first else None)
        return cls._from_row(context, rows[0], traits,
                             first.get('_node_uuid'))

    @classmethod
    @db_api.reader
    def list(cls, context, filters=None, limit=None, marker=None,
             sort_key='id', sort_dir='asc'):
        """List allocations.

        :param filters: dict with any of ``state``, ``resource_class``,
            ``node_id``, ``owner``, ``conductor_affinity`` and
            ``conductor_affinity_not_in`` (a list of conductor ids; matches
            also allocations without affinity).
        :param marker: UUID (or object) of the last allocation of the
            previous page.
        :raises: InvalidParameterValue on an unknown filter or sort key
        :raises: AllocationNotFound when the marker does not exist
        """
        filters = dict(filters or {})
        unknown = set(filters) - set(FILTERS)
        if unknown:
            raise exception.InvalidParameterValue(
                err='Unknown allocation filters: %s'
                    % ', '.join(sorted(unknown)))
        if sort_key not in SORT_KEYS:
            raise exception.InvalidParameterValue(
                err='The sort_key value "%s" is invalid. Allowed values '
                    'are: %s' % (sort_key, ', '.join(SORT_KEYS)))
        if sort_dir not in ('asc', 'desc'):
            raise exception.InvalidParameterValue(
                err='Invalid sort direction: %s. Acceptable values are '
                    '"asc" or "desc"' % sort_dir)
        session = context.session
        model = models.NodeAllocation
        query = sa.select(model.__table__)
        for key in ('state', 'resource_class', 'node_id', 'owner',
                    'conductor_affinity'):
            if key in filters:
                query = query.where(getattr(model, key) == filters[key])
        if 'conductor_affinity_not_in' in filters:
            ids = list(filters['conductor_affinity_not_in'])
            column = model.conductor_affinity
            query = query.where(sa.or_(column.is_(None),
                                       column.notin_(ids) if ids
                                       else sa.true()))
        marker_row = None
        if marker is not None:
            marker_uuid = getattr(marker, 'uuid', marker)
            marker_row = session.execute(
                sa.select(model.__table__).where(model.uuid == marker_uuid)
            ).one_or_none()
            if marker_row is None:
                raise exception.AllocationNotFound(allocation=marker_uuid)
        sort_keys = [sort_key] if sort_key == 'id' else [sort_key, 'id']
        query = db_utils.paginate_query(query, model, limit, sort_keys,
                                        marker=marker_row,
                                        sort_dir=sort_dir)
        rows = session.execute(query).all()
        traits = _load_traits(session, [r.id for r in rows])
        node_ids = {r.node_id for r in rows if r.node_id is not None}
        node_uuids = dict(session.execute(
            _NODE_UUIDS, {'ids': list(node_ids)}).all()) if node_ids else {}
        return [cls._from_row(context, r, traits[r.id],
                              node_uuids.get(r.node_id))
                for r in rows]

    def refresh(self, context=None):
        """Reload every field from the database.

        :raises: AllocationNotFound
        """
        self._refresh(context or self._context)

    def _refresh(self, context):
        fresh = self._get(context, 'id', self.id, ident=self.uuid)
        for name in self.fields:
            setattr(self, name, getattr(fresh, name))
        self._guard_affinity = fresh._guard_affinity
        self.obj_reset_changes()

    # --- writing ------------------------------------------------------------

    def _values_for_db(self, names):
        values = {}
        for name in names:
            if name in ('id', 'traits', 'node_uuid', 'created_at',
                        'updated_at'):
                continue
            if self.obj_attr_is_set(name):
                values[name] = base.to_db_value(getattr(self, name))
        return values

    def create(self, context=None, generated_uuid=False):
        """Create the allocation (default state ``allocating``).

        :param generated_uuid: the UUID set was generated for this
            allocation (the API fixes it before it asks a conductor, see
            ``ConductorAPI.create_allocation``), not given by a client.
        :raises: AllocationAlreadyExists, AllocationDuplicateName,
            InstanceAssociated (the UUID is a node's ``instance_uuid``)
        """
        context = context or self._context
        generated = not self.obj_attr_is_set('uuid') or not self.uuid
        if generated:
            self.uuid = uuidutils.generate_uuid()
        if not self.obj_attr_is_set('state'):
            self.state = ALLOCATING
        # A UUID generated for this allocation cannot be any node's
        # instance_uuid yet: that check costs a query.
        self._create(context, check_uuid=not (generated or generated_uuid))

    @db_api.retry_on_deadlock
    @db_api.writer.connection
    def _create(self, context, check_uuid=True):
        conn = context.connection
        node_id = self.node_id if self.obj_attr_is_set('node_id') else None
        if check_uuid:
            check_instance_uuid_free(conn, self.uuid, node_id)
        values = self._values_for_db(_COLUMNS)
        traits = self.traits if self.obj_attr_is_set('traits') else None
        self.id = insert_allocation(conn, values, traits)
        # What the row now holds, without reading it back.
        for name in _COLUMNS:
            if not self.obj_attr_is_set(name):
                setattr(self, name, None)
        self.created_at = values['created_at']
        self.updated_at = None
        if not self.candidate_nodes:
            self.candidate_nodes = None
        self.traits = sorted(set(traits or ()))
        self.node_uuid = _node_uuid(conn, node_id)
        self._guard_affinity = self.conductor_affinity
        self._context = context
        self.obj_reset_changes()

    def save(self, context=None):
        """Write the changed fields.

        The UPDATE only matches while the row still has the
        ``conductor_affinity`` this object read: a conductor that lost the
        allocation to a take-over cannot overwrite it.

        :raises: AllocationNotFound, AllocationDuplicateName,
            AllocationTakenOver (the affinity changed meanwhile)
        """
        context = context or self._context
        changed = self.obj_what_changed()
        if not changed:
            return
        if 'uuid' in changed:
            raise exception.InvalidParameterValue(
                err='Cannot overwrite the UUID of an existing allocation.')
        self._save(context, changed)

    @db_api.retry_on_deadlock
    @db_api.writer.connection
    def _save(self, context, changed):
        conn = context.connection
        values = self._values_for_db(changed)
        now = base.utcnow()
        kind, params = _guard_params(self)
        params.update(('v_' + name, value) for name, value in values.items())
        params['now'] = now
        try:
            result = conn.execute(
                _update_statement(tuple(sorted(values)), kind), params)
        except db_exc.DBDuplicateEntry:
            raise exception.AllocationDuplicateName(name=self.name)
        if result.rowcount != 1:
            row = conn.execute(sa.select(ALLOCATIONS.c.conductor_affinity)
                               .where(ALLOCATIONS.c.id == self.id)).first()
            if row is None:
                raise exception.AllocationNotFound(allocation=self.uuid)
            raise exception.AllocationTakenOver(
                allocation=self.uuid, conductor=row.conductor_affinity)
        if 'node_id' in changed:
            self.node_uuid = _node_uuid(conn, self.node_id)
        if 'traits' in changed:
            conn.execute(sa.delete(TRAITS).where(
                TRAITS.c.allocation_id == self.id))
            if self.traits:
                conn.execute(_INSERT_TRAITS, [
                    {'allocation_id': self.id, 'trait': t, 'created_at': now}
                    for t in sorted(set(self.traits))])
        self.updated_at = now
        if 'conductor_affinity' in changed:
            self._guard_affinity = self.conductor_affinity
        self.obj_reset_changes()

    def fail(self, reason, context=None):
        """Make the allocation ``error`` if it is still ``allocating``.

        Guarded like :meth:`save`, and also by the state: a failure never
        overwrites an allocation that became ``active`` meanwhile (a
        repeated processing that lost to the one that reserved a node).

        :returns: whether the allocation was failed; False when it is no
            longer ``allocating``.
        :raises: AllocationNotFound, AllocationTakenOver
        """
        return self._fail(context or self._context, str(reason))

    @db_api.retry_on_deadlock
    @db_api.writer.connection
    def _fail(self, context, reason):
        conn = context.connection
        kind, params = _guard_params(self)
        now = base.utcnow()
        params.update(error=reason, now=now)
        if conn.execute(_FAIL[kind], params).rowcount == 1:
            self.state = ERROR
            self.node_id = None
            self.node_uuid = None
            self.last_error = reason
            self.updated_at = now
            self.obj_reset_changes(['state', 'node_id', 'node_uuid',
                                    'last_error', 'updated_at'])
            return True
        row = conn.execute(sa.select(ALLOCATIONS.c.conductor_affinity,
                                     ALLOCATIONS.c.state)
                           .where(ALLOCATIONS.c.id == self.id)).first()
        if row is None:
            raise exception.AllocationNotFound(allocation=self.uuid)
        guard = self._guard()
        if guard is not _NO_GUARD and row.conductor_affinity != guard:
            raise exception.AllocationTakenOver(
                allocation=self.uuid, conductor=row.conductor_affinity)
        return False

    def destroy(self, context=None):
        """Delete the allocation and release its node, in one transaction.

        Unconditional (node deletion uses it); the checks of an explicit
        deallocation are in :func:`node_reservation.release_node`.

        :raises: AllocationNotFound
        """
        self._destroy(context or self._context)

    @db_api.retry_on_deadlock
    @db_api.writer
    def _destroy(self, context):
        session = context.session
        session.execute(
            sa.update(NODES).where(NODES.c.allocation_id == self.id)
            .values(instance_uuid=None, allocation_id=None,
                    updated_at=base.utcnow()))
        session.execute(sa.delete(TRAITS).where(
            TRAITS.c.allocation_id == self.id))
        result = session.execute(sa.delete(ALLOCATIONS).where(
            ALLOCATIONS.c.id == self.id))
        if result.rowcount != 1:
            raise exception.AllocationNotFound(allocation=self.uuid)
        self.obj_reset_changes()

    @classmethod
    def retry(cls, context, allocation_id, conductor_id):
        """Move a failed allocation back to ``allocating``.

        One compare-and-swap on the state: of two concurrent retries of
        the same allocation exactly one succeeds. The UUID, name and
        request stay; ``last_error`` and ``node_id`` are cleared and the
        allocation now belongs to ``conductor_id``.

        :returns: the allocation as it now is.
        :raises: AllocationNotRetryable (its state is not ``error``),
            AllocationNotFound
        """
        return cls._retry(context, allocation_id, conductor_id)

    @classmethod
    @db_api.retry_on_deadlock
    @db_api.writer.connection
    def _retry(cls, context, allocation_id, conductor_id):
        conn = context.connection
        result = conn.execute(_RETRY, {'allocation_id': allocation_id,
                                       'affinity': conductor_id,
                                       'now': base.utcnow()})
        if result.rowcount != 1:
            row = conn.execute(
                sa.select(ALLOCATIONS.c.uuid, ALLOCATIONS.c.state)
                .where(ALLOCATIONS.c.id == allocation_id)).first()
            if row is None:
                raise exception.AllocationNotFound(allocation=allocation_id)
            raise exception.AllocationNotRetryable(allocation=row.uuid,
                                                   state=row.state)
        return cls._get(context, 'id', allocation_id)

    @staticmethod
    @db_api.retry_on_deadlock
    @db_api.writer
    def take_over(context, allocation_id, old_conductor_id,
                  new_conductor_id):
        """Move an allocation to another conductor (compare-and-swap).

        :returns: True when this call moved it; False when the allocation
            no longer belongs to ``old_conductor_id`` (another conductor
            was faster) or no longer exists.
        """
        result = context.session.execute(
            sa.update(ALLOCATIONS)
            .where(ALLOCATIONS.c.id == allocation_id,
                   _guard_clause(old_conductor_id))
            .values(conductor_affinity=new_conductor_id,
                    updated_at=base.utcnow()))
        return result.rowcount == 1
