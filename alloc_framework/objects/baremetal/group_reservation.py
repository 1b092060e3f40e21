"""Reserving and releasing the nodes of an allocation group, atomically.

:func:`reserve_group` does everything in one transaction: it picks nodes
for every member of the group, creates one ordinary ``active`` allocation
per node (visible in ``/v1/allocations`` and on the node, as any other),
reserves the nodes and makes the group ``active``. When any member cannot
get all its nodes the transaction is rolled back and nothing is reserved;
the reason then names the member and the filter that failed, in the words
of the single allocations (``node_reservation._explain``). A conductor
killed in the middle leaves nothing either: its transaction never
commits, and the group, still ``allocating``, is taken over.

Concurrency follows the single allocations: the free-node filter is the
same (``node_reservation._Filter``), chosen nodes are locked with ``FOR
UPDATE SKIP LOCKED`` on PostgreSQL and MariaDB (a node locked by a
concurrent reservation is passed over, never waited for: no deadlock),
and every node is reserved with the UPDATE that repeats the filter, whose
row count decides (never two allocations on one node). SQLite serializes
writers.

:func:`release_group` deletes a group, its allocations and their nodes'
reservations in one transaction, refused as a whole when any node may
not lose its allocation now.
"""

import random

from oslo_utils import uuidutils
import sqlalchemy as sa

from alloc_framework.common import exception
from alloc_framework.db import api as db_api
from alloc_framework.objects.baremetal import allocation as alloc_obj
from alloc_framework.objects.baremetal import allocation_group as group_obj
from alloc_framework.objects.baremetal import base
from alloc_framework.objects.baremetal import node_reservation as nr

NODES = nr.NODES
ALLOCATIONS = alloc_obj.ALLOCATIONS
GROUPS = group_obj.GROUPS

# How many times the nodes chosen for one member may turn out locked by
# concurrent reservations before this attempt gives up (busy).
_MAX_ROUNDS = 5

SPREAD_FIELDS = ('conductor_group',)
SPREAD_PROPERTY_PREFIX = 'properties/'


class _Shortfall(Exception):
    """A member could not get its nodes: roll back and explain."""

    def __init__(self, index, found, spread_missing=False):
        super().__init__(index)
        self.index = index
        self.found = found
        self.spread_missing = spread_missing


class _Busy(Exception):
    """Enough nodes exist but concurrent reservations hold some."""

    def __init__(self, index):
        super().__init__(index)
        self.index = index


def member_request(group, member):
    """An unsaved Allocation holding what ``member`` asks for.

    The free-node filter and the explanations of single allocations read
    their request from an allocation; a member asks the same questions.
    """
    return alloc_obj.Allocation(
        resource_class=member['resource_class'],
        traits=sorted(set(member.get('traits') or ())),
        candidate_nodes=member.get('candidate_nodes') or None,
        owner=group.owner, name=None)


def spread_value(spread, row):
    """The value of the spread field of node ``row``; None when unset."""
    field = spread['field']
    if field == 'conductor_group':
        return row.conductor_group or ''
    key = field[len(SPREAD_PROPERTY_PREFIX):]
    value = (row.properties or {}).get(key)
    return None if value is None else str(value)


def _spread_choice(rows, count, spread):
    """``count`` of ``rows`` (already shuffled), spread as evenly as can be.

    Round robin over the values of the spread field: no value gets its
    n+1-th node before every value that still has a node got its n-th.
    Nodes without a value are not used.
    """
    if not spread:
        return rows[:count]
    buckets = {}
    for row in rows:
        value = spread_value(spread, row)
        if value is not None:
            buckets.setdefault(value, []).append(row)
    order = list(buckets)
    random.shuffle(order)
    chosen = []
    while len(chosen) < count and any(buckets.values()):
        for value in order:
            if buckets[value]:
                chosen.append(buckets[value].pop())
                if len(chosen) == count:
                    break
    return chosen


def _candidates(conn, free):
    """The free nodes matching a member's filter (not locked)."""
    columns = (NODES.c.id, NODES.c.uuid, NODES.c.instance_info,
               NODES.c.conductor_group, NODES.c.properties)
    query = (sa.select(*columns).where(*nr._free_conditions(free.shape))
             .order_by(NODES.c.id))
    return conn.execute(query, free.params).all()


def _lock(conn, free, ids):
    """Of node ``ids``, those still free now locked by this transaction."""
    if not ids:
        return set()
    query = (sa.select(NODES.c.id)
             .where(NODES.c.id.in_(sa.bindparam('ids', expanding=True)),
                    *nr._free_conditions(free.shape)))
    if nr._locking(conn):
        query = query.with_for_update(skip_locked=True)
    params = dict(free.params, ids=list(ids))
    return {row.id for row in conn.execute(query, params)}


def _pick_member(conn, index, free, rows, count, spread, taken,
                 randomize):
    """Rows of ``count`` free nodes for a member, locked; see the module.

    :param rows: the member's candidates (:func:`_candidates`).
    """
    rows = [row for row in rows if row.id not in taken]
    if randomize:
        random.shuffle(rows)
    if len(_spread_choice(rows, count, spread)) < count:
        missing = bool(spread) and len(rows) >= count
        raise _Shortfall(index, len(rows), spread_missing=missing)
    busy, locked = set(), set()
    for _round in range(_MAX_ROUNDS):
        usable = [row for row in rows if row.id not in busy]
        chosen = _spread_choice(usable, count, spread)
        if len(chosen) < count:
            break
        wanted = {row.id for row in chosen} - locked
        got = _lock(conn, free, wanted)
        locked |= got
        busy |= wanted - got
        if not wanted - got:
            return chosen
    raise _Busy(index)


def _claim(conn, free, row, allocation_id, allocation_uuid, traits):
    info = dict(row.instance_info or {})
    info['traits'] = traits
    params = dict(free.params, node_id=row.id,
                  new_instance_uuid=allocation_uuid,
                  new_allocation_id=allocation_id, new_instance_info=info,
                  now=base.utcnow())
    result = conn.execute(nr._statement('claim', free.shape), params)
    return result.rowcount == 1


@db_api.reader.connection
def node_rows(context, uuids):
    """Rows of nodes ``uuids`` as :func:`spread_choice` reads them."""
    if not uuids:
        return []
    query = (sa.select(NODES.c.id, NODES.c.uuid, NODES.c.conductor_group,
                       NODES.c.properties)
             .where(NODES.c.uuid.in_(sa.bindparam('uuids', expanding=True)))
             .order_by(NODES.c.id))
    return context.connection.execute(query, {'uuids': list(uuids)}).all()


def spread_choice(rows, count, spread):
    """``count`` of ``rows`` spread over ``spread`` (see the module)."""
    return _spread_choice(rows, count, spread)


@db_api.retry_on_deadlock
@db_api.writer.connection
def _reserve_group(context, group, randomize, nodes=None, consumers=None):
    conn = context.connection
    # Nodes chosen (and claimed elsewhere) already were spread then.
    spread = None if nodes is not None else (group.spread or None)
    taken = set()
    requests = []
    for index, member in enumerate(group.members):
        request = member_request(group, member)
        if nodes is not None:
            request.candidate_nodes = list(nodes[index])
        free = nr._Filter(request)
        requests.append((index, request, free, _candidates(conn, free)))
    # The member with the fewest candidates first: a narrow member (with
    # traits, say) does not lose its only nodes to a broad one.
    plan = []
    for index, request, free, rows in sorted(
            requests, key=lambda r: (len(r[3]), r[0])):
        chosen = _pick_member(conn, index, free, rows,
                              int(group.members[index]['count']), spread,
                              taken, randomize)
        taken.update(row.id for row in chosen)
        plan.append((index, request, free, chosen))
    plan.sort(key=lambda p: p[0])
    uuids = []
    now = base.utcnow()
    for index, request, free, rows in plan:
        traits = list(request.traits or [])
        if nodes is not None:
            # Each node goes to the consumer that claimed it.
            by_uuid = {row.uuid: row for row in rows}
            rows = [by_uuid[node] for node in nodes[index]]
        for position, row in enumerate(rows):
            if consumers is not None:
                uuid = consumers[index][position]
            else:
                uuid = uuidutils.generate_uuid()
            values = {
                'uuid': uuid, 'name': None, 'node_id': row.id,
                'state': alloc_obj.ACTIVE, 'owner': group.owner,
                'last_error': None,
                'resource_class': request.resource_class,
                'candidate_nodes': (
                    group.members[index].get('candidate_nodes') or None),
                'extra': {'allocation_group': group.uuid,
                          'allocation_group_member': index},
                'conductor_affinity': group.conductor_affinity,
            }
            allocation_id = alloc_obj.insert_allocation(conn, values, traits)
            if not _claim(conn, free, row, allocation_id, uuid, traits):
                # Taken since it was chosen (SQLite has no row locks, but
                # serializes writers: not expected there either).
                raise _Busy(index)
            uuids.append(uuid)
    result = conn.execute(group_obj.finish_statement(
        group, group_obj.ACTIVE, uuids))
    if result.rowcount != 1:
        raise group_obj.lost_group_error(conn, group)
    group.state = group_obj.ACTIVE
    group.allocations = uuids
    group.last_error = None
    group.updated_at = now
    group.obj_reset_changes(['state', 'allocations', 'last_error',
                             'updated_at'])
    return uuids


def _describe(member, spread):
    parts = ['%d node%s of resource class %s'
             % (member['count'], '' if member['count'] == 1 else 's',
                member['resource_class'])]
    if member.get('traits'):
        parts.append('traits %s' % ', '.join(sorted(member['traits'])))
    if member.get('candidate_nodes'):
        parts.append('%d candidate nodes' % len(member['candidate_nodes']))
    return ', '.join(parts)


@db_api.reader.connection
def explain_shortfall(context, group, index, found, spread_missing=False):
    """Why member ``index`` could not get its nodes (the group's error).

    :param found: how many free nodes matched the member.
    """
    member = group.members[index]
    request = member_request(group, member)
    what = 'member %d (%s)' % (index, _describe(member, group.spread))
    if spread_missing:
        reason = ('fewer than %d of the available nodes that match have a '
                  'value of %s to spread over'
                  % (member['count'], group.spread['field']))
    elif found == 0:
        # The words of a single allocation: which filter left no node.
        reason = nr._explain(context.connection, request)
    else:
        reason = ('only %d available nodes match the resource class %s%s%s'
                  % (found, request.resource_class,
                     ' with the traits %s' % ', '.join(request.traits)
                     if request.traits else '',
                     ' among the candidate nodes'
                     if request.candidate_nodes else ''))
        if len(group.members) > 1:
            reason += ' (once the other members took theirs)'
    return 'Allocation group %s: %s: %s' % (group.uuid, what, reason)


def reserve_group(context, group, randomize=True, nodes=None,
                  consumers=None):
    """Reserve nodes for every member of an ``allocating`` group, or none.

    :param nodes: ``{member index: [node UUID]}``: reserve exactly those
        nodes (a backend claimed them elsewhere first); when one of them
        is no longer free the answer is busy.
    :param consumers: ``{member index: [allocation UUID]}``, with
        ``nodes``: the UUID of the allocation of each of those nodes.
    :returns: (the UUIDs of the new allocations, None) on success, else
        (None, the reason) where the reason names the member and the
        filter that left too few nodes; a reason starting with
        ``node_reservation.BUSY_ERROR`` means nodes were busy (worth
        another attempt).
    :raises: AllocationGroupNotFound, AllocationTakenOver
    """
    try:
        return _reserve_group(context, group, randomize, nodes,
                              consumers), None
    except _Shortfall as exc:
        if nodes is not None:
            return None, ('%s of member %d of allocation group %s: a '
                          'claimed node is no longer available'
                          % (nr.BUSY_ERROR, exc.index, group.uuid))
        return None, explain_shortfall(context, group, exc.index, exc.found,
                                       exc.spread_missing)
    except _Busy as exc:
        member = group.members[exc.index]
        return None, ('%s of member %d (%s) of allocation group %s: some '
                      'were reserved or locked concurrently'
                      % (nr.BUSY_ERROR, exc.index,
                         _describe(member, group.spread), group.uuid))


@db_api.retry_on_deadlock
@db_api.writer.connection
def release_group(context, group):
    """Delete ``group``, its allocations and their reservations, or nothing.

    Each node is checked as ``node_reservation.release_node`` checks it,
    with its row locked; one refusal refuses the whole deletion.

    :raises: AllocationGroupNotFound, NodeLocked, NodeIsAllocated
    """
    conn = context.connection
    # Read again, locked: a group that became active since the caller
    # read it has allocations to release.
    query = sa.select(GROUPS.c.allocations).where(GROUPS.c.id == group.id)
    if nr._locking(conn):
        query = query.with_for_update()
    row = conn.execute(query).first()
    if row is None:
        raise exception.AllocationGroupNotFound(group=group.uuid)
    uuids = list(row.allocations or [])
    if uuids:
        ids = [row.id for row in conn.execute(
            sa.select(ALLOCATIONS.c.id).where(
                ALLOCATIONS.c.uuid.in_(uuids)))]
        if ids:
            query = sa.select(NODES).where(NODES.c.allocation_id.in_(ids))
            if nr._locking(conn):
                query = query.with_for_update()
            nodes = conn.execute(query.order_by(NODES.c.id)).all()
            for node in nodes:
                if node.reservation:
                    raise exception.NodeLocked(node=node.uuid,
                                               host=node.reservation)
                nr.verify_node_for_deallocation(node, node.instance_uuid)
            now = base.utcnow()
            for node in nodes:
                values = {'allocation_id': None, 'updated_at': now}
                if node.instance_uuid in uuids:
                    values['instance_uuid'] = None
                conn.execute(sa.update(NODES).where(NODES.c.id == node.id)
                             .values(values))
            conn.execute(sa.delete(alloc_obj.TRAITS).where(
                alloc_obj.TRAITS.c.allocation_id.in_(ids)))
            conn.execute(sa.delete(ALLOCATIONS).where(
                ALLOCATIONS.c.id.in_(ids)))
    result = conn.execute(sa.delete(GROUPS).where(GROUPS.c.id == group.id))
    if result.rowcount != 1:
        raise exception.AllocationGroupNotFound(group=group.uuid)
