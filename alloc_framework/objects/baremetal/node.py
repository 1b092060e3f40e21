"""The Node versioned object and the SQL of the ``nodes`` table.

Node locks (``reservation``) are taken and released here with conditional
UPDATEs; ``conductor.task_manager`` is their only caller. Traits live in
``objects/trait.py``; a node's ``traits`` field is loaded with it. A
node's provision state moves only through
:meth:`Node.move_provision_state`, which follows the transition table of
:mod:`states`.
"""

from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import utils as db_utils
from oslo_log import log
from oslo_utils import uuidutils
from oslo_utils import versionutils
import sqlalchemy as sa

from alloc_framework.common import exception
from alloc_framework.common import states
from alloc_framework.common import utils
from alloc_framework.db import api as db_api
from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects.baremetal import base
from alloc_framework.objects.baremetal import fields

LOG = log.getLogger(__name__)

# Fields that are not columns of ``nodes``.
_NON_COLUMN_FIELDS = ('traits',)
# Columns a caller may sort a listing by.
SORT_KEYS = ('id', 'uuid', 'name', 'created_at', 'updated_at',
             'provision_state', 'provision_updated_at', 'power_state',
             'driver', 'resource_class', 'maintenance', 'conductor_group',
             'owner', 'lessee', 'instance_uuid')

_FILTERS = ('provision_state', 'provision_state_in',
            'provision_state_not_in', 'maintenance',
            'resource_class', 'associated', 'instance_uuid', 'driver',
            'conductor_group', 'owner', 'lessee', 'project', 'fault',
            'reserved', 'reservation', 'uuid_in', 'allocation_id', 'traits',
            'name', 'power_state', 'retired', 'id_in',
            'provisioned_before', 'shard_in', 'sharded', 'parent_node',
            'include_children', 'instance_name')

# Rows are read and written as Core statements on the table (see
# alloc_framework.db.api): a row is a named tuple, not an ORM entity.
_NODES = models.Node.__table__


def _duplicate_to_domain(exc, values):
    """Translate a unique violation on ``nodes`` into a domain error."""
    # oslo.db parses the violated columns from the error, whatever the
    # backend; the statement text would name every column.
    columns = set(exc.columns or ())
    if 'instance_uuid' in columns:
        return exception.InstanceAssociated(
            instance_uuid=values.get('instance_uuid'),
            node=values.get('uuid') or values.get('id'))
    if 'name' in columns:
        return exception.DuplicateName(name=values.get('name'))
    return exception.NodeAlreadyExists(uuid=values.get('uuid'))


# --- SQL ---------------------------------------------------------------------
#
# Writers that can meet concurrent allocations are retried on deadlock:
# MariaDB may pick one of them as the victim, and the whole short
# transaction can simply run again.

def _traits_by_node(context, node_ids, connection=None):
    if not node_ids:
        return {}
    rows = (connection or context.session).execute(
        sa.select(models.NodeTrait.node_id, models.NodeTrait.trait)
        .where(models.NodeTrait.node_id.in_(node_ids))
        .order_by(models.NodeTrait.trait)).all()
    result = {node_id: [] for node_id in node_ids}
    for node_id, trait in rows:
        result[node_id].append(trait)
    return result


@db_api.reader
def _get_node_row(context, **kw):
    column, value = next(iter(kw.items()))
    row = context.session.execute(
        sa.select(_NODES).where(getattr(models.Node, column) == value)
    ).one_or_none()
    if row is None:
        return None, []
    return row, _traits_by_node(context, [row.id])[row.id]


def _apply_filters(query, filters):
    unknown = set(filters) - set(_FILTERS)
    if unknown:
        raise exception.InvalidParameterValue(
            err='Unknown node filter(s): %s' % ', '.join(sorted(unknown)))
    N = models.Node
    for key, value in filters.items():
        if key == 'provision_state_in':
            query = query.where(N.provision_state.in_(value))
        elif key == 'provision_state_not_in':
            query = query.where(N.provision_state.not_in(value))
        elif key == 'uuid_in':
            query = query.where(N.uuid.in_(value))
        elif key == 'id_in':
            query = query.where(N.id.in_(value))
        elif key == 'associated':
            query = query.where(N.instance_uuid.isnot(None) if value
                                else N.instance_uuid.is_(None))
        elif key == 'reserved':
            query = query.where(N.reservation.isnot(None) if value
                                else N.reservation.is_(None))
        elif key == 'project':
            query = query.where(sa.or_(N.owner == value,
                                       N.lessee == value))
        elif key == 'conductor_group':
            query = query.where(
                sa.func.lower(N.conductor_group) == (value or '').lower())
        elif key == 'traits':
            traits = sorted(set(value))
            if traits:
                # All of the traits: the node has as many matching rows
                # as there are requested traits.
                sub = (sa.select(models.NodeTrait.node_id)
                       .where(models.NodeTrait.trait.in_(traits))
                       .group_by(models.NodeTrait.node_id)
                       .having(sa.func.count(models.NodeTrait.trait)
                               == len(traits)))
                query = query.where(N.id.in_(sub))
        elif key == 'provisioned_before':
            query = query.where(N.provision_updated_at < value)
        elif key == 'retired':
            query = query.where(sa.func.coalesce(N.retired, False)
                                == bool(value))
        elif key == 'shard_in':
            query = query.where(N.shard.in_(list(value)))
        elif key == 'sharded':
            query = query.where(N.shard.isnot(None) if value
                                else N.shard.is_(None))
        elif key == 'include_children':
            # Child nodes are parts of other nodes: listings leave them
            # out unless asked for.
            if not value:
                query = query.where(N.parent_node.is_(None))
        else:
            query = query.where(getattr(N, key) == value)
    return query


def owned_clause(context, owned, dialect=None):
    """The nodes ``owned`` (``{group: MD5 ranges}``) selects, in SQL.

    A node is selected when its group is one of ``owned`` and the MD5 of
    its UUID falls in one of the group's ranges (see
    :func:`alloc_framework.conductor.hash_ring.owned_ranges`): the
    periodics of a conductor read only its own nodes this way.

    :param dialect: the name of the database's dialect; by default,
        that of ``context.session``.
    """
    N = models.Node
    digest = sa.func.md5(N.uuid)
    if dialect is None:
        dialect = context.session.get_bind().dialect.name
    if dialect == 'postgresql':
        # Compare hexadecimal digits by code point, whatever the locale.
        digest = digest.collate('C')
    by_group = []
    for group, ranges in sorted(owned.items()):
        matches = []
        for low, high in ranges:
            bounds = [c for c in (None if low is None else digest >= low,
                                  None if high is None else digest < high)
                      if c is not None]
            matches.append(sa.and_(*bounds) if bounds else sa.true())
        if matches:
            by_group.append(sa.and_(
                sa.func.coalesce(N.conductor_group, '') == group,
                sa.or_(*matches)))
    return sa.or_(*by_group) if by_group else sa.false()


@db_api.reader
def _owned_node_ids(context, owned, filters):
    query = _apply_filters(sa.select(_NODES.c.id), filters or {})
    query = query.where(owned_clause(context, owned)).order_by(_NODES.c.id)
    return [row.id for row in context.session.execute(query)]


@db_api.reader
def _list_node_rows(context, filters, limit, marker, sort_key, sort_dir):
    query = _apply_filters(sa.select(_NODES), filters or {})
    marker_row = None
    if marker is not None:
        marker_row = context.session.execute(
            sa.select(_NODES).where(models.Node.uuid == marker)
        ).one_or_none()
        if marker_row is None:
            raise exception.InvalidParameterValue(
                err='Marker %s could not be found.' % marker)
    sort_keys = [sort_key] if sort_key == 'id' else [sort_key, 'id']
    query = db_utils.paginate_query(query, models.Node, limit, sort_keys,
                                    marker=marker_row, sort_dir=sort_dir)
    rows = context.session.execute(query).all()
    traits = _traits_by_node(context, [r.id for r in rows])
    return [(row, traits[row.id]) for row in rows]


@db_api.writer
def _create_node(context, values, traits):
    try:
        node_id = context.session.execute(
            sa.insert(_NODES).values(**values)).inserted_primary_key[0]
    except db_exc.DBDuplicateEntry as exc:
        raise _duplicate_to_domain(exc, values)
    if traits:
        context.session.execute(
            sa.insert(models.NodeTrait.__table__),
            [{'node_id': node_id, 'trait': trait} for trait in traits])
    row = context.session.execute(
        sa.select(_NODES).where(_NODES.c.id == node_id)).one()
    return row, sorted(traits)


def _delete_allocation(context, allocation_id):
    context.session.execute(
        sa.delete(models.NodeAllocationTrait)
        .where(models.NodeAllocationTrait.allocation_id == allocation_id))
    context.session.execute(
        sa.delete(models.NodeAllocation)
        .where(models.NodeAllocation.id == allocation_id))


@db_api.retry_on_deadlock
@db_api.writer
def _update_node(context, node_id, values, delete_allocation_id=None):
    values = dict(values, updated_at=base.utcnow())
    if delete_allocation_id is not None:
        values['allocation_id'] = None
        _delete_allocation(context, delete_allocation_id)
    try:
        count = context.session.execute(
            sa.update(models.Node).where(models.Node.id == node_id)
            .values(**values)).rowcount
    except db_exc.DBDuplicateEntry as exc:
        raise _duplicate_to_domain(exc, dict(values, id=node_id))
    if not count:
        raise exception.NodeNotFound(node=node_id)
    row = context.session.execute(
        sa.select(_NODES).where(_NODES.c.id == node_id)).one()
    return row, _traits_by_node(context, [node_id])[node_id]


@db_api.retry_on_deadlock
@db_api.writer
def _destroy_node(context, node_id):
    session = context.session
    session.execute(sa.delete(models.NodeTrait)
                    .where(models.NodeTrait.node_id == node_id))
    session.execute(sa.delete(models.NodeHistory)
                    .where(models.NodeHistory.node_id == node_id))
    session.execute(sa.delete(models.FirmwareComponent)
                    .where(models.FirmwareComponent.node_id == node_id))
    # The node's allocation has nothing left to hold: it goes with the
    # node, in the same transaction.
    allocation_id = session.execute(
        sa.select(models.Node.allocation_id)
        .where(models.Node.id == node_id)).scalar_one_or_none()
    if allocation_id is not None:
        _delete_allocation(context, allocation_id)
    session.execute(sa.update(models.NodeAllocation)
                    .where(models.NodeAllocation.node_id == node_id)
                    .values(node_id=None))
    count = session.execute(sa.delete(models.Node)
                            .where(models.Node.id == node_id)).rowcount
    if not count:
        raise exception.NodeNotFound(node=node_id)


@db_api.retry_on_deadlock
@db_api.writer
def _reserve_node(context, node_id, host):
    count = context.session.execute(
        sa.update(models.Node)
        .where(models.Node.id == node_id,
               models.Node.reservation.is_(None))
        .values(reservation=host)).rowcount
    if count:
        return True, None
    holder = context.session.execute(
        sa.select(models.Node.reservation).where(models.Node.id == node_id)
    ).first()
    if holder is None:
        raise exception.NodeNotFound(node=node_id)
    return False, holder[0]


@db_api.retry_on_deadlock
@db_api.writer
def _release_node(context, node_id, host):
    count = context.session.execute(
        sa.update(models.Node)
        .where(models.Node.id == node_id,
               models.Node.reservation == host)
        .values(reservation=None)).rowcount
    if count:
        return
    exists = context.session.execute(
        sa.select(models.Node.id).where(models.Node.id == node_id)).first()
    if exists is None:
        raise exception.NodeNotFound(node=node_id)
    raise exception.NodeNotLocked(node=node_id, host=host)


@db_api.retry_on_deadlock
@db_api.writer
def _clear_reservations(context, host):
    return context.session.execute(
        sa.update(models.Node).where(models.Node.reservation == host)
        .values(reservation=None)).rowcount


# --- object ------------------------------------------------------------------

def _identities_statement(by_uuid, by_name):
    N = models.Node
    conds = []
    if by_uuid:
        conds.append(N.uuid.in_(sa.bindparam('uuids', expanding=True)))
    if by_name:
        conds.append(N.name.in_(sa.bindparam('names', expanding=True)))
    return (sa.select(N.id, N.uuid, N.name, N.owner, N.lessee)
            .where(sa.or_(*conds)))


# Built once: see Node.identities.
_IDENTITIES = {(u, n): _identities_statement(u, n)
               for u in (True, False) for n in (True, False) if u or n}


@base.AllocObjectRegistry.register
class Node(base.AllocObject):
    """A bare metal node.

    ``allocation_id`` is the internal id of the node's allocation; the API
    shows it as ``allocation_uuid``.
    """

    # Version 1.0: initial version
    # Version 1.1: boot_interface, bios_interface, firmware_interface
    # Version 1.2: shard, parent_node
    # Version 1.3: service_step
    # Version 1.4: disable_power_off, instance_name, health
    VERSION = '1.4'

    fields = {
        'id': fields.IntegerField(),
        'uuid': fields.UUIDField(nullable=True),
        'name': fields.StringField(nullable=True),
        'description': fields.StringField(nullable=True),
        'driver': fields.StringField(nullable=True),
        'driver_info': fields.FlexibleDictField(nullable=True),
        'driver_internal_info': fields.FlexibleDictField(nullable=True),
        'properties': fields.FlexibleDictField(nullable=True),
        'extra': fields.FlexibleDictField(nullable=True),
        'instance_info': fields.FlexibleDictField(nullable=True),
        'instance_uuid': fields.UUIDField(nullable=True),
        'resource_class': fields.StringField(nullable=True),
        'power_state': fields.StringField(nullable=True),
        'target_power_state': fields.StringField(nullable=True),
        'provision_state': fields.StringField(nullable=True),
        'target_provision_state': fields.StringField(nullable=True),
        'provision_updated_at': fields.DateTimeField(nullable=True),
        'maintenance': fields.BooleanField(),
        'maintenance_reason': fields.StringField(nullable=True),
        'fault': fields.StringField(nullable=True),
        'last_error': fields.StringField(nullable=True),
        'clean_step': fields.FlexibleDictField(nullable=True),
        'deploy_step': fields.FlexibleDictField(nullable=True),
        'service_step': fields.FlexibleDictField(nullable=True),
        'reservation': fields.StringField(nullable=True),
        'conductor_affinity': fields.IntegerField(nullable=True),
        'conductor_group': fields.StringField(nullable=True),
        'allocation_id': fields.IntegerField(nullable=True),
        'owner': fields.StringField(nullable=True),
        'lessee': fields.StringField(nullable=True),
        'power_interface': fields.StringField(nullable=True),
        'deploy_interface': fields.StringField(nullable=True),
        'management_interface': fields.StringField(nullable=True),
        'boot_interface': fields.StringField(nullable=True),
        'bios_interface': fields.StringField(nullable=True),
        'firmware_interface': fields.StringField(nullable=True),
        'automated_clean': fields.BooleanField(nullable=True),
        'protected': fields.BooleanField(),
        'protected_reason': fields.StringField(nullable=True),
        'retired': fields.BooleanField(nullable=True),
        'retired_reason': fields.StringField(nullable=True),
        'shard': fields.StringField(nullable=True),
        'parent_node': fields.UUIDField(nullable=True),
        'disable_power_off': fields.BooleanField(default=False),
        'instance_name': fields.StringField(nullable=True),
        'health': fields.StringField(nullable=True),
        'traits': fields.ListOfStringsField(nullable=True),
        'created_at': fields.DateTimeField(nullable=True),
        'updated_at': fields.DateTimeField(nullable=True),
    }

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
        target = versionutils.convert_version_to_tuple(target_version)
        if target < (1, 4):
            for field in ('disable_power_off', 'instance_name', 'health'):
                primitive.pop(field, None)
        if target < (1, 3):
            primitive.pop('service_step', None)
        if target < (1, 2):
            for field in ('shard', 'parent_node'):
                primitive.pop(field, None)
        if target < (1, 1):
            for field in ('boot_interface', 'bios_interface',
                          'firmware_interface'):
                primitive.pop(field, None)

    @classmethod
    def _from_db(cls, context, row, traits):
        node = cls._from_db_row(context, cls(), row, skip=_NON_COLUMN_FIELDS)
        node.traits = list(traits)
        node.obj_reset_changes(['traits'])
        return node

    @classmethod
    def from_rows(cls, context, rows, connection):
        """Nodes from rows of the ``nodes`` table that a caller's
        transaction read, with their traits read in one more statement of
        that transaction (on its ``connection``).
        """
        traits = _traits_by_node(context, [row.id for row in rows],
                                 connection)
        return [cls._from_db(context, row, traits[row.id]) for row in rows]

    # --- lookups ---

    @classmethod
    def _get_by(cls, context, ident, **kw):
        row, traits = _get_node_row(context, **kw)
        if row is None:
            raise exception.NodeNotFound(node=ident)
        return cls._from_db(context, row, traits)

    @classmethod
    def get_by_id(cls, context, node_id):
        """:raises: NodeNotFound"""
        return cls._get_by(context, node_id, id=node_id)

    @classmethod
    def get_by_uuid(cls, context, uuid):
        """:raises: NodeNotFound"""
        return cls._get_by(context, uuid, uuid=uuid)

    @classmethod
    def get_by_name(cls, context, name):
        """:raises: NodeNotFound"""
        return cls._get_by(context, name, name=name)

    @classmethod
    def get_by_instance_uuid(cls, context, instance_uuid):
        """:raises: InstanceNotFound"""
        row, traits = _get_node_row(context, instance_uuid=instance_uuid)
        if row is None:
            raise exception.InstanceNotFound(instance=instance_uuid)
        return cls._from_db(context, row, traits)

    @staticmethod
    @db_api.reader.connection
    def identities(context, uuids=(), names=()):
        """Identity and ownership of many nodes in one query.

        For request bodies that name many nodes (an allocation's
        ``candidate_nodes``): only what resolving and authorizing needs,
        not whole nodes.

        :returns: a dict from each UUID (lower case) and name found to a
            row with ``id``, ``uuid``, ``name``, ``owner`` and ``lessee``.
        """
        uuids, names = sorted(set(uuids)), sorted(set(names))
        if not uuids and not names:
            return {}
        params = {}
        if uuids:
            params['uuids'] = uuids
        if names:
            params['names'] = names
        rows = context.connection.execute(
            _IDENTITIES[bool(uuids), bool(names)], params).all()
        found = {}
        for row in rows:
            found[row.uuid.lower()] = row
            if row.name is not None:
                found[row.name] = row
        return found

    @classmethod
    def get(cls, context, ident):
        """Find a node by id (int), UUID or name.

        :raises: InvalidIdentity when ``ident`` cannot be any of them.
        :raises: NodeNotFound
        """
        if isinstance(ident, int):
            return cls.get_by_id(context, ident)
        if uuidutils.is_uuid_like(ident):
            return cls.get_by_uuid(context, ident)
        if utils.is_valid_logical_name(ident):
            try:
                return cls.get_by_name(context, ident)
            except exception.NodeNotFound:
                if not utils.is_int_like(ident):
                    raise
            return cls.get_by_id(context, int(ident))
        raise exception.InvalidIdentity(identity=ident)

    @staticmethod
    @db_api.reader.connection
    def shard_counts(context):
        """How many nodes each shard has, the largest shards first.

        Nodes without a shard are counted under the name ``"None"``, as
        upstream's ``GET /v1/shards`` shows them.

        :returns: a list of ``{"name": shard, "count": n}``.
        """
        N = models.Node
        count = sa.func.count(N.id)
        rows = context.connection.execute(
            sa.select(N.shard, count).group_by(N.shard)
            .order_by(count.desc(), N.shard)).all()
        return [{'name': str(shard), 'count': n} for shard, n in rows]

    @classmethod
    def list(cls, context, filters=None, limit=None, marker=None,
             sort_key='id', sort_dir='asc'):
        """List nodes.

        :param filters: dict of filters (see ``_FILTERS``); ``traits``
            matches nodes that have all the given traits, ``shard_in``
            nodes in any of the given shards, ``sharded`` nodes with (or
            without) a shard, ``include_children`` False leaves child
            nodes (with a ``parent_node``) out.
        :param marker: UUID of the last node of the previous page.
        :raises: InvalidParameterValue for an unknown filter, sort key or
            marker.
        """
        if sort_key not in SORT_KEYS:
            raise exception.InvalidParameterValue(
                err='The sort_key value "%s" is an invalid field for '
                    'sorting' % sort_key)
        if sort_dir not in ('asc', 'desc'):
            raise exception.InvalidParameterValue(
                err='Invalid sort direction: %s. Acceptable values are '
                    "'asc' or 'desc'" % sort_dir)
        rows = _list_node_rows(context, filters, limit, marker, sort_key,
                               sort_dir)
        return [cls._from_db(context, row, traits) for row, traits in rows]

    @classmethod
    def owned_ids(cls, context, owned, filters=None):
        """Ids of the nodes a conductor owns, in id order.

        :param owned: ``{conductor group: MD5 ranges}`` from
            :meth:`HashRingManager.hash_ranges`.
        :param filters: as :meth:`list`.
        :raises: InvalidParameterValue for an unknown filter.
        """
        return _owned_node_ids(context, owned, filters)

    # --- changes ---

    def create(self, context=None):
        """Insert the node with its traits.

        Unset fields get upstream's defaults (``enroll``, not in
        maintenance, no conductor group).

        :raises: NodeAlreadyExists, DuplicateName, InstanceAssociated
        """
        context = context or self._context
        values = self._changes_for_db()
        traits = values.pop('traits', None) or []
        values.pop('id', None)
        values.setdefault('uuid', uuidutils.generate_uuid())
        values.setdefault('provision_state', states.ENROLL)
        values.setdefault('maintenance', False)
        values.setdefault('protected', False)
        values.setdefault('retired', False)
        values.setdefault('disable_power_off', False)
        values['conductor_group'] = (values.get('conductor_group')
                                     or '').lower()
        for key in ('driver_info', 'driver_internal_info', 'properties',
                    'extra', 'instance_info'):
            values.setdefault(key, {})
        if not values.get('driver'):
            raise exception.MissingParameterValue(
                err='Node driver is required.')
        row, traits = _create_node(context, values, traits)
        self._from_db_row(context, self, row, skip=_NON_COLUMN_FIELDS)
        self.traits = traits
        self.obj_reset_changes()

    def move_provision_state(self, event, revert_to=None):
        """Move the node by ``event`` of ``states.MACHINE`` (not saved).

        Every change of ``provision_state`` and ``target_provision_state``
        goes through here, so that each one is a transition of the table.

        :param event: a machine event (``deploy``, ``done``, ``fail`` ...).
        :param revert_to: ``(provision_state, target_provision_state)`` the
            node had before a move by ``event`` that nothing acted upon
            (no worker took the request): the node returns there, once
            the table confirms that ``event`` leads from there to where
            the node is now.
        :raises: InvalidStateRequested when the table has no such move.
        """
        if revert_to is None:
            self.provision_state, self.target_provision_state = (
                states.MACHINE.process_event(
                    self.provision_state, event, self.target_provision_state,
                    node=self.uuid))
            return
        state, target = revert_to
        moved = states.MACHINE.process_event(state, event, target,
                                             node=self.uuid)
        if moved != (self.provision_state, self.target_provision_state):
            raise exception.InvalidStateRequested(
                action='revert %s' % event, node=self.uuid,
                state=self.provision_state)
        self.provision_state, self.target_provision_state = state, target

    def save(self, context=None, delete_allocation=False):
        """Write the changed fields (not ``traits``: see objects.trait).

        :param delete_allocation: also delete the node's allocation and
            clear ``allocation_id``, in the same transaction (the node's
            instance is being released).
        :raises: NodeNotFound, DuplicateName, InstanceAssociated
        """
        context = context or self._context
        values = self._changes_for_db()
        delete_id = None
        if delete_allocation and self.allocation_id is not None:
            delete_id = self.allocation_id
            self.allocation_id = None
        values.pop('traits', None)
        values.pop('id', None)
        if 'conductor_group' in values:
            values['conductor_group'] = (values['conductor_group']
                                         or '').lower()
        if 'provision_state' in values:
            values['provision_updated_at'] = base.utcnow()
        if not values and delete_id is None:
            return
        row, traits = _update_node(context, self.id, values,
                                   delete_allocation_id=delete_id)
        self._from_db_row(context, self, row, skip=_NON_COLUMN_FIELDS)
        self.traits = traits
        self.obj_reset_changes()

    def destroy(self, context=None):
        """Delete the node, its traits and its history.

        :raises: NodeNotFound
        """
        _destroy_node(context or self._context, self.id)
        self.obj_reset_changes()

    def refresh(self, context=None):
        """Reload every field from the database.

        :raises: NodeNotFound
        """
        context = context or self._context
        current = self.get_by_id(context, self.id)
        for field in self.fields:
            setattr(self, field, getattr(current, field))
        self.obj_reset_changes()

    # --- locks (used by conductor.task_manager only) ---

    @staticmethod
    def reserve(context, node_id, host):
        """Try to take the exclusive lock of a node for ``host``.

        :returns: ``(True, None)`` or ``(False, current holder)``.
        :raises: NodeNotFound
        """
        return _reserve_node(context, node_id, host)

    @staticmethod
    def release(context, node_id, host):
        """Release the lock ``host`` holds on a node.

        :raises: NodeNotFound, NodeNotLocked
        """
        _release_node(context, node_id, host)

    @staticmethod
    def clear_reservations(context, host):
        """Release every lock held by ``host`` (at conductor start).

        :returns: how many locks were released.
        """
        return _clear_reservations(context, host)
