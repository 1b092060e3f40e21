"""Claim a node's whole provider tree inside the caller's transaction.

The ``placement`` node allocation backend, when our Placement runs in
the same process (and so on the same database), claims a node's
providers in the very transaction that reserves the node (see
``drivers/allocation/placement.py``): no candidates request and no
claim request, and the claim and the reservation commit, or roll back,
together. Two steps, both on the caller's connection:

* :func:`check` reads, in one statement, whether Placement offers the
  tree of the node's root provider as ``GET /allocation_candidates``
  would for one unit of the node's class: the root exists, has a free
  unit of the class, every required trait and, when given, the owner's
  aggregate. It answers what claiming the whole tree takes: everything
  each of its providers has free, as the backend claims over HTTP
  (``PlacementClient.candidate_claims``);
* :func:`write` writes that claim as the consumer's allocations with
  ``allocation.write_allocations``: the providers are locked, capacity
  is checked against the usage read under the lock, generations move
  as for ``PUT /allocations/{consumer}``. Its errors (capacity taken
  meanwhile, a lost race) must abort the caller's whole transaction.

:func:`release` deletes a consumer's allocations in the caller's
transaction, as ``DELETE /allocations/{consumer}`` does: the backend
releases a node and deletes its claim together.

Only the root serving the node's class is checked: the shape every
hardware type of this project gives a node (``HardwareType.
provider_shape``). A tree that serves the class from a child is
answered :data:`NO_CLASS`, and the backend claims it over the API.
"""

import sqlalchemy as sa

from alloc_framework.db import api as db_api
from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects.placement import allocation as alloc_obj
from alloc_framework.objects.placement import attribute_cache
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

_USED = (sa.select(sa.func.coalesce(sa.func.sum(_ALLOC.c.used), 0))
         .where(_ALLOC.c.resource_provider_id == _INV.c.resource_provider_id,
                _ALLOC.c.resource_class_id == _INV.c.resource_class_id)
         .scalar_subquery())
# Whether the root has every trait of :trait_ids (how many it has), and
# whether it is in the aggregate :aggregate.
_ROOT_TRAITS = (
    sa.select(sa.func.count())
    .where(_RP_TRAIT.c.resource_provider_id == _ROOT.c.id,
           _RP_TRAIT.c.trait_id.in_(
               sa.bindparam('trait_ids', expanding=True)))
    .scalar_subquery())
_ROOT_IN_AGGREGATE = (
    sa.exists()
    .where(_RP_AGG.c.resource_provider_id == _ROOT.c.id,
           _RP_AGG.c.aggregate_id == _AGG.c.id,
           _AGG.c.uuid == sa.bindparam('aggregate')))
# Every provider of the tree rooted at :root, with each inventory and
# its usage (no inventory: one row of NULLs), and the root's traits and
# aggregate on every row. One statement, built once, at import.
_TREE = (
    sa.select(_ROOT.c.id.label('root_id'), _RP.c.id, _RP.c.uuid,
              _INV.c.resource_class_id, _INV.c.total, _INV.c.reserved,
              _INV.c.allocation_ratio, _USED.label('used'),
              _ROOT_TRAITS.label('traits'),
              _ROOT_IN_AGGREGATE.label('in_aggregate'))
    .select_from(
        _ROOT.join(_RP, _RP.c.root_provider_id == _ROOT.c.id)
        .outerjoin(_INV, _INV.c.resource_provider_id == _RP.c.id))
    .where(_ROOT.c.uuid == sa.bindparam('root'),
           _ROOT.c.parent_provider_id.is_(None)))


def _free(row):
    """Free units of the row's inventory (Placement's capacity - used)."""
    capacity = int((row.total - row.reserved) * row.allocation_ratio)
    return capacity - row.used


@db_api.writer.connection
def check(context, root_uuid, resource_class, traits=(), aggregate=None):
    """Whether Placement offers the tree of ``root_uuid``, and its claim.

    :param resource_class: the class of which the root must have a free
        unit (``CUSTOM_<node class>``).
    :param traits: names of traits the root must have.
    :param aggregate: UUID of an aggregate the root must be in, or None.
    :returns: ``(claim, None)`` with ``claim`` ``{provider UUID: {class:
        amount}}`` (everything the tree's providers have free), or
        ``(None, reason)``, the reason one of :data:`MISSING`,
        :data:`NO_CLASS`, :data:`USED` (consumers hold it),
        :data:`RESERVED` (nobody does), :data:`TRAITS`,
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
    rows = context.connection.execute(_TREE, {
        'root': root_uuid, 'trait_ids': trait_ids or [],
        'aggregate': aggregate or ''}).all()
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
    claim = {}
    for row in rows:
        if row.resource_class_id is None:
            continue
        free = _free(row)
        if free > 0:
            name = attribute_cache.rc_name(context, row.resource_class_id)
            claim.setdefault(row.uuid, {})[name] = free
    return claim, None


@db_api.writer.connection
def write(context, consumer_uuid, claim, project_id, user_id):
    """Write ``claim`` as all the allocations of ``consumer_uuid``.

    In the caller's transaction; the consumer's earlier allocations, if
    any, are replaced (a claim a failed attempt left behind), and it is
    created when new.

    :param claim: ``{provider UUID: {class: amount}}`` (see
        :func:`check`).
    :raises: InvalidAllocationCapacityExceeded (taken since
        :func:`check`), ResourceProviderNotFound,
        ResourceProviderConcurrentUpdateDetected and the other errors of
        ``allocation.write_allocations``: the caller's transaction must
        then roll back.
    """
    request = alloc_obj.ConsumerAllocations(consumer_uuid, claim,
                                            project_id, user_id)
    rc_ids = {name: attribute_cache.rc_id(context, name)
              for amounts in claim.values() for name in amounts}
    alloc_obj.write_allocations(context, [request], rc_ids)


def release(context, consumer_uuid):
    """Delete every allocation of ``consumer_uuid``, and the consumer.

    In the caller's transaction (``allocation.remove_consumer``);
    its errors must roll that transaction back.
    """
    alloc_obj.remove_consumer(context, consumer_uuid)
