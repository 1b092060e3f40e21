"""Reserving and releasing nodes for allocations (nodes + allocations SQL).

Each public function is one transaction that touches a node and an
allocation together, so that a node is never reserved for an allocation
that is not ``active`` (or the other way round).

Picking a node costs the same whatever the size of the pool: instead of
loading every candidate, :func:`reserve_node` starts at a random node id
and takes the first free node at or after it (wrapping around), which
``nodes_alloc_idx`` (provision_state, resource_class, instance_uuid, id)
answers directly. On PostgreSQL and MariaDB/MySQL the row is read with
``FOR UPDATE SKIP LOCKED``: concurrent allocations skip each other's
nodes instead of queueing on them. SQLite serializes writers (the engine
begins every transaction with ``BEGIN IMMEDIATE``), so it needs no row
locks. The UPDATE that reserves the node repeats every condition anyway;
its row count decides.

Two rules live here, once, for every layer: when a node is free
(:data:`FREE_NODE`, as SQL for the reservation and in Python for a
backend that mirrors nodes elsewhere) and when an allocation may leave its
node (:func:`verify_node_for_deallocation`, for the API, this module and
the conductor).
"""

import functools
import random
import time
import weakref

from oslo_db import exception as db_exc
from oslo_utils import uuidutils
import sqlalchemy as sa

from alloc_framework.common import exception
from alloc_framework.common import states
from alloc_framework.db import api as db_api
from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects.baremetal import allocation as alloc_obj
from alloc_framework.objects.baremetal import base

NODES = models.Node.__table__
NODE_TRAITS = models.NodeTrait.__table__
ALLOCATIONS = alloc_obj.ALLOCATIONS

# Seconds a node id range stays cached (see _id_range); engines are weak
# keys so that a disposed engine (tests) takes its range with it.
_ID_RANGE_TTL = 5.0
_ID_RANGES = weakref.WeakKeyDictionary()

# Start of the explanation when free nodes exist but all were busy: worth
# another try (see DatabaseBackend.allocate).
BUSY_ERROR = 'could not reserve any suitable node'

# How many times a picked node may turn out to be taken (only possible when
# the database has no row locks) before the allocation gives up this round.
_MAX_PICKS = 5

_ID_RANGE = sa.select(sa.func.min(NODES.c.id), sa.func.max(NODES.c.id))


def _field(obj, name):
    """``obj.name``, or None when the field was never set."""
    return getattr(obj, name) if obj.obj_attr_is_set(name) else None


def _locking(conn):
    return conn.dialect.name != 'sqlite'


# --- the rules: when a node is free, when it may lose its allocation --------

NOT_NULL = object()
"""In :data:`FREE_NODE`: any value but NULL (None)."""

FREE_NODE = (
    ('provision_state', states.AVAILABLE),
    ('instance_uuid', None),
    ('maintenance', False),
    # Very old API versions could create nodes directly in "available"
    # without ever reading their power state.
    ('power_state', NOT_NULL),
)
"""When a node is free to serve an allocation: ``(column, wanted)`` pairs,
all of which must hold. ``wanted`` is the value the column must equal,
None for NULL, or :data:`NOT_NULL`.

The one definition of the rule: :func:`free_node_conditions` makes the
SQL of it and :func:`node_is_free` evaluates it in Python, with the same
meaning. What an allocation asks for on top (resource class, owner,
candidate nodes, traits) and the node lock are not part of it."""


def free_node_conditions(table=NODES):
    """:data:`FREE_NODE` as SQL conditions on the columns of ``table``.

    :returns: a list of SQLAlchemy conditions, all of which must hold.
    """
    conds = []
    for name, wanted in FREE_NODE:
        column = table.c[name]
        if wanted is None:
            conds.append(column.is_(None))
        elif wanted is NOT_NULL:
            conds.append(column.isnot(None))
        elif isinstance(wanted, bool):
            conds.append(column == (sa.true() if wanted else sa.false()))
        else:
            conds.append(column == wanted)
    return conds


def node_is_free(node):
    """Whether :data:`FREE_NODE` holds for ``node``.

    Evaluated as the database evaluates :func:`free_node_conditions`: a
    NULL equals nothing.

    :param node: a ``Node`` object (every field of the rule loaded) or a
        row of the nodes table.
    """
    for name, wanted in FREE_NODE:
        value = getattr(node, name)
        if wanted is None:
            holds = value is None
        elif wanted is NOT_NULL:
            holds = value is not None
        else:
            holds = value is not None and value == wanted
        if not holds:
            return False
    return True


def verify_node_for_deallocation(node, allocation):
    """Refuse to take an allocation off ``node`` while its state forbids it.

    The one rule for every way an allocation leaves its node (deleting
    the allocation, clearing the node's ``instance_uuid``): a node in
    maintenance always lets it go; otherwise it is refused while the node
    is ``active`` or in a state outside ``states.UPDATE_ALLOWED_STATES``
    (a flow is running or waiting on it).

    It decides when the node cannot change meanwhile: under the node lock
    (a conductor task), or with the node's row locked and no task holding
    the node (:func:`release_node`). A caller without the lock (the API)
    may ask it early on a node it just read, to answer sooner; the
    decision that counts is still taken under the lock.

    :param node: a ``Node`` object or a row of the nodes table.
    :param allocation: what names the allocation in the error (its UUID).
    :raises: NodeIsAllocated
    """
    if node.maintenance:
        return
    if (node.provision_state == states.ACTIVE
            or node.provision_state not in states.UPDATE_ALLOWED_STATES):
        raise exception.NodeIsAllocated(node=node.uuid,
                                        allocation=allocation)


class _Filter:
    """The free-node filter of one allocation: its shape and its values.

    The statements built from a filter use bound parameters only, so one
    statement serves every allocation of the same shape (owner or not,
    candidate nodes or not, how many traits): building a SQLAlchemy
    statement, and computing its cache key, costs more CPU than running
    it. See :func:`_statement`.
    """

    def __init__(self, allocation, with_traits=True, with_unlocked=True,
                 among=None):
        self.params = {'f_rc': _field(allocation, 'resource_class')}
        self.empty = False
        owner = _field(allocation, 'owner')
        if owner:
            self.params['f_owner'] = owner
        candidates = _field(allocation, 'candidate_nodes')
        if among is not None:
            # Narrowed further (a backend's own candidates); the
            # allocation's candidate nodes still bound the choice.
            candidates = [u for u in among
                          if not candidates or u in candidates]
            self.empty = not candidates
            candidates = candidates or ['']
        if candidates:
            self.params['f_candidates'] = list(candidates)
        traits = (sorted(set(_field(allocation, 'traits') or ()))
                  if with_traits else ())
        for index, trait in enumerate(traits):
            self.params['f_trait_%d' % index] = trait
        self.shape = (bool(owner), bool(candidates), len(traits),
                      with_unlocked)


def _free_conditions(shape):
    """WHERE conditions of a node that can serve an allocation now.

    :data:`FREE_NODE` and the allocation's own filters. Bound parameters:
    ``f_rc``, ``f_owner``, ``f_candidates`` and ``f_trait_<i>`` (see
    :class:`_Filter`; an UPDATE may not bind names of columns).
    """
    owner, candidates, traits, unlocked = shape
    conds = free_node_conditions()
    conds.append(NODES.c.resource_class == sa.bindparam('f_rc'))
    if unlocked:
        conds.append(NODES.c.reservation.is_(None))
    if owner:
        conds.append(sa.or_(NODES.c.owner == sa.bindparam('f_owner'),
                            NODES.c.lessee == sa.bindparam('f_owner')))
    if candidates:
        conds.append(NODES.c.uuid.in_(
            sa.bindparam('f_candidates', expanding=True)))
    for index in range(traits):
        conds.append(sa.exists().where(
            NODE_TRAITS.c.node_id == NODES.c.id,
            NODE_TRAITS.c.trait == sa.bindparam('f_trait_%d' % index)))
    return conds


@functools.lru_cache(maxsize=512)
def _statement(kind, shape, *extra):
    """The statement ``kind`` for a filter ``shape``, built once.

    Kinds and their extra key parts and bound parameters (besides the
    filter's, see :func:`_free_conditions`):

    - ``pick``: (locking, skip_locked, name, start, tried): the free node
      with the lowest id, locked when ``locking``; ``name`` adds
      ``name = :f_name``, ``start`` (``>=`` or ``<``) ``id <op> :start``,
      ``tried`` ``id NOT IN :tried``.
    - ``exists``: (): whether any node matches.
    - ``claim``: (): reserve the node ``:node_id`` if it is still free:
      ``:new_instance_uuid``, ``:new_allocation_id``,
      ``:new_instance_info``, ``:now``.
    """
    conds = _free_conditions(shape)
    if kind == 'pick':
        locking, skip_locked, name, start, tried = extra
        if name:
            conds.append(NODES.c.name == sa.bindparam('f_name'))
        if start == '>=':
            conds.append(NODES.c.id >= sa.bindparam('start'))
        elif start == '<':
            conds.append(NODES.c.id < sa.bindparam('start'))
        if tried:
            conds.append(NODES.c.id.notin_(
                sa.bindparam('tried', expanding=True)))
        query = (sa.select(NODES.c.id, NODES.c.uuid, NODES.c.instance_info)
                 .where(*conds).order_by(NODES.c.id).limit(1))
        if locking:
            query = query.with_for_update(skip_locked=skip_locked)
        return query
    if kind == 'exists':
        return sa.select(NODES.c.id).where(*conds).limit(1)
    if kind == 'claim':
        return (sa.update(NODES)
                .where(NODES.c.id == sa.bindparam('node_id'), *conds)
                .values(instance_uuid=sa.bindparam('new_instance_uuid'),
                        allocation_id=sa.bindparam('new_allocation_id'),
                        instance_info=sa.bindparam(
                            'new_instance_info',
                            type_=NODES.c.instance_info.type),
                        updated_at=sa.bindparam('now')))
    raise ValueError(kind)


def _pick(conn, free, skip_locked=True, name=None, start=None, op=None,
          tried=()):
    """The free node with the lowest id matching ``free``, locked.

    With ``skip_locked`` rows locked by other transactions are passed
    over; without, the query waits for them and re-checks the filter on
    their committed version. ``name``, ``start`` (with ``op``, ``>=`` or
    ``<``) and ``tried`` narrow the choice.
    """
    params = dict(free.params)
    if name is not None:
        params['f_name'] = name
    if op is not None:
        params['start'] = start
    if tried:
        params['tried'] = list(tried)
    query = _statement('pick', free.shape, _locking(conn), skip_locked,
                       name is not None, op, bool(tried))
    return conn.execute(query, params).first()


def _id_range(conn):
    """(lowest, highest) node id, cached for a few seconds per engine.

    Only the random start depends on it: a stale range skews the choice a
    little but never hides a node (the pick wraps around).
    """
    engine = conn.engine
    now = time.monotonic()
    cached = _ID_RANGES.get(engine)
    if cached is not None and cached[0] > now:
        return cached[1]
    bounds = tuple(conn.execute(_ID_RANGE).one())
    _ID_RANGES[engine] = (now + _ID_RANGE_TTL, bounds)
    return bounds


def _pick_from_random_start(conn, free, randomize, skip_locked=True,
                            tried=()):
    """Pick the first free node at or after a random id, wrapping around."""
    if not randomize:
        return _pick(conn, free, skip_locked, tried=tried)
    low, high = _id_range(conn)
    if low is None:
        # No node at all a moment ago: look again without the cache.
        return _pick(conn, free, skip_locked, tried=tried)
    start = random.randint(low, high)
    return (_pick(conn, free, skip_locked, start=start, op='>=',
                  tried=tried)
            or _pick(conn, free, skip_locked, start=start, op='<',
                     tried=tried))


def _claim(conn, free, node, allocation):
    """Reserve ``node``; False if it stopped being free meanwhile."""
    info = dict(node.instance_info or {})
    # As upstream: the requested traits tell the deploy what was matched.
    info['traits'] = sorted(set(allocation.traits or ()))
    params = dict(free.params, node_id=node.id,
                  new_instance_uuid=allocation.uuid,
                  new_allocation_id=allocation.id,
                  new_instance_info=info, now=base.utcnow())
    try:
        result = conn.execute(_statement('claim', free.shape), params)
    except db_exc.DBDuplicateEntry:
        # The allocation's UUID became another node's instance_uuid since
        # the allocation was created. The transaction is lost (PostgreSQL
        # aborts it): give up rather than try another node.
        raise exception.InstanceAssociated(instance_uuid=allocation.uuid,
                                           node=node.uuid)
    return result.rowcount == 1


def _activate(conn, allocation, node_id):
    """Mark the allocation active on ``node_id``, guarded by its affinity.

    :raises: AllocationNotFound, AllocationTakenOver
    """
    if alloc_obj.activate_allocation(conn, allocation, node_id,
                                     base.utcnow()):
        return
    row = conn.execute(
        sa.select(ALLOCATIONS.c.conductor_affinity, ALLOCATIONS.c.state)
        .where(ALLOCATIONS.c.id == allocation.id)).first()
    if row is None:
        raise exception.AllocationNotFound(allocation=allocation.uuid)
    raise exception.AllocationTakenOver(allocation=allocation.uuid,
                                        conductor=row.conductor_affinity)


@db_api.retry_on_deadlock
@db_api.writer.connection
def _reserve_node(context, allocation, randomize, node_uuid=None,
                  also_claim=None):
    # READ COMMITTED on every database (see db_api._mysql_setup): row
    # locks only, no gap locks in nodes_alloc_idx that would deadlock
    # concurrent reservations.
    conn = context.connection
    if node_uuid is not None:
        return _reserve_that_node(conn, allocation, node_uuid), None
    free = _Filter(allocation)
    tried = []
    for _attempt in range(_MAX_PICKS):
        node = None
        if allocation.name and not tried:
            # Metalsmith-style deployments name allocations after nodes:
            # the namesake node goes first when it fits.
            node = _pick(conn, free, name=allocation.name)
        if node is None:
            node = _pick_from_random_start(conn, free, randomize,
                                           tried=tried)
        if node is None and conn.dialect.name == 'postgresql':
            # Every free node may be locked by a concurrent reservation
            # that could still roll back: wait for them this once rather
            # than fail while a node may turn out free. (Not on InnoDB:
            # the waiting locking read deadlocks with the index updates
            # of the reservations it waits for.)
            node = _pick_from_random_start(conn, free, randomize,
                                           skip_locked=False, tried=tried)
        if node is None:
            break
        write = None
        if also_claim is not None:
            write = also_claim(context, node)
            if write is None:
                tried.append(node.id)
                continue
        if _claim(conn, free, node, allocation):
            if write is not None:
                write()
            _activate(conn, allocation, node.id)
            return node, None
        tried.append(node.id)
    # Why there was none, in the same transaction (no second one to pay).
    return None, _explain(conn, allocation)


def _reserve_that_node(conn, allocation, node_uuid):
    """Reserve ``node_uuid`` if it is free for ``allocation``, else None."""
    free = _Filter(allocation, among=[node_uuid])
    if free.empty:
        return None
    # The node was claimed elsewhere first, so no other allocation
    # competes for it; a short node lock may. PostgreSQL waits for it;
    # InnoDB's waiting read can deadlock with index updates (see
    # _reserve_node), so there a locked node counts as not free.
    node = _pick(conn, free, skip_locked=conn.dialect.name != 'postgresql')
    if node is None or not _claim(conn, free, node, allocation):
        return None
    _activate(conn, allocation, node.id)
    return node


def reserve_node_or_explain(context, allocation, randomize=True,
                            node_uuid=None, also_claim=None):
    """:func:`reserve_node`, or why no node could be reserved.

    :returns: (node UUID, None) on success, else (None, the reason as
        :func:`explain_no_node` gives it; None when ``node_uuid`` was
        given: that node alone was not free).
    :raises: as :func:`reserve_node`.
    """
    node, error = _reserve_node(context, allocation, randomize, node_uuid,
                                also_claim)
    if node is None:
        return None, error
    allocation.node_id = node.id
    allocation.node_uuid = node.uuid
    allocation.state = alloc_obj.ACTIVE
    allocation.last_error = None
    allocation.obj_reset_changes(['node_id', 'node_uuid', 'state',
                                  'last_error'])
    return node.uuid, None


def reserve_node(context, allocation, randomize=True, node_uuid=None,
                 also_claim=None):
    """Reserve a free node for an ``allocating`` allocation.

    In one transaction: pick a free node matching the allocation, set its
    ``instance_uuid`` (the allocation's UUID), ``allocation_id`` and the
    ``traits`` key of its ``instance_info``; set the allocation's
    ``node_id`` and state ``active`` (guarded by its affinity). The object
    is updated on success.

    :param randomize: start from a random node (the default) rather than
        the lowest id (deterministic, for the ``fake`` backend).
    :param node_uuid: reserve that node or none (a backend that claimed
        it elsewhere first); it must still match the allocation and be
        free, and a concurrent transaction holding its row is waited for.
    :param also_claim: a backend's claim elsewhere in the same database,
        made in the same transaction: ``also_claim(context, node)`` is
        called with each node picked (its row: ``id``, ``uuid``) before
        it is reserved, and returns None to pass the node over (nothing
        written), else a function called (without arguments) once the
        node's row is reserved, before the allocation is activated. An
        exception it raises rolls the whole transaction back.
    :returns: the UUID of the reserved node, or None when no node could be
        reserved (see :func:`explain_no_node`).
    :raises: AllocationNotFound, AllocationTakenOver, InstanceAssociated
    """
    return reserve_node_or_explain(context, allocation, randomize,
                                   node_uuid, also_claim)[0]


@db_api.reader.connection
def reserved_node(context, allocation_id):
    """The UUID of the node reserved for allocation ``allocation_id``.

    :returns: the node's UUID, or None when no node is reserved for it.
    """
    return context.connection.execute(
        sa.select(NODES.c.uuid).where(NODES.c.allocation_id == allocation_id)
        .limit(1)).scalar()


@db_api.reader.connection
def free_nodes(context, allocation, uuids=None, limit=None):
    """Which nodes (of ``uuids`` when given) could serve ``allocation`` now.

    The filter of :func:`reserve_node` (locked nodes included: a lock is
    short); for a backend that gets candidates from elsewhere and must
    not spend claims on nodes that are busy here.

    :param limit: return at most that many (those with the lowest ids).
    :returns: a set of node UUIDs.
    """
    free = _Filter(allocation, with_unlocked=False,
                   among=None if uuids is None else list(uuids))
    if free.empty:
        return set()
    query = (sa.select(NODES.c.uuid).where(*_free_conditions(free.shape))
             .order_by(NODES.c.id))
    if limit:
        query = query.limit(limit)
    rows = context.connection.execute(query, free.params)
    return {row.uuid for row in rows}


def _exists(conn, free):
    return conn.execute(_statement('exists', free.shape),
                        free.params).first() is not None


@db_api.reader.connection
def explain_no_node(context, allocation):
    """Say which filter left no node for ``allocation`` (``last_error``)."""
    return _explain(context.connection, allocation)


def _explain(conn, allocation):
    rc = allocation.resource_class
    owner = (' owned by or leased to project %s' % allocation.owner
             if allocation.owner else '')
    if not _exists(conn, _Filter(allocation, with_traits=False,
                                 with_unlocked=False)):
        if allocation.candidate_nodes:
            return ('none of the requested candidate nodes are available '
                    'and match the resource class %s%s' % (rc, owner))
        return 'no available nodes match the resource class %s%s' % (
            rc, owner)
    if allocation.traits and not _exists(
            conn, _Filter(allocation, with_unlocked=False)):
        what = ('candidate nodes' if allocation.candidate_nodes
                else 'nodes')
        return ('no available %s of resource class %s%s have the requested '
                'traits %s' % (what, rc, owner,
                               ', '.join(sorted(allocation.traits))))
    return (BUSY_ERROR + ' of resource class %s: all of them are locked by '
            'other operations or were reserved concurrently' % rc)


def _node_traits(conn, node_id):
    return {r.trait for r in conn.execute(
        sa.select(NODE_TRAITS.c.trait).where(
            NODE_TRAITS.c.node_id == node_id))}


def _lock_node_row(conn, conds):
    query = sa.select(NODES).where(*conds)
    if _locking(conn):
        query = query.with_for_update()
    return conn.execute(query).first()


@db_api.retry_on_deadlock
@db_api.writer.connection
def _backfill(context, allocation, node_id):
    conn = context.connection
    node = _lock_node_row(conn, [NODES.c.id == node_id])
    if node is None:
        raise exception.NodeNotFound(node=node_id)
    if node.reservation:
        raise exception.NodeLocked(node=node.uuid, host=node.reservation)
    if not _field(allocation, 'uuid'):
        # Backfilling without a UUID adopts the deployed instance's UUID.
        allocation.uuid = node.instance_uuid or uuidutils.generate_uuid()
    if not _field(allocation, 'resource_class'):
        allocation.resource_class = node.resource_class

    errors = []
    # Backfill records allocations of nodes deployed without one; it is
    # not a way around the allocation process, hence "active" only.
    if node.provision_state != states.ACTIVE:
        errors.append('the node must be in the "active" state, but it is '
                      'in "%s"' % node.provision_state)
    if node.resource_class != allocation.resource_class:
        errors.append('its resource class %s does not match the requested '
                      'resource class %s' % (node.resource_class,
                                             allocation.resource_class))
    wanted = set(_field(allocation, 'traits') or ())
    if wanted:
        missing = wanted - _node_traits(conn, node.id)
        if missing:
            errors.append('it lacks the requested traits %s'
                          % ', '.join(sorted(missing)))
    candidates = _field(allocation, 'candidate_nodes')
    if candidates and node.uuid not in candidates:
        errors.append('candidate_nodes must be empty or contain the node')
    if errors:
        raise exception.InvalidParameterValue(
            err='Cannot backfill an allocation for node %s: %s'
                % (node.uuid, '; '.join(errors)))
    if node.allocation_id is not None:
        raise exception.NodeAssociated(node=node.uuid,
                                       instance=node.instance_uuid)
    if node.instance_uuid and node.instance_uuid != allocation.uuid:
        raise exception.NodeAssociated(node=node.uuid,
                                       instance=node.instance_uuid)
    alloc_obj.check_instance_uuid_free(conn, allocation.uuid, node.id)

    values = allocation._values_for_db(alloc_obj._COLUMNS)
    values.update(uuid=allocation.uuid, node_id=node.id,
                  state=alloc_obj.ACTIVE, last_error=None,
                  resource_class=allocation.resource_class)
    allocation_id = alloc_obj.insert_allocation(conn, values, wanted)
    info = dict(node.instance_info or {})
    info['traits'] = sorted(wanted)
    conn.execute(
        sa.update(NODES).where(NODES.c.id == node.id)
        .values(instance_uuid=allocation.uuid, allocation_id=allocation_id,
                instance_info=info, updated_at=base.utcnow()))
    return allocation_id


def backfill(context, allocation, node_id):
    """Create ``allocation`` directly ``active`` on an already deployed node.

    Everything is checked before anything is written, in the transaction
    that writes: on any error nothing is left behind.

    :returns: the created allocation, re-read from the database.
    :raises: NodeNotFound, NodeLocked, InvalidParameterValue (the node does
        not match the request or is not ``active``), NodeAssociated (the
        node belongs to another instance or allocation), InstanceAssociated,
        AllocationAlreadyExists, AllocationDuplicateName
    """
    allocation_id = _backfill(context, allocation, node_id)
    return alloc_obj.Allocation.get_by_id(context, allocation_id)


@db_api.retry_on_deadlock
@db_api.writer.connection
def release_node(context, allocation, also_release=None):
    """Delete ``allocation`` and release its node, in one transaction.

    Refused as :func:`verify_node_for_deallocation` says, or while a task
    holds the node's lock.

    :param also_release: a backend's release elsewhere in the same
        database, made in the same transaction once the allocation is
        deleted: called with the context; an exception it raises rolls
        the whole transaction back.
    :raises: AllocationNotFound, NodeLocked, NodeIsAllocated
    """
    conn = context.connection
    node = _lock_node_row(conn, [NODES.c.allocation_id == allocation.id])
    if node is not None:
        # The row lock and no task holding the node: the node lock.
        if node.reservation:
            raise exception.NodeLocked(node=node.uuid, host=node.reservation)
        verify_node_for_deallocation(node, allocation.uuid)
        values = {'allocation_id': None, 'updated_at': base.utcnow()}
        if node.instance_uuid == allocation.uuid:
            values['instance_uuid'] = None
        conn.execute(sa.update(NODES).where(NODES.c.id == node.id)
                     .values(values))
    conn.execute(sa.delete(alloc_obj.TRAITS).where(
        alloc_obj.TRAITS.c.allocation_id == allocation.id))
    result = conn.execute(sa.delete(ALLOCATIONS).where(
        ALLOCATIONS.c.id == allocation.id))
    if result.rowcount != 1:
        raise exception.AllocationNotFound(allocation=allocation.uuid)
    if also_release is not None:
        also_release(context)
