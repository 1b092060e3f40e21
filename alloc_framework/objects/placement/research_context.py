"""Searches for resource providers across providers, aggregates, traits,
inventories and allocations.

``get_all_by_filters`` answers ``GET /resource_providers``: each filter
narrows the set with one ``IN`` / ``NOT IN`` sub-select on the provider
id, so filters combine with a plain AND.
"""

import sqlalchemy as sa

from alloc_framework.db import api as db_api
from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects.placement import attribute_cache
from alloc_framework.objects.placement import resource_provider as rp_obj
from alloc_framework.objects.placement import resource_provider_trait

RP_TBL = models.ResourceProvider.__table__
INV_TBL = models.Inventory.__table__
ALLOC_TBL = models.Allocation.__table__
AGG_TBL = models.PlacementAggregate.__table__
RP_AGG_TBL = models.ResourceProviderAggregate.__table__
RP_TRAIT_TBL = models.ResourceProviderTrait.__table__


def _in_aggregates(uuids):
    """Sub-select: providers in at least one of the aggregates ``uuids``."""
    return sa.select(RP_AGG_TBL.c.resource_provider_id).select_from(
        RP_AGG_TBL.join(AGG_TBL, AGG_TBL.c.id == RP_AGG_TBL.c.aggregate_id)
    ).where(AGG_TBL.c.uuid.in_(sorted(uuids)))


def _with_traits(ids):
    """Sub-select: providers with at least one of the trait ``ids``."""
    return sa.select(RP_TRAIT_TBL.c.resource_provider_id).where(
        RP_TRAIT_TBL.c.trait_id.in_(sorted(ids)))


def _with_capacity(rc_id, amount):
    """Sub-select: providers that can serve ``amount`` of class ``rc_id``.

    The inventory must have room ((total - reserved) * allocation_ratio
    minus what is used) and accept ``amount`` as one allocation
    (min_unit, max_unit, step_size).
    """
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
        sa.func.coalesce(usage.c.used, 0) + amount <= (
            INV_TBL.c.total - INV_TBL.c.reserved) * INV_TBL.c.allocation_ratio,
        INV_TBL.c.min_unit <= amount,
        INV_TBL.c.max_unit >= amount,
        sa.literal(amount, sa.Integer) % INV_TBL.c.step_size == 0,
    )


@db_api.reader
def get_all_by_filters(context, name=None, uuid=None, member_of=None,
                       forbidden_aggs=None, resources=None, in_tree=None,
                       required_traits=None, forbidden_traits=None):
    """Providers matching every given filter, ordered by id.

    :param member_of: list of sets of aggregate uuids; the provider must be
        in at least one aggregate of each set.
    :param forbidden_aggs: aggregate uuids the provider must not be in.
    :param resources: ``{resource class name: amount}`` the provider must
        be able to serve.
    :param in_tree: a provider uuid; only providers of its tree (none when
        it does not exist).
    :param required_traits: list of sets of trait names; the provider must
        have at least one trait of each set.
    :param forbidden_traits: trait names the provider must not have.
    :raises ResourceClassNotFound: unknown class in ``resources``.
    :raises TraitNotFound: unknown trait (all of them named).
    """
    query = rp_obj.provider_select()
    if name is not None:
        query = query.where(RP_TBL.c.name == name)
    if uuid is not None:
        query = query.where(RP_TBL.c.uuid == uuid)
    if in_tree is not None:
        tree = context.session.execute(
            sa.select(RP_TBL.c.root_provider_id)
            .where(RP_TBL.c.uuid == in_tree)).first()
        if tree is None:
            return []
        query = query.where(RP_TBL.c.root_provider_id == tree[0])
    for uuids in member_of or ():
        query = query.where(RP_TBL.c.id.in_(_in_aggregates(uuids)))
    if forbidden_aggs:
        query = query.where(RP_TBL.c.id.not_in(
            _in_aggregates(forbidden_aggs)))
    if required_traits or forbidden_traits:
        names = set(forbidden_traits or ())
        for any_of in required_traits or ():
            names |= set(any_of)
        ids = resource_provider_trait.trait_ids(context, names)
        for any_of in required_traits or ():
            query = query.where(RP_TBL.c.id.in_(
                _with_traits(ids[n] for n in any_of)))
        if forbidden_traits:
            query = query.where(RP_TBL.c.id.not_in(
                _with_traits(ids[n] for n in forbidden_traits)))
    for rc_name, amount in sorted((resources or {}).items()):
        rc_id = attribute_cache.rc_id(context, rc_name)
        query = query.where(RP_TBL.c.id.in_(_with_capacity(rc_id, amount)))
    rows = context.session.execute(query.order_by(RP_TBL.c.id)).all()
    return [rp_obj.from_row(row) for row in rows]
