"""Claim a node's whole provider tree inside the caller's transaction.

The ``placement`` node allocation backend, when our Placement runs in
the same process (and so on the same database), claims a node's
providers in the very transaction that reserves the node (see
``drivers/allocation/placement.py``): no candidates request and no
claim request, and the claim and the reservation commit, or roll back,
together. Two steps, both on the caller's connection:

* :func:`check` locks the providers of the tree of the node's root
  provider, then reads, in one statement, whether Placement offers that
  tree as ``GET /allocation_candidates`` would for one unit of the
  node's class: the root exists, has a free unit of the class, every
  required trait and, when given, the owner's aggregate. It answers what
  claiming the whole tree takes: everything each of its providers has
  free, as the backend claims over HTTP
  (``PlacementClient.candidate_claims``). The same statement reads
  whether the consumer exists and the ids of its project and user;
* :func:`write` writes that claim as the consumer's allocations: the
  consumer, its allocations and the providers' generations.

Because the usage is read under the lock, nobody can take the capacity
before the write: the claim needs no second capacity check, nor a
compare-and-swap of the generations, which the lock makes certain. A new
consumer's claim so costs five statements on PostgreSQL and MariaDB
(the lock, the read, the consumer, the allocations, the generations)
and four on SQLite, whose writers take the database's write lock when
their transaction begins, so that no lock statement is needed there.
When the consumer already exists (a claim an earlier attempt left
behind), :func:`write` replaces its allocations with
``allocation.write_allocations`` instead, as ``PUT
/allocations/{consumer}`` would. Errors of :func:`check` (a constraint
of an inventory the claim would violate) and of :func:`write` (a
duplicate consumer) must abort the caller's whole transaction.

:func:`release` deletes a consumer's allocations in the caller's
transaction, as ``DELETE /allocations/{consumer}`` does: the backend
releases a node and deletes its claim together.

Only the root serving the node's class is checked: the shape every
hardware type of this project gives a node (``HardwareType.
provider_shape``). A tree that serves the class from a child is
answered :data:`NO_CLASS`, and the backend claims it over the API.
"""

import functools

import sqlalchemy as sa

from alloc_framework.db import api as db_api
from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects.placement import allocation as alloc_obj
from alloc_framework.objects.placement import attribute_cache
from alloc_framework.objects.placement import consumer as consumer_obj
from alloc_framework.objects.placement import exception

# Why check() did not offer a tree.
MISSING = 'no root provider'
NO_CLASS = 'no inventory of the class on the root'
USED = 'no free unit of the class'
RESERVED = 'the unit of the class is reserved'
TRAITS = 'a required trait is missing'
AGGREGATE = 'not in the owner\'s aggregate'

_RP = models.ResourceProvider.__table__
_ROOT = _RP.alias('root')
_INV = models.Inventory.__table__
_ALLOC = models.Allocation.__table__
_RP_TRAIT = models.ResourceProviderTrait.__table__
_RP_AGG = models.ResourceProviderAggregate.__table__
_AGG = models.PlacementAggregate.__table__
_CONSUMER = models.Consumer.__table__
# Shapes of the statements built per number of traits or providers
# (_tree, _bump) kept; a node has at most 50 traits.
_SHAPES_KEPT = 64

_USED = (sa.select(sa.func.coalesce(sa.func.sum(_ALLOC.c.used), 0))
         .where(_ALLOC.c.resource_provider_id == _INV.c.resource_provider_id,
                _ALLOC.c.resource_class_id == _INV.c.resource_class_id)
         .scalar_subquery())


# How many of the traits :t0, :t1... the root has (see _tree).
def _root_traits(count):
    if not count:
        return sa.literal(0)
    return (sa.select(sa.func.count())
            .where(_RP_TRAIT.c.resource_provider_id == _ROOT.c.id,
                   _RP_TRAIT.c.trait_id.in_(
                       [sa.bindparam('t%d' % i) for i in range(count)]))
            .scalar_subquery())


# Whether the root is in the aggregate :aggregate.
_ROOT_IN_AGGREGATE = (
    sa.exists()
    .where(_RP_AGG.c.resource_provider_id == _ROOT.c.id,
           _RP_AGG.c.aggregate_id == _AGG.c.id,
           _AGG.c.uuid == sa.bindparam('aggregate')))
# Whether the consumer :consumer exists (its owner's ids are read by
# ``consumer.OWNER_IDS``, as ``consumer.get_with_owner_ids`` reads them
# for a write).
_CONSUMER_EXISTS = (
    sa.exists().where(_CONSUMER.c.uuid == sa.bindparam('consumer')))


# Every provider of the tree rooted at :root, with each inventory and
# its usage (no inventory: one row of NULLs), and on every row how many
# of the :t0, :t1... traits the root has, whether it is in the
# aggregate, the consumer and its owner's ids. One statement per number
# of traits asked, built once: a list of values expanded in the
# statement would have its text rendered again at every execution.
@functools.lru_cache(maxsize=_SHAPES_KEPT)
def _tree(traits):
    return (
        sa.select(_ROOT.c.id.label('root_id'), _RP.c.id, _RP.c.uuid,
                  _INV.c.resource_class_id, _INV.c.total, _INV.c.reserved,
                  _INV.c.allocation_ratio, _INV.c.min_unit,
                  _INV.c.max_unit, _INV.c.step_size, _USED.label('used'),
                  _root_traits(traits).label('traits'),
                  _ROOT_IN_AGGREGATE.label('in_aggregate'),
                  _CONSUMER_EXISTS.label('consumer_exists'),
                  *consumer_obj.OWNER_IDS)
        .select_from(
            _ROOT.join(_RP, _RP.c.root_provider_id == _ROOT.c.id)
            .outerjoin(_INV, _INV.c.resource_provider_id == _RP.c.id))
        .where(_ROOT.c.uuid == sa.bindparam('root'),
               _ROOT.c.parent_provider_id.is_(None)))


# The providers of that tree, locked in the order of their ids (as every
# allocation write locks providers) until the transaction ends.
_LOCK_TREE = (
    sa.select(_RP.c.id)
    .where(_RP.c.root_provider_id == (
        sa.select(_ROOT.c.id)
        .where(_ROOT.c.uuid == sa.bindparam('root'),
               _ROOT.c.parent_provider_id.is_(None))
        .scalar_subquery()))
    .order_by(_RP.c.id)
    .with_for_update())


# The generations of the providers :i0, :i1... moved on, one statement
# per number of providers (as _tree).
@functools.lru_cache(maxsize=_SHAPES_KEPT)
def _bump(count):
    ids = [sa.bindparam('i%d' % i) for i in range(count)]
    return (_RP.update()
            .where(_RP.c.id == ids[0] if count == 1 else _RP.c.id.in_(ids))
            .values(generation=_RP.c.generation + 1))


_INSERT = _ALLOC.insert()


class Claim(dict):
    """``{provider UUID: {class: amount}}``, as :func:`check` read it.

    Also what :func:`write` needs of that read: the providers' ids, the
    consumer it was read for, whether that consumer existed, and the
    row holding the ids of its project and user (``owner_ids``, as
    ``consumer.create`` takes them).
    """

    def __init__(self, amounts, rp_ids, consumer, consumer_exists,
                 owner_ids):
        """
        :param consumer: ``(consumer UUID, project id, user id)`` the
            claim was read for.
        """
        super().__init__(amounts)
        self.rp_ids = rp_ids
        self.consumer = consumer
        self.consumer_exists = consumer_exists
        self.owner_ids = owner_ids


def _free(row):
    """Free units of the row's inventory (Placement's capacity - used)."""
    capacity = int((row.total - row.reserved) * row.allocation_ratio)
    return capacity - row.used


@db_api.writer.connection
def check(context, root_uuid, resource_class, traits=(), aggregate=None,
          consumer_uuid=None, project_id=None, user_id=None):
    """Whether Placement offers the tree of ``root_uuid``, and its claim.

    The tree's providers are locked first (until the caller's
    transaction ends, whatever the answer), so that what is read stays
    true until :func:`write`.

    :param resource_class: the class of which the root must have a free
        unit (``CUSTOM_<node class>``).
    :param traits: names of traits the root must have.
    :param aggregate: UUID of an aggregate the root must be in, or None.
    :param consumer_uuid: the consumer the claim is for, and
        ``project_id``, ``user_id`` its owner's external ids: what
        :func:`write` needs of the database is then read here too.
    :returns: ``(claim, None)`` with ``claim`` a :class:`Claim`,
        ``{provider UUID: {class: amount}}`` (everything the tree's
        providers have free), or ``(None, reason)``, the reason one of
        :data:`MISSING`, :data:`NO_CLASS`, :data:`USED` (consumers hold
        it), :data:`RESERVED` (nobody does), :data:`TRAITS`,
        :data:`AGGREGATE`.
    """
    try:
        rc_id = attribute_cache.rc_id(context, resource_class)
    except exception.ResourceClassNotFound:
        rc_id = None
    try:
        trait_ids = sorted({attribute_cache.trait_id(context, name)
                            for name in traits})
    except exception.TraitNotFound:
        trait_ids = None
    conn = context.connection
    if conn.dialect.name != 'sqlite':
        # SQLite's writers hold the database's write lock from the start
        # of their transaction (``BEGIN IMMEDIATE``, see db_api): nobody
        # else writes until ours ends.
        conn.execute(_LOCK_TREE, {'root': root_uuid})
    params = {'root': root_uuid, 'aggregate': aggregate or '',
              'consumer': consumer_uuid or '', 'project': project_id or '',
              'user': user_id or '', 'type': None}
    params.update(('t%d' % i, trait_id)
                  for i, trait_id in enumerate(trait_ids or ()))
    rows = conn.execute(_tree(len(trait_ids or ())), params).all()
    if not rows:
        return None, MISSING
    served = [row for row in rows if row.id == row.root_id
              and row.resource_class_id == rc_id]
    if rc_id is None or not served:
        return None, NO_CLASS
    if _free(served[0]) < 1:
        # Reserved with nothing allocated: the provider says the node
        # cannot serve (its mirror may be out of date); else a consumer
        # holds it.
        return None, RESERVED if served[0].used == 0 else USED
    if trait_ids is None or served[0].traits != len(trait_ids):
        return None, TRAITS
    if aggregate is not None and not served[0].in_aggregate:
        return None, AGGREGATE
    amounts, rp_ids = {}, {}
    for row in rows:
        if row.resource_class_id is None:
            continue
        free = _free(row)
        if free <= 0:
            continue
        name = attribute_cache.rc_name(context, row.resource_class_id)
        if (free < row.min_unit or free > row.max_unit
                or free % row.step_size):
            # As the capacity check of an allocation write refuses it.
            raise exception.InvalidAllocationConstraintsViolated(
                resource_class=name, resource_provider=row.uuid)
        amounts.setdefault(row.uuid, {})[name] = free
        rp_ids[row.uuid] = row.id
    # The first row also holds the owner's ids as consumer.create takes
    # them (no consumer type: owner_type_id is None).
    return Claim(amounts, rp_ids, (consumer_uuid, project_id, user_id),
                 bool(rows[0].consumer_exists), rows[0]), None


@db_api.writer.connection
def write(context, consumer_uuid, claim, project_id, user_id):
    """Write ``claim`` as all the allocations of ``consumer_uuid``.

    In the caller's transaction, after the :func:`check` that answered
    ``claim`` for this consumer and owner: the consumer is created (at
    generation 1, its first write), its allocations inserted and the
    generation of each provider they are on moved on. A consumer that
    existed at the check (a claim a failed attempt left behind) has its
    allocations replaced by ``allocation.write_allocations`` instead, as
    is a claim :func:`check` read for another consumer or owner, or any
    other ``{provider UUID: {class: amount}}``.

    :param claim: a :class:`Claim` (see :func:`check`).
    :raises: DBDuplicateEntry (the consumer was created meanwhile),
        and for a replaced claim InvalidAllocationCapacityExceeded,
        ResourceProviderNotFound, ResourceProviderConcurrentUpdateDetected
        and the other errors of ``allocation.write_allocations``: the
        caller's transaction must then roll back.
    """
    rc_ids = {name: attribute_cache.rc_id(context, name)
              for amounts in claim.values() for name in amounts}
    if (not isinstance(claim, Claim) or claim.consumer_exists
            or claim.consumer != (consumer_uuid, project_id, user_id)):
        request = alloc_obj.ConsumerAllocations(consumer_uuid, claim,
                                                project_id, user_id)
        alloc_obj.write_allocations(context, [request], rc_ids)
        return
    consumer_obj.create(context, consumer_uuid, project_id, user_id,
                        generation=1, owner_ids=claim.owner_ids)
    conn = context.connection
    conn.execute(_INSERT, [
        {'resource_provider_id': claim.rp_ids[rp_uuid],
         'resource_class_id': rc_ids[name], 'consumer_id': consumer_uuid,
         'used': amount}
        for rp_uuid, amounts in sorted(claim.items())
        for name, amount in sorted(amounts.items())])
    # Locked since the check: no compare-and-swap needed.
    ids = sorted(claim.rp_ids[rp_uuid] for rp_uuid in claim)
    conn.execute(_bump(len(ids)),
                 {'i%d' % i: rp_id for i, rp_id in enumerate(ids)})


def release(context, consumer_uuid):
    """Delete every allocation of ``consumer_uuid``, and the consumer.

    In the caller's transaction (``allocation.remove_consumer``);
    its errors must roll that transaction back.
    """
    alloc_obj.remove_consumer(context, consumer_uuid)
