"""Allocation groups with the ``placement`` backend: one claim for all.

An attempt to allocate a group:

1. asks Placement for the candidates of each member (as a single
   allocation does), keeps those free in the database, and picks nodes
   for every member: members with the fewest candidates first, spread as
   the group asks (:mod:`group_reservation` picks the same way);
2. claims every picked node's tree in one ``POST /allocations``, one
   consumer per node: Placement writes all the claims or none;
3. reserves exactly those nodes in the database in one transaction
   (:func:`group_reservation.reserve_group` restricted to them), each
   allocation taking the UUID of the consumer that claimed its node;
4. when the reservation fails, deletes the claims before anything else.

The consumer UUIDs are derived from the group's UUID, its conductor
affinity and the member's position (:func:`group_consumers`): every
attempt of one conductor uses the same ones. A conductor killed between
the claim and the reservation leaves claims but no reservation; when
the same conductor resumes the group its claim meets its own consumers
(409) and it deletes them first; when another conductor takes the group
over, its consumers differ, and the old claims, which no allocation and
no ``allocating`` group stands behind any more, are deleted by the
claim heal (``PlacementBackend.heal_claim``) of the nodes that the new
attempt finds claimed. Nothing partial survives either way.

Deleting a group releases its nodes in the database first (all or
nothing), then deletes the claims of its consumers.
"""

import random
import uuid

from oslo_log import log

from alloc_framework.common import exception
from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import allocation_group as group_obj
from alloc_framework.objects.baremetal import group_reservation as gr
from alloc_framework.objects.baremetal import node_reservation as nr

LOG = log.getLogger(__name__)

# Outcomes of an attempt that did not reserve the group.
_AGAIN = 'again'    # something was repaired: try again at once
_BUSY = 'busy'      # concurrent requests hold nodes: try again shortly


def group_consumers(group, affinity=None):
    """``{member index: [consumer UUID]}`` of ``group``'s claims.

    The same for every attempt of the conductor ``affinity`` (by default
    the group's), distinct for another conductor.
    """
    if affinity is None:
        affinity = group.conductor_affinity
    namespace = uuid.UUID(group.uuid)
    return {index: [str(uuid.uuid5(namespace, '%s/%d/%d'
                                   % (affinity, index, position)))
                    for position in range(int(member['count']))]
            for index, member in enumerate(group.members)}


def claimed_by_allocating_group(context, consumer):
    """Whether ``consumer`` is a claim of a group being allocated now."""
    groups = objects.AllocationGroup.list(
        context, filters={'state': group_obj.ALLOCATING})
    for group in groups:
        for uuids in group_consumers(group).values():
            if consumer in uuids:
                return True
    return False


def _drop(backend, consumers):
    for consumer in consumers:
        try:
            backend.client.delete_claim(consumer)
        except Exception as exc:
            LOG.error('Could not delete the claim of %(consumer)s in '
                      'Placement (alloc-manage placement drift --heal '
                      'removes it): %(exc)s',
                      {'consumer': consumer, 'exc': exc})


def _offers(backend, context, group):
    """Per member: (request, {free node UUID: what claiming it takes})."""
    offers = []
    for member in group.members:
        request = gr.member_request(group, member)
        offered = backend.all_candidates(request)
        free = nr.free_nodes(context, request, list(offered)) \
            if offered else set()
        # Placement offered nodes that the database says are not free:
        # their providers are out of date.
        backend.resync(context, [u for u in offered if u not in free])
        offers.append((request, {u: offered[u] for u in free}))
    return offers


def _heal_member(backend, context, request, offered, taken, needed):
    """Why a member got too few nodes: repaired, busy, or a real shortfall.

    Free nodes of the database that Placement did not offer have stale
    providers, or claims of concurrent requests (kept by the heal while
    those are in progress, deleted when nothing stands behind them).
    """
    missing = sorted(u for u in nr.free_nodes(context, request)
                     if u not in offered and u not in taken)
    healed = False
    for node_uuid in missing[:max(needed, 1)]:
        if backend.sync_node(context, node_uuid):
            healed = True
    if healed:
        return _AGAIN
    if len(missing) >= needed:
        return _BUSY
    return None


def _plan(backend, context, group, offers):
    """Nodes for every member: ``({index: [node UUID]}, None)``.

    Else ``(None, outcome)``: :data:`_AGAIN`, :data:`_BUSY`, or the
    reason of the shortfall (a string naming the member).
    """
    spread = group.spread or None
    taken, plan = set(), {}
    order = sorted(range(len(offers)), key=lambda i: (len(offers[i][1]), i))
    for index in order:
        request, offered = offers[index]
        count = int(group.members[index]['count'])
        usable = [u for u in offered if u not in taken]
        rows = gr.node_rows(context, usable)
        random.shuffle(rows)
        chosen = gr.spread_choice(rows, count, spread)
        if len(chosen) < count:
            outcome = _heal_member(backend, context, request, offered,
                                   taken, count - len(chosen))
            if outcome is not None:
                return None, outcome
            missing = bool(spread) and len(rows) >= count
            return None, gr.explain_shortfall(context, group, index,
                                              len(rows), missing)
        plan[index] = [row.uuid for row in chosen]
        taken.update(plan[index])
    return plan, None


def _drop_stale(backend, group, consumers):
    """Delete the claims of an earlier attempt of this conductor.

    It died between claiming and reserving. Its claims were made all
    together, so they are there all together: the first consumer tells.

    :returns: whether there were any.
    """
    if not backend.client.get_claim(consumers[0][0]):
        return False
    LOG.info('Removing the claims of an interrupted attempt of allocation '
             'group %s', group.uuid)
    _drop(backend, [c for uuids in consumers.values() for c in uuids])
    return True


def _attempt(backend, context, group, consumers):
    """One attempt: the allocation UUIDs, or an outcome (see :func:`_plan`).

    :raises: AllocationTakenOver, AllocationGroupNotFound (no claim left).
    """
    offers = _offers(backend, context, group)
    plan, outcome = _plan(backend, context, group, offers)
    if plan is None:
        return None, outcome
    claims = {consumers[index][position]: offers[index][1][node]
              for index, nodes in plan.items()
              for position, node in enumerate(nodes)}
    project, user = backend.consumer_ids(group)
    if not backend.client.claim_many(claims, project, user):
        if _drop_stale(backend, group, consumers):
            return None, _AGAIN
        return None, _BUSY
    try:
        uuids, error = gr.reserve_group(context, group, nodes=plan,
                                        consumers=consumers)
    except BaseException:
        _drop(backend, claims)
        raise
    if uuids is None:
        _drop(backend, claims)
        backend.resync(context, [n for nodes in plan.values()
                                 for n in nodes])
        return None, _BUSY if error.startswith(nr.BUSY_ERROR) else error
    return uuids, None


def allocate_group(backend, context, group):
    """Claim and reserve the nodes of every member, or none.

    :returns: the UUIDs of the member allocations.
    :raises: AllocationFailed, AllocationTakenOver,
        AllocationGroupNotFound
    """
    consumers = group_consumers(group)
    # Resumed after a restart, the claims of the interrupted attempt
    # would hide their nodes from the candidates.
    _drop_stale(backend, group, consumers)
    error = None
    for attempt in range(backend.busy_attempts):
        uuids, outcome = _attempt(backend, context, group, consumers)
        if uuids is not None:
            LOG.debug('Allocation group %(group)s claimed and reserved '
                      '%(count)d nodes', {'group': group.uuid,
                                          'count': len(uuids)})
            return uuids
        if outcome == _AGAIN:
            continue
        if outcome != _BUSY:
            raise exception.AllocationFailed(error=outcome)
        error = ('%s for allocation group %s: the nodes that match are '
                 'claimed by concurrent requests' % (nr.BUSY_ERROR,
                                                     group.uuid))
        if attempt < backend.busy_attempts - 1:
            backend.pause_busy(attempt)
    if error is None:
        error = '%s for allocation group %s' % (nr.BUSY_ERROR, group.uuid)
    raise exception.AllocationFailed(error=error)


def release_group(backend, context, group):
    """Release the group's nodes in the database, then delete its claims.

    :raises: NodeIsAllocated, NodeLocked, AllocationGroupNotFound
        (nothing released, every claim kept).
    """
    group.refresh(context)
    consumers = [c for uuids in group_consumers(group).values()
                 for c in uuids]
    consumers += [u for u in (group.allocations or ())
                  if u not in consumers]
    gr.release_group(context, group)
    _drop(backend, consumers)
