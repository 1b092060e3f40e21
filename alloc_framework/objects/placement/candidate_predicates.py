"""The predicates of a provider search, each written once.

What "this inventory has room for that amount", "this provider is a
sharing provider", "the tree ``in_tree`` names", "these trait names" and
"a member of one of these aggregates" mean is decided here, and only
here. Three readers build on these functions:

* ``allocation_candidate.get_candidates`` (the search of
  ``GET /allocation_candidates``), which embeds them in its tuned
  per-root queries and checks the loaded trees with :func:`can_take`;
* ``candidate_explanation.explain_candidates`` (``explain=true``), which
  counts the providers and trees each of them leaves;
* ``provider_search.get_all_by_filters`` (``GET /resource_providers``).

So an explanation and the answer it explains can only differ in how they
combine the predicates, never in what a predicate means.

Every SQL predicate is a function returning a SQLAlchemy expression (a
condition on the table or alias it is given, or a sub-select of
provider ids); it renders the same statement for the same arguments, so
a caller's SQL does not change by calling it. The functions taking a
``context`` read through its session, inside the caller's transaction.
Nothing here holds state.
"""

import sqlalchemy as sa

from alloc_framework.db import api as db_api
from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects.placement import attribute_cache
from alloc_framework.objects.placement import exception
from alloc_framework.objects.placement import resource_provider_trait

RP_TBL = models.ResourceProvider.__table__
INV_TBL = models.Inventory.__table__
ALLOC_TBL = models.Allocation.__table__
AGG_TBL = models.PlacementAggregate.__table__
RP_AGG_TBL = models.ResourceProviderAggregate.__table__
RP_TRAIT_TBL = models.ResourceProviderTrait.__table__

# The trait of providers whose inventory is shared by the providers
# (and their trees) of the aggregates they are in.
SHARES_TRAIT = 'MISC_SHARES_VIA_AGGREGATE'


# Room in an inventory.

def int_param(name):
    """A named integer parameter of a statement built once."""
    return sa.bindparam(name, type_=sa.Integer)


def ids_param(name):
    """A named parameter holding a list of integer ids (expanding)."""
    return sa.bindparam(name, type_=sa.Integer, expanding=True)


def fits(inv, used, amount):
    """Condition: inventory row ``inv`` (the table or an alias) can take
    ``amount`` as one more allocation when ``used`` (an expression) is
    already allocated from it.

    The amount must fit in what is left of the capacity,
    ``(total - reserved) * allocation_ratio``, and be acceptable as one
    allocation (``min_unit``, ``max_unit``, ``step_size``).
    :func:`can_take` is the same rule on loaded values. ``amount`` may
    be an integer parameter (a statement built once).
    """
    if not isinstance(amount, sa.ColumnElement):
        amount = sa.literal(amount, sa.Integer)
    return sa.and_(
        used + amount <= capacity_of(inv),
        inv.c.min_unit <= amount,
        inv.c.max_unit >= amount,
        amount % inv.c.step_size == 0)


def capacity_of(inv):
    """Expression: the capacity of inventory row ``inv``,
    ``(total - reserved) * allocation_ratio`` (see :func:`capacity`)."""
    return (inv.c.total - inv.c.reserved) * inv.c.allocation_ratio


def whole_capacity_of(inv, dialect):
    """Expression: :func:`capacity` of inventory row ``inv`` computed by
    the database ``dialect`` (PostgreSQL or SQLite), the same integer:
    the product in double precision (``allocation_ratio`` is one there,
    as in Python), then truncated toward zero as ``int()`` does: on
    PostgreSQL by ``trunc()``, on SQLite by a cast to INTEGER (its
    ``trunc()`` exists only when built with its math functions). One
    integer column to read instead of three, one a float. Not on MySQL,
    whose ratio is a single-precision FLOAT: the product in SQL differs
    from the one of the value the driver reads."""
    if dialect == 'sqlite':
        return sa.cast(capacity_of(inv), sa.Integer)
    return sa.cast(sa.func.trunc(capacity_of(inv)), sa.BigInteger)


def over_capacity(inv, used):
    """Condition: ``used`` (an expression) exceeds the capacity of
    inventory row ``inv``: the provider can take no more of the class.
    An inventory may shrink below its usage (as upstream allows)."""
    return used > capacity_of(inv)


def room(inv, rc_id, amount):
    """Condition: inventory row ``inv`` is of class ``rc_id`` and can
    serve ``amount`` of it, its usage read by a sub-select correlated
    with the row (an index look-up per inventory: the form for a query
    that checks a few inventories, such as those of one tree)."""
    used = sa.select(sa.func.coalesce(sa.func.sum(ALLOC_TBL.c.used), 0)).where(
        ALLOC_TBL.c.resource_provider_id == inv.c.resource_provider_id,
        ALLOC_TBL.c.resource_class_id == rc_id).scalar_subquery()
    return sa.and_(
        inv.c.resource_class_id == rc_id,
        fits(inv, used, amount))


def with_capacity(rc_id, amount):
    """Sub-select: providers that can serve ``amount`` of class ``rc_id``
    (:func:`fits`), the usages of the class summed once for all
    providers (the form for a query over every inventory of a class).
    Either may be an integer parameter."""
    usage = sa.select(
        ALLOC_TBL.c.resource_provider_id,
        sa.func.sum(ALLOC_TBL.c.used).label('used'),
    ).where(ALLOC_TBL.c.resource_class_id == rc_id).group_by(
        ALLOC_TBL.c.resource_provider_id).subquery('usage')
    return sa.select(INV_TBL.c.resource_provider_id).select_from(
        INV_TBL.outerjoin(
            usage,
            usage.c.resource_provider_id == INV_TBL.c.resource_provider_id)
    ).where(
        INV_TBL.c.resource_class_id == rc_id,
        fits(INV_TBL, sa.func.coalesce(usage.c.used, 0), amount),
    )


def with_inventory(rc_id):
    """Sub-select: providers with an inventory of class ``rc_id``."""
    return sa.select(INV_TBL.c.resource_provider_id).where(
        INV_TBL.c.resource_class_id == rc_id)


def capacity(total, reserved, allocation_ratio):
    """What an inventory can hand out in all, as :func:`fits` counts it.

    Whole units: ``used + amount <= x`` for integers is
    ``used + amount <= int(x)``.
    """
    return int((total - reserved) * allocation_ratio)


def can_take(min_unit, max_unit, step_size, capacity, used, amount):
    """:func:`fits` on loaded values: an inventory of ``capacity`` (see
    :func:`capacity`) with ``used`` allocated can take ``amount``."""
    return (min_unit <= amount <= max_unit and
            amount % step_size == 0 and
            used + amount <= capacity)


# Traits.

def _ids(values):
    """``values`` sorted, or unchanged when they are an expanding
    parameter (a statement built once, its values given at execution)."""
    if isinstance(values, sa.BindParameter):
        return values
    return sorted(values)


def with_traits(ids):
    """Sub-select: providers with at least one of the trait ``ids`` (or
    of an expanding parameter)."""
    return sa.select(RP_TRAIT_TBL.c.resource_provider_id).where(
        RP_TRAIT_TBL.c.trait_id.in_(_ids(ids)))


def root_has_traits(trait_ids):
    """Condition: the provider of the outer ``RP_TBL`` row has one of
    ``trait_ids`` (an EXISTS correlated with it); ``trait_ids`` may be
    an expanding parameter (a statement built once)."""
    return sa.select(sa.literal(1)).where(
        RP_TRAIT_TBL.c.resource_provider_id == RP_TBL.c.id,
        RP_TRAIT_TBL.c.trait_id.in_(_ids(trait_ids))).exists()


def trait_ids(context, groups, wide):
    """``{name: id}`` of every trait a request names: in its groups
    (``RequestGroup``) and in ``root_required`` of ``wide``
    (``RequestWide``).

    :raises TraitNotFound: unknown traits, all of them named.
    """
    names = set(wide.root_required) | set(wide.root_forbidden)
    for group in groups:
        names |= group.trait_names()
    return resource_provider_trait.trait_ids(context, names)


# Sharing providers.

def sharing_trait_id(context):
    """The id of :data:`SHARES_TRAIT`, or None when it does not exist
    (then no provider is a sharing provider)."""
    try:
        return attribute_cache.trait_id(context, SHARES_TRAIT)
    except exception.TraitNotFound:
        return None


def sharing_providers(trait_id):
    """Sub-select: the sharing providers (``trait_id`` is
    :func:`sharing_trait_id`)."""
    return with_traits([trait_id])


# Aggregates.

def in_aggregates(uuids):
    """Sub-select: providers in at least one of the aggregates ``uuids``
    (or of an expanding parameter)."""
    return sa.select(RP_AGG_TBL.c.resource_provider_id).select_from(
        RP_AGG_TBL.join(AGG_TBL, AGG_TBL.c.id == RP_AGG_TBL.c.aggregate_id)
    ).where(AGG_TBL.c.uuid.in_(_ids(uuids)))


def aggregate_ids(context, uuids):
    """``{uuid: id}`` of the aggregates ``uuids`` that exist."""
    if not uuids:
        return {}
    return {row.uuid: row.id for row in db_api.connection(context).execute(
        sa.select(AGG_TBL.c.uuid, AGG_TBL.c.id).where(
            AGG_TBL.c.uuid.in_(sorted(uuids))))}


# The tree of ``in_tree``.

def in_tree_root(context, uuid):
    """The id of the root of the tree of provider ``uuid``, or None when
    no provider has that uuid (then nothing is in its tree)."""
    row = db_api.connection(context).execute(
        sa.select(RP_TBL.c.root_provider_id).where(
            RP_TBL.c.uuid == uuid)).first()
    return None if row is None else row.root_provider_id
