"""What the dashboard reads from Placement's tables, page by page.

Every function is one ``@snapshot_reader`` transaction of a few
statements, which takes no lock (on SQLite either): they aggregate in
SQL, and the lists come one page at a time (keyset paging: ``after`` is
the last key of the previous page, and one row more than asked tells
whether another page follows). The filters are the predicates of
``candidate_predicates``, as the API's listings use.
"""

import collections

import sqlalchemy as sa

from alloc_framework.db import api as db_api
from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects.placement import attribute_cache
from alloc_framework.objects.placement import candidate_predicates as preds
from alloc_framework.objects.placement import exception

RP_TBL = models.ResourceProvider.__table__
INV_TBL = models.Inventory.__table__
ALLOC_TBL = models.Allocation.__table__
RP_TRAIT_TBL = models.ResourceProviderTrait.__table__
TRAIT_TBL = models.Trait.__table__
RP_AGG_TBL = models.ResourceProviderAggregate.__table__
AGG_TBL = models.PlacementAggregate.__table__
CONSUMER_TBL = models.Consumer.__table__
PROJECT_TBL = models.Project.__table__
USER_TBL = models.User.__table__

# A tree larger than this is shown in part (the page says so).
MAX_TREE = 500

Page = collections.namedtuple('Page', ('rows', 'next'))
"""One page of a list: its rows and the key to ask the next page after
(None on the last page)."""

ProviderRow = collections.namedtuple(
    'ProviderRow', ('id', 'uuid', 'name', 'parent_uuid', 'root_uuid'))

Inventory = collections.namedtuple(
    'Inventory', ('resource_class', 'total', 'reserved', 'allocation_ratio',
                  'min_unit', 'max_unit', 'step_size', 'capacity', 'used'))


class ProviderDetail:
    """A provider of a tree with what it offers: plain data."""

    def __init__(self, row):
        self.id = row.id
        self.uuid = row.uuid
        self.name = row.name
        self.parent_id = row.parent_provider_id
        self.root_id = row.root_provider_id
        self.inventories = []
        self.traits = []
        self.aggregates = []
        self.children = []
        self.sharing = False


def _page(rows, limit, key):
    if len(rows) > limit:
        rows = rows[:limit]
        return Page(rows, key(rows[-1]))
    return Page(rows, None)


def _like(text):
    escaped = (text.replace('\\', '\\\\').replace('%', '\\%')
               .replace('_', '\\_'))
    return '%' + escaped + '%'


@db_api.snapshot_reader
def search_providers(context, limit, after=None, name=None, uuid=None,
                     trait=None, aggregate=None, resource_class=None):
    """A page of the providers matching every given filter, by id.

    :param name: a part of the name (case as stored).
    :param uuid: the provider's uuid.
    :param trait: a trait name the provider has.
    :param aggregate: an aggregate uuid the provider is in.
    :param resource_class: a class the provider has inventory of.
    :param after: the id the page starts after.
    :returns: a :class:`Page` of :class:`ProviderRow`.
    :raises TraitNotFound: unknown trait.
    :raises ResourceClassNotFound: unknown class.
    """
    parent = RP_TBL.alias('parent')
    root = RP_TBL.alias('root')
    query = sa.select(
        RP_TBL.c.id, RP_TBL.c.uuid, RP_TBL.c.name,
        parent.c.uuid.label('parent_uuid'), root.c.uuid.label('root_uuid'),
    ).select_from(
        RP_TBL.outerjoin(parent, RP_TBL.c.parent_provider_id == parent.c.id)
        .outerjoin(root, RP_TBL.c.root_provider_id == root.c.id))
    if name:
        query = query.where(RP_TBL.c.name.like(_like(name), escape='\\'))
    if uuid:
        query = query.where(RP_TBL.c.uuid == uuid)
    if trait:
        query = query.where(RP_TBL.c.id.in_(preds.with_traits(
            [attribute_cache.trait_id(context, trait)])))
    if aggregate:
        query = query.where(RP_TBL.c.id.in_(preds.in_aggregates(
            [aggregate])))
    if resource_class:
        query = query.where(RP_TBL.c.id.in_(preds.with_inventory(
            attribute_cache.rc_id(context, resource_class))))
    if after is not None:
        query = query.where(RP_TBL.c.id > after)
    rows = context.session.execute(
        query.order_by(RP_TBL.c.id).limit(limit + 1)).all()
    return _page([ProviderRow(*row) for row in rows], limit,
                 lambda row: row.id)


def _usage():
    return sa.select(
        ALLOC_TBL.c.resource_provider_id, ALLOC_TBL.c.resource_class_id,
        sa.func.sum(ALLOC_TBL.c.used).label('used'),
    ).group_by(ALLOC_TBL.c.resource_provider_id,
               ALLOC_TBL.c.resource_class_id)


def _details(context, provider_filter):
    """``{id: ProviderDetail}`` of the providers ``provider_filter``
    (a condition on ``RP_TBL``) keeps, at most MAX_TREE + 1 of them."""
    rows = context.session.execute(
        sa.select(RP_TBL.c.id, RP_TBL.c.uuid, RP_TBL.c.name,
                  RP_TBL.c.parent_provider_id, RP_TBL.c.root_provider_id)
        .where(provider_filter).order_by(RP_TBL.c.id)
        .limit(MAX_TREE + 1)).all()
    providers = {row.id: ProviderDetail(row) for row in rows}
    if not providers:
        return providers
    ids = sorted(providers)
    usage = _usage().where(
        ALLOC_TBL.c.resource_provider_id.in_(ids)).subquery('usage')
    inventories = context.session.execute(
        sa.select(INV_TBL, sa.func.coalesce(usage.c.used, 0).label('used'))
        .select_from(INV_TBL.outerjoin(usage, sa.and_(
            usage.c.resource_provider_id == INV_TBL.c.resource_provider_id,
            usage.c.resource_class_id == INV_TBL.c.resource_class_id)))
        .where(INV_TBL.c.resource_provider_id.in_(ids)))
    for row in inventories:
        providers[row.resource_provider_id].inventories.append(Inventory(
            attribute_cache.rc_name(context, row.resource_class_id),
            row.total, row.reserved, row.allocation_ratio, row.min_unit,
            row.max_unit, row.step_size,
            preds.capacity(row.total, row.reserved, row.allocation_ratio),
            int(row.used)))
    traits = context.session.execute(
        sa.select(RP_TRAIT_TBL.c.resource_provider_id, TRAIT_TBL.c.name)
        .join(TRAIT_TBL, TRAIT_TBL.c.id == RP_TRAIT_TBL.c.trait_id)
        .where(RP_TRAIT_TBL.c.resource_provider_id.in_(ids)))
    for row in traits:
        providers[row.resource_provider_id].traits.append(row.name)
        if row.name == preds.SHARES_TRAIT:
            providers[row.resource_provider_id].sharing = True
    aggregates = context.session.execute(
        sa.select(RP_AGG_TBL.c.resource_provider_id, AGG_TBL.c.uuid)
        .join(AGG_TBL, AGG_TBL.c.id == RP_AGG_TBL.c.aggregate_id)
        .where(RP_AGG_TBL.c.resource_provider_id.in_(ids)))
    for row in aggregates:
        providers[row.resource_provider_id].aggregates.append(row.uuid)
    for provider in providers.values():
        provider.inventories.sort(key=lambda inv: inv.resource_class)
        provider.traits.sort()
        provider.aggregates.sort()
    return providers


@db_api.snapshot_reader
def provider_tree(context, uuid):
    """The whole tree of provider ``uuid`` and the sharing providers it
    reaches, with inventories, usage, traits and aggregates.

    :returns: ``(roots, sharing, truncated)``: the root
        :class:`ProviderDetail` (``children`` filled, in id order), the
        sharing providers (outside the tree) in an aggregate of a
        provider of the tree, and whether the tree has more than
        :data:`MAX_TREE` providers (then only the first are shown).
    :raises ResourceProviderNotFound: no provider ``uuid``.
    """
    root_id = preds.in_tree_root(context, uuid)
    if root_id is None:
        raise exception.ResourceProviderNotFound(
            'No such resource provider %s.' % uuid, uuids=[uuid])
    tree = _details(context, RP_TBL.c.root_provider_id == root_id)
    truncated = len(tree) > MAX_TREE
    if truncated:
        tree.pop(max(tree))
    roots = []
    for provider in tree.values():
        parent = tree.get(provider.parent_id)
        if parent is None:
            roots.append(provider)
        else:
            parent.children.append(provider)
    sharing = []
    reached = _sharing_reached(context, root_id, sorted(tree))
    if reached is not None:
        sharing = list(_details(context, RP_TBL.c.id.in_(
            reached)).values())[:MAX_TREE]
    return roots, sharing, truncated


def _sharing_reached(context, root_id, tree_ids):
    """The SELECT of the ids of the sharing providers outside the tree of
    ``root_id`` that share an aggregate with one of ``tree_ids`` (a list
    or a SELECT of provider ids), or None when no provider shares."""
    trait_id = preds.sharing_trait_id(context)
    if trait_id is None:
        return None
    # Aliases: no table here is correlated with the enclosing query's.
    shared = RP_TBL.alias('shared')
    tree_agg = RP_AGG_TBL.alias('tree_agg')
    shared_agg = RP_AGG_TBL.alias('shared_agg')
    return sa.select(shared.c.id).select_from(shared.join(
        shared_agg, shared_agg.c.resource_provider_id == shared.c.id
    )).where(
        shared_agg.c.aggregate_id.in_(
            sa.select(tree_agg.c.aggregate_id).where(
                tree_agg.c.resource_provider_id.in_(tree_ids))),
        shared.c.id.in_(preds.sharing_providers(trait_id)),
        shared.c.root_provider_id != root_id)


Consumer = collections.namedtuple(
    'Consumer', ('uuid', 'project', 'user', 'resources'))


@db_api.snapshot_reader
def tree_consumers(context, uuid, limit, after=None):
    """A page of the consumers of the tree of provider ``uuid``, by uuid.

    A consumer is one with an allocation on a provider of the tree; its
    amounts are those on the tree and on the sharing providers the tree
    reaches (the ``DISK_GB`` of shared storage, say), as
    :func:`provider_tree` shows them.

    :returns: a :class:`Page` of :class:`Consumer`, ``resources`` being
        ``[(provider uuid, resource class, used)]``.
    """
    root_id = preds.in_tree_root(context, uuid)
    if root_id is None:
        return Page([], None)
    member = RP_TBL.alias('member')
    in_tree = sa.select(member.c.id).where(
        member.c.root_provider_id == root_id)
    page = (sa.select(ALLOC_TBL.c.consumer_id).distinct()
            .where(ALLOC_TBL.c.resource_provider_id.in_(in_tree)))
    if after is not None:
        page = page.where(ALLOC_TBL.c.consumer_id > after)
    uuids = context.session.execute(
        page.order_by(ALLOC_TBL.c.consumer_id).limit(limit + 1)).scalars()
    uuids = list(uuids)
    more = len(uuids) > limit
    uuids = uuids[:limit]
    if not uuids:
        return Page([], None)
    shown = ALLOC_TBL.c.resource_provider_id.in_(in_tree)
    reached = _sharing_reached(context, root_id, in_tree)
    if reached is not None:
        shown = sa.or_(shown, ALLOC_TBL.c.resource_provider_id.in_(reached))
    rows = context.session.execute(
        sa.select(ALLOC_TBL.c.consumer_id, RP_TBL.c.uuid.label('rp_uuid'),
                  ALLOC_TBL.c.resource_class_id, ALLOC_TBL.c.used,
                  PROJECT_TBL.c.external_id.label('project'),
                  USER_TBL.c.external_id.label('user'))
        .select_from(ALLOC_TBL.join(
            RP_TBL, RP_TBL.c.id == ALLOC_TBL.c.resource_provider_id
        ).outerjoin(
            CONSUMER_TBL, CONSUMER_TBL.c.uuid == ALLOC_TBL.c.consumer_id
        ).outerjoin(
            PROJECT_TBL, PROJECT_TBL.c.id == CONSUMER_TBL.c.project_id
        ).outerjoin(USER_TBL, USER_TBL.c.id == CONSUMER_TBL.c.user_id))
        .where(ALLOC_TBL.c.consumer_id.in_(uuids), shown)
        .order_by(ALLOC_TBL.c.consumer_id, RP_TBL.c.uuid))
    consumers = {}
    for row in rows:
        consumer = consumers.get(row.consumer_id)
        if consumer is None:
            consumer = consumers[row.consumer_id] = Consumer(
                row.consumer_id, row.project, row.user, [])
        consumer.resources.append(
            (row.rp_uuid, attribute_cache.rc_name(
                context, row.resource_class_id), int(row.used)))
    result = [consumers[u] for u in uuids if u in consumers]
    return Page(result, uuids[-1] if more else None)


@db_api.snapshot_reader
def provider_names(context, uuids):
    """``{uuid: name}`` of the providers ``uuids`` that exist."""
    if not uuids:
        return {}
    return dict(context.session.execute(
        sa.select(RP_TBL.c.uuid, RP_TBL.c.name)
        .where(RP_TBL.c.uuid.in_(sorted(uuids)))).all())
