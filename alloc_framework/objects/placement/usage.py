"""Usages: sums of allocations per resource class.

Two views: per resource provider (``GET /resource_providers/{uuid}/usages``)
and per project and optionally user (``GET /usages``), the latter grouped
by consumer type from microversion 1.38. Besides, the providers whose
usage exceeds their capacity (:func:`over_capacity_providers`, and how
many they are: :func:`count_over_capacity_providers`).

Over capacity, cheaply. Claims are checked against capacity, so a
provider only goes over capacity of a class when its inventory of the
class is written below what is allocated from it (which upstream
Placement allows) or a reshape leaves it so. Every inventory writer
calls :func:`mark_over_capacity` for its provider in its transaction,
which keeps the ``over_capacity_marks`` rows of the provider's classes
over capacity at that moment; the readers re-check only the marked
pairs against their allocations, never grouping every allocation. A
claim does not touch the marks (no row written by every claim, which
would serialise them): a claim cannot push a pair over capacity, and
the usage that goes away with a deleted allocation is seen at read
time (a mark whose pair fits again counts nowhere, and goes at the next
inventory write of its provider). Allocation rows written by hand,
outside the service, are seen once their provider's inventory is next
written (the migration that made the marks marked every pair then).
"""

import collections

import sqlalchemy as sa

from alloc_framework.db import api as db_api
from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects.placement import attribute_cache
from alloc_framework.objects.placement import candidate_predicates as preds
from alloc_framework.objects.placement import consumer_type as ct_obj
from alloc_framework.objects.placement import exception

_ALLOC_TBL = models.Allocation.__table__
_CONSUMER_TBL = models.Consumer.__table__
_INV_TBL = models.Inventory.__table__
_MARK_TBL = models.OverCapacityMark.__table__
_PROJECT_TBL = models.Project.__table__
_RP_TBL = models.ResourceProvider.__table__
_TYPE_TBL = models.ConsumerType.__table__
_USER_TBL = models.User.__table__

OverCapacity = collections.namedtuple(
    'OverCapacity', ('provider_uuid', 'provider_name', 'resource_class',
                     'used', 'capacity'))


@db_api.reader
def get_all_by_resource_provider_uuid(context, rp_uuid):
    """Return ``(generation, {resource class: used})`` of one provider.

    Every resource class the provider has inventory of is listed, with 0
    when nothing is allocated.

    :raises: ResourceProviderNotFound
    """
    provider = context.session.execute(
        sa.select(_RP_TBL.c.id, _RP_TBL.c.generation)
        .where(_RP_TBL.c.uuid == rp_uuid)).first()
    if provider is None:
        raise exception.ResourceProviderNotFound(
            'No such resource provider %s.' % rp_uuid, uuids=[rp_uuid])
    used = (sa.select(sa.func.coalesce(sa.func.sum(_ALLOC_TBL.c.used), 0))
            .where(sa.and_(
                _ALLOC_TBL.c.resource_provider_id ==
                _INV_TBL.c.resource_provider_id,
                _ALLOC_TBL.c.resource_class_id ==
                _INV_TBL.c.resource_class_id))
            .scalar_subquery())
    rows = context.session.execute(
        sa.select(_INV_TBL.c.resource_class_id, used.label('used'))
        .where(_INV_TBL.c.resource_provider_id == provider.id))
    usages = {attribute_cache.rc_name(context, row.resource_class_id):
              int(row.used) for row in rows}
    return provider.generation, usages


def _owner_filter(query, project_id, user_id):
    query = query.where(_PROJECT_TBL.c.external_id == project_id)
    if user_id is not None:
        query = query.where(_USER_TBL.c.external_id == user_id)
    return query


def _owned_allocations(*columns):
    return sa.select(*columns).select_from(
        _ALLOC_TBL.join(
            _CONSUMER_TBL, _ALLOC_TBL.c.consumer_id == _CONSUMER_TBL.c.uuid
        ).join(
            _PROJECT_TBL, _CONSUMER_TBL.c.project_id == _PROJECT_TBL.c.id
        ).join(
            _USER_TBL, _CONSUMER_TBL.c.user_id == _USER_TBL.c.id
        ).outerjoin(
            _TYPE_TBL, _CONSUMER_TBL.c.consumer_type_id == _TYPE_TBL.c.id))


@db_api.reader
def get_all_by_project_user(context, project_id, user_id=None):
    """Return ``{resource class: used}`` of a project (and user)."""
    query = _owner_filter(_owned_allocations(
        _ALLOC_TBL.c.resource_class_id,
        sa.func.sum(_ALLOC_TBL.c.used).label('used')), project_id, user_id)
    rows = context.session.execute(
        query.group_by(_ALLOC_TBL.c.resource_class_id))
    return {attribute_cache.rc_name(context, row.resource_class_id):
            int(row.used) for row in rows}


@db_api.reader
def get_by_consumer_type(context, project_id, user_id=None,
                         consumer_type=None):
    """Return usages grouped by consumer type (microversion 1.38).

    :param consumer_type: None groups by every type (consumers without a
        type under ``unknown``); ``all`` folds everything under ``all``;
        ``unknown`` keeps only consumers without a type; any other name
        keeps only that type.
    :returns: ``{group: {resource class: used, 'consumer_count': n}}``
    """
    fold_all = consumer_type == ct_obj.ALL_CONSUMERS
    type_name = sa.func.coalesce(_TYPE_TBL.c.name,
                                 ct_obj.NULL_CONSUMER_TYPE_ALIAS)
    # Folding into "all" is done here rather than in SQL: PostgreSQL does
    # not group by a constant.
    group_cols = [] if fold_all else [type_name.label('grp')]
    base = _owner_filter(_owned_allocations(), project_id, user_id)
    if consumer_type == ct_obj.NULL_CONSUMER_TYPE_ALIAS:
        base = base.where(_CONSUMER_TBL.c.consumer_type_id.is_(None))
    elif consumer_type not in (None, ct_obj.ALL_CONSUMERS):
        base = base.where(_TYPE_TBL.c.name == consumer_type)
    group_by = [] if fold_all else [type_name]

    usage_rows = context.session.execute(
        base.add_columns(*group_cols, _ALLOC_TBL.c.resource_class_id,
                         sa.func.sum(_ALLOC_TBL.c.used).label('used'))
        .group_by(*group_by, _ALLOC_TBL.c.resource_class_id))
    # Consumers are counted apart from the sums: a consumer using several
    # resource classes must count once.
    count_query = base.add_columns(
        *group_cols,
        sa.func.count(sa.distinct(_CONSUMER_TBL.c.id)).label('n'))
    if group_by:
        count_query = count_query.group_by(*group_by)
    count_rows = context.session.execute(count_query)
    result = collections.defaultdict(dict)
    for row in usage_rows:
        grp = ct_obj.ALL_CONSUMERS if fold_all else row.grp
        rc_name = attribute_cache.rc_name(context, row.resource_class_id)
        result[grp][rc_name] = int(row.used)
    for row in count_rows:
        grp = ct_obj.ALL_CONSUMERS if fold_all else row.grp
        if int(row.n) or grp in result:
            result[grp]['consumer_count'] = int(row.n)
    return dict(result)


def _over_capacity_select(*columns, provider=True, rp_id=None,
                          with_class=False):
    """The rows (provider, class) whose usage exceeds the capacity.

    Only the marked pairs are summed (see the module docstring), or with
    ``rp_id`` every class allocated from that one provider. ``columns``
    are selected besides the class id and the usage (columns of the
    provider and inventory tables); with ``provider=False`` only the
    provider id (and the class id, ``with_class``) is selected, and the
    providers' table is not joined (the caller checks that the provider
    exists). A class the
    provider has no inventory of counts against a capacity of 0: see
    :func:`over_capacity_providers`.
    """
    if rp_id is None:
        # Each mark's usage summed by a sub-select correlated with it (an
        # index look-up per mark), so that every database starts from the
        # few marks: joined and grouped, SQLite scanned every allocation.
        used = sa.select(sa.func.sum(_ALLOC_TBL.c.used)).where(
            _ALLOC_TBL.c.resource_provider_id ==
            _MARK_TBL.c.resource_provider_id,
            _ALLOC_TBL.c.resource_class_id ==
            _MARK_TBL.c.resource_class_id).scalar_subquery()
        usage = sa.select(
            _MARK_TBL.c.resource_provider_id,
            _MARK_TBL.c.resource_class_id,
            used.label('used')).subquery('usage')
    else:
        usage = sa.select(
            _ALLOC_TBL.c.resource_provider_id,
            _ALLOC_TBL.c.resource_class_id,
            sa.func.sum(_ALLOC_TBL.c.used).label('used'),
        ).where(_ALLOC_TBL.c.resource_provider_id == rp_id).group_by(
            _ALLOC_TBL.c.resource_provider_id,
            _ALLOC_TBL.c.resource_class_id).subquery('usage')
    source = usage
    if provider:
        source = source.join(
            _RP_TBL, _RP_TBL.c.id == usage.c.resource_provider_id)
        selected = (usage.c.resource_class_id, usage.c.used) + columns
    else:
        selected = (usage.c.resource_provider_id,) + (
            (usage.c.resource_class_id,) if with_class else ())
    return (
        sa.select(*selected)
        .select_from(source.outerjoin(_INV_TBL, sa.and_(
            _INV_TBL.c.resource_provider_id == usage.c.resource_provider_id,
            _INV_TBL.c.resource_class_id == usage.c.resource_class_id)))
        .where(usage.c.used > 0, sa.or_(
            _INV_TBL.c.resource_provider_id.is_(None),
            preds.over_capacity(_INV_TBL, usage.c.used))))


@db_api.writer
def mark_over_capacity(context, rp_id):
    """Mark the classes of provider ``rp_id`` that are over capacity now,
    and only those (two statements).

    Called by every inventory writer of the provider, in its
    transaction, after the inventories are written and after the
    provider's generation was swapped (which holds off the claims on the
    provider until the commit). The rule is the readers' own, on the
    rows as stored, so that a pair they would count is always marked.
    """
    context.session.execute(_MARK_TBL.delete().where(
        _MARK_TBL.c.resource_provider_id == rp_id))
    context.session.execute(_MARK_TBL.insert().from_select(
        ['resource_provider_id', 'resource_class_id'],
        _over_capacity_select(provider=False, rp_id=rp_id,
                              with_class=True)))


@db_api.reader
def count_over_capacity_providers(context):
    """How many providers are over capacity in at least one class.

    The same rule as :func:`over_capacity_providers`, counted in SQL: one
    query and one row, whose cost follows the number of marked pairs (see
    the module docstring), not that of providers or allocations.
    """
    # The over-capacity rows are few (those of the marked pairs): driven
    # from them, each joins its provider by key. (A semi-join of every
    # provider against them, "id IN (...)", made SQLite scan every
    # provider.) A provider that is gone counts nowhere.
    rows = _over_capacity_select(
        _RP_TBL.c.id.label('rp_id')).subquery('over')
    return int(context.session.execute(
        sa.select(sa.func.count(sa.distinct(rows.c.rp_id)))).scalar())


@db_api.reader
def over_capacity_providers(context):
    """Every provider and class whose usage exceeds the capacity.

    An inventory may shrink below what is allocated from it (as upstream
    Placement allows, with a warning): the provider is then over capacity
    for the class and takes no new allocation of it until enough
    allocations go. A drift checker calls this to report such providers.
    Allocations of a class the provider has no inventory of at all (which
    the API refuses, so only damaged data has them) count against a
    capacity of 0.

    One query over the marked pairs (see the module docstring), whatever
    the number of providers and allocations.

    :returns: list of :class:`OverCapacity` tuples ``(provider_uuid,
        provider_name, resource_class, used, capacity)``, ordered by
        provider uuid then class name; ``capacity`` is
        ``int((total - reserved) * allocation_ratio)``. Empty when no
        provider is over capacity.
    """
    rows = context.session.execute(_over_capacity_select(
        _RP_TBL.c.uuid, _RP_TBL.c.name, _INV_TBL.c.total,
        _INV_TBL.c.reserved, _INV_TBL.c.allocation_ratio))
    result = []
    for row in rows:
        capacity = 0
        if row.total is not None:
            capacity = preds.capacity(row.total, row.reserved,
                                      row.allocation_ratio)
        result.append(OverCapacity(
            row.uuid, row.name,
            attribute_cache.rc_name(context, row.resource_class_id),
            int(row.used), capacity))
    return sorted(result, key=lambda r: (r.provider_uuid, r.resource_class))
