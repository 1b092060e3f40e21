"""What the dashboard reads from the bare metal tables, page by page.

Lists of node allocations, deferred actions and conductors, and the
trouble lists that join the bare metal tables with Placement's (they are
in one database when this process reaches both; see
``api/dashboard``). Every function is one ``@snapshot_reader``
transaction, which takes no lock (on SQLite either): SQL aggregates and
pages (keyset on the id: ``after`` is the last id of the previous
page).
"""

import collections
import datetime

import sqlalchemy as sa

from alloc_framework.db import api as db_api
from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects.baremetal import allocation as alloc_obj
from alloc_framework.objects.baremetal import base
from alloc_framework.objects.placement import attribute_cache
from alloc_framework.objects.placement import dashboard_queries as rp_research
from alloc_framework.objects.placement import exception as rp_exc

NODES = models.Node.__table__
ALLOCATIONS = models.NodeAllocation.__table__
ACTIONS = models.DeferredAction.__table__
CONDUCTORS = models.Conductor.__table__
RP_TBL = models.ResourceProvider.__table__
INV_TBL = models.Inventory.__table__
ALLOC_TBL = models.Allocation.__table__
RP_TRAIT_TBL = models.ResourceProviderTrait.__table__
TRAIT_TBL = models.Trait.__table__
RP_AGG_TBL = models.ResourceProviderAggregate.__table__
AGG_TBL = models.PlacementAggregate.__table__

Page = rp_research.Page

AllocationRow = collections.namedtuple(
    'AllocationRow', ('id', 'uuid', 'name', 'state', 'resource_class',
                      'node_uuid', 'owner', 'last_error', 'created_at',
                      'updated_at'))

ActionRow = collections.namedtuple(
    'ActionRow', ('id', 'uuid', 'node_uuid', 'state', 'call',
                  'reschedule_count', 'retry_remaining', 'result',
                  'created_at', 'updated_at'))


def _page(rows, limit):
    if len(rows) > limit:
        rows = rows[:limit]
        return Page(rows, rows[-1].id)
    return Page(rows, None)


@db_api.snapshot_reader
def has_baremetal(context):
    """Whether any node or conductor is in this database."""
    for table in (CONDUCTORS, NODES):
        if context.session.execute(
                sa.select(table.c.id).limit(1)).first() is not None:
            return True
    return False


def _stuck_since(stuck_after):
    return base.utcnow() - datetime.timedelta(seconds=stuck_after)


@db_api.snapshot_reader
def list_allocations(context, limit, after=None, state=None,
                     stuck_after=None):
    """A page of node allocations, oldest first, with their node's uuid.

    :param stuck_after: only allocations in ``allocating`` not updated
        for that many seconds.
    """
    query = (sa.select(ALLOCATIONS.c.id, ALLOCATIONS.c.uuid,
                       ALLOCATIONS.c.name, ALLOCATIONS.c.state,
                       ALLOCATIONS.c.resource_class,
                       NODES.c.uuid.label('node_uuid'), ALLOCATIONS.c.owner,
                       ALLOCATIONS.c.last_error, ALLOCATIONS.c.created_at,
                       ALLOCATIONS.c.updated_at)
             .select_from(ALLOCATIONS.outerjoin(
                 NODES, NODES.c.id == ALLOCATIONS.c.node_id)))
    if state is not None:
        query = query.where(ALLOCATIONS.c.state == state)
    if stuck_after is not None:
        since = _stuck_since(stuck_after)
        query = query.where(
            ALLOCATIONS.c.state == alloc_obj.ALLOCATING,
            sa.func.coalesce(ALLOCATIONS.c.updated_at,
                             ALLOCATIONS.c.created_at) < since)
    if after is not None:
        query = query.where(ALLOCATIONS.c.id > after)
    rows = context.session.execute(
        query.order_by(ALLOCATIONS.c.id).limit(limit + 1)).all()
    return _page([AllocationRow(*row) for row in rows], limit)


@db_api.snapshot_reader
def count_stuck_allocations(context, stuck_after):
    """How many allocations are in ``allocating`` for too long."""
    return context.session.execute(
        sa.select(sa.func.count()).select_from(ALLOCATIONS).where(
            ALLOCATIONS.c.state == alloc_obj.ALLOCATING,
            sa.func.coalesce(ALLOCATIONS.c.updated_at,
                             ALLOCATIONS.c.created_at)
            < _stuck_since(stuck_after))).scalar()


@db_api.snapshot_reader
def count_maintenance_nodes(context):
    """How many nodes are in maintenance."""
    return context.session.execute(
        sa.select(sa.func.count()).select_from(NODES).where(
            NODES.c.maintenance.is_(True))).scalar()


NodeRow = collections.namedtuple(
    'NodeRow', ('id', 'uuid', 'name', 'provision_state', 'resource_class',
                'maintenance_reason', 'updated_at'))


@db_api.snapshot_reader
def list_maintenance_nodes(context, limit, after=None):
    """A page of the nodes in maintenance, by id."""
    query = (sa.select(NODES.c.id, NODES.c.uuid, NODES.c.name,
                       NODES.c.provision_state, NODES.c.resource_class,
                       NODES.c.maintenance_reason, NODES.c.updated_at)
             .where(NODES.c.maintenance.is_(True)))
    if after is not None:
        query = query.where(NODES.c.id > after)
    rows = context.session.execute(
        query.order_by(NODES.c.id).limit(limit + 1)).all()
    return _page([NodeRow(*row) for row in rows], limit)


@db_api.snapshot_reader
def list_actions(context, limit, after=None, state=None):
    """A page of the deferred actions not deleted, by id."""
    query = (sa.select(ACTIONS.c.id, ACTIONS.c.uuid,
                       NODES.c.uuid.label('node_uuid'), ACTIONS.c.state,
                       ACTIONS.c.call, ACTIONS.c.reschedule_count,
                       ACTIONS.c.retry_remaining, ACTIONS.c.result,
                       ACTIONS.c.created_at, ACTIONS.c.updated_at)
             .select_from(ACTIONS.outerjoin(
                 NODES, NODES.c.id == ACTIONS.c.node_id))
             .where(ACTIONS.c.deleted_at.is_(None)))
    if state is not None:
        query = query.where(ACTIONS.c.state == state)
    if after is not None:
        query = query.where(ACTIONS.c.id > after)
    rows = context.session.execute(
        query.order_by(ACTIONS.c.id).limit(limit + 1)).all()
    return _page([ActionRow(*row) for row in rows], limit)


ConsumerTrouble = collections.namedtuple(
    'ConsumerTrouble', ('consumer', 'provider_uuid', 'provider_name',
                        'node_gone'))


def _node_provider_ids(context, node_trait):
    try:
        trait_id = attribute_cache.trait_id(context, node_trait)
    except rp_exc.TraitNotFound:
        return None
    return sa.select(RP_TRAIT_TBL.c.resource_provider_id).where(
        RP_TRAIT_TBL.c.trait_id == trait_id)


def _foreign_claims(context, node_trait):
    """The SELECT of :func:`foreign_claims`, or None when no provider can
    be a node's (the trait does not exist)."""
    providers = _node_provider_ids(context, node_trait)
    if providers is None:
        return None
    ours = sa.select(ALLOCATIONS.c.uuid).where(
        ALLOCATIONS.c.node_id == NODES.c.id)
    node_gone = NODES.c.id.is_(None)
    return (sa.select(ALLOC_TBL.c.consumer_id, RP_TBL.c.uuid, RP_TBL.c.name,
                      node_gone.label('node_gone')).distinct()
            .select_from(ALLOC_TBL.join(
                RP_TBL, RP_TBL.c.id == ALLOC_TBL.c.resource_provider_id
            ).outerjoin(NODES, NODES.c.uuid == RP_TBL.c.uuid))
            .where(ALLOC_TBL.c.resource_provider_id.in_(providers),
                   sa.or_(node_gone,
                          ALLOC_TBL.c.consumer_id.not_in(ours))))


def _count(context, query):
    if query is None:
        return 0
    return context.session.execute(
        sa.select(sa.func.count()).select_from(query.subquery())).scalar()


@db_api.snapshot_reader
def count_foreign_claims(context, node_trait):
    """How many rows :func:`foreign_claims` lists in all."""
    return _count(context, _foreign_claims(context, node_trait))


@db_api.snapshot_reader
def foreign_claims(context, node_trait, limit, after=None):
    """A page of the Placement allocations on node providers that no node
    allocation of ours stands behind, or whose node is gone.

    :param node_trait: the trait marking the providers of nodes (the
        ``placement`` backend's).
    :param after: the ``consumer/provider`` key of the last row.
    :returns: a :class:`Page` of :class:`ConsumerTrouble`, ordered by
        consumer then provider uuid.
    """
    query = _foreign_claims(context, node_trait)
    if query is None:
        return Page([], None)
    if after is not None:
        consumer, _sep, provider = after.partition('/')
        query = query.where(sa.or_(
            ALLOC_TBL.c.consumer_id > consumer,
            sa.and_(ALLOC_TBL.c.consumer_id == consumer,
                    RP_TBL.c.uuid > provider)))
    rows = context.session.execute(
        query.order_by(ALLOC_TBL.c.consumer_id, RP_TBL.c.uuid)
        .limit(limit + 1)).all()
    rows = [ConsumerTrouble(r[0], r[1], r[2], bool(r[3])) for r in rows]
    if len(rows) > limit:
        rows = rows[:limit]
        return Page(rows, '%s/%s' % (rows[-1].consumer,
                                     rows[-1].provider_uuid))
    return Page(rows, None)


def _provider(row):
    """The dict of a provider row (see :func:`node_provider_trees`)."""
    return {'uuid': row.uuid, 'name': row.name,
            'generation': row.generation,
            'parent_provider_uuid': row.parent_uuid,
            'inventories': {}, 'traits': [], 'aggregates': []}


def _inventory(context, by_id, row):
    """Add an inventory row to its provider of ``by_id``."""
    by_id[row.resource_provider_id]['inventories'][
        attribute_cache.rc_name(context, row.resource_class_id)] = {
            'total': row.total, 'reserved': row.reserved,
            'min_unit': row.min_unit, 'max_unit': row.max_unit,
            'step_size': row.step_size,
            'allocation_ratio': row.allocation_ratio}


_PARENT = RP_TBL.alias('parent')
_PROVIDER_COLUMNS = (RP_TBL.c.id, RP_TBL.c.uuid, RP_TBL.c.name,
                     RP_TBL.c.generation, RP_TBL.c.root_provider_id,
                     _PARENT.c.uuid.label('parent_uuid'))


@db_api.snapshot_reader
def node_provider_trees(context, node_uuids, node_trait):
    """The provider trees of nodes as the database has them, in bulk.

    A node's tree is the one of the provider of the node's UUID that has
    ``node_trait`` (the ``placement`` backend's marker), as ``GET
    /resource_providers?in_tree=`` and each provider's inventories, traits
    and aggregates give it over the API. Five statements, whatever the
    number of nodes and providers.

    :param node_uuids: the UUIDs of the nodes (one page of them).
    :returns: ``{node uuid: [provider]}`` for the nodes that have such a
        provider, each provider a dict with ``uuid``, ``name``,
        ``generation``, ``parent_provider_uuid``, ``inventories``
        (``{class: record}`` as ``GET .../inventories`` shows them),
        ``traits`` and ``aggregates`` (lists).
    """
    providers = _node_provider_ids(context, node_trait)
    if providers is None or not node_uuids:
        return {}
    roots = dict(context.session.execute(
        sa.select(RP_TBL.c.root_provider_id, RP_TBL.c.uuid).where(
            RP_TBL.c.uuid.in_(sorted(node_uuids)),
            RP_TBL.c.id.in_(providers))).all())
    if not roots:
        return {}
    rows = context.session.execute(
        sa.select(*_PROVIDER_COLUMNS)
        .select_from(RP_TBL.outerjoin(
            _PARENT, _PARENT.c.id == RP_TBL.c.parent_provider_id))
        .where(RP_TBL.c.root_provider_id.in_(sorted(roots)))
        .order_by(RP_TBL.c.id)).all()
    by_id = {}
    trees = collections.defaultdict(list)
    for row in rows:
        by_id[row.id] = provider = _provider(row)
        trees[roots[row.root_provider_id]].append(provider)
    ids = sorted(by_id)
    for row in context.session.execute(
            sa.select(INV_TBL).where(
                INV_TBL.c.resource_provider_id.in_(ids))):
        _inventory(context, by_id, row)
    for rp_id, name in context.session.execute(
            sa.select(RP_TRAIT_TBL.c.resource_provider_id, TRAIT_TBL.c.name)
            .join(TRAIT_TBL, TRAIT_TBL.c.id == RP_TRAIT_TBL.c.trait_id)
            .where(RP_TRAIT_TBL.c.resource_provider_id.in_(ids))):
        by_id[rp_id]['traits'].append(name)
    for rp_id, uuid in context.session.execute(
            sa.select(RP_AGG_TBL.c.resource_provider_id, AGG_TBL.c.uuid)
            .join(AGG_TBL, AGG_TBL.c.id == RP_AGG_TBL.c.aggregate_id)
            .where(RP_AGG_TBL.c.resource_provider_id.in_(ids))):
        by_id[rp_id]['aggregates'].append(uuid)
    return dict(trees)


# The statements of node_provider_state, built once: each finds the
# providers of the node's tree through its root, the provider of
# :node_uuid (the marker trait :node_trait checked by the first).
_ROOT = RP_TBL.alias('root')
_WITH_ROOT = RP_TBL.join(_ROOT, _ROOT.c.id == RP_TBL.c.root_provider_id)
_IN_NODE_TREE = _ROOT.c.uuid == sa.bindparam('node_uuid')
_NODE_TREE = (
    sa.select(*_PROVIDER_COLUMNS)
    .select_from(_WITH_ROOT.outerjoin(
        _PARENT, _PARENT.c.id == RP_TBL.c.parent_provider_id))
    .where(_IN_NODE_TREE,
           sa.exists().where(
               RP_TRAIT_TBL.c.resource_provider_id == _ROOT.c.id,
               RP_TRAIT_TBL.c.trait_id == TRAIT_TBL.c.id,
               TRAIT_TBL.c.name == sa.bindparam('node_trait')))
    .order_by(RP_TBL.c.id))
_NODE_TREE_INVENTORIES = (
    sa.select(INV_TBL)
    .select_from(INV_TBL.join(
        _WITH_ROOT, RP_TBL.c.id == INV_TBL.c.resource_provider_id))
    .where(_IN_NODE_TREE))


def _node_tree_tags(link, link_column, tags, tag_column, kind):
    """``(provider id, kind, tag)`` of the tree's providers: their traits
    or their aggregates (``link`` joins the providers to ``tags``)."""
    return (sa.select(link.c.resource_provider_id,
                      sa.literal(kind).label('kind'),
                      tag_column.label('tag'))
            .select_from(link.join(tags, tags.c.id == link_column).join(
                _WITH_ROOT,
                RP_TBL.c.id == link.c.resource_provider_id))
            .where(_IN_NODE_TREE))


# Traits ('t') and aggregates ('a') in one statement.
_NODE_TREE_TAGS = sa.union_all(
    _node_tree_tags(RP_TRAIT_TBL, RP_TRAIT_TBL.c.trait_id, TRAIT_TBL,
                    TRAIT_TBL.c.name, 't'),
    _node_tree_tags(RP_AGG_TBL, RP_AGG_TBL.c.aggregate_id, AGG_TBL,
                    AGG_TBL.c.uuid, 'a'))
# Consumers with allocations on the provider of :node_uuid that are not
# allocations of the node of id :node_id.
_STRAY_CONSUMERS = (
    sa.select(ALLOC_TBL.c.consumer_id).distinct()
    .select_from(ALLOC_TBL.join(
        RP_TBL, RP_TBL.c.id == ALLOC_TBL.c.resource_provider_id))
    .where(RP_TBL.c.uuid == sa.bindparam('node_uuid'),
           ALLOC_TBL.c.consumer_id.not_in(
               sa.select(ALLOCATIONS.c.uuid).where(
                   ALLOCATIONS.c.node_id == sa.bindparam('node_id'))))
    .order_by(ALLOC_TBL.c.consumer_id))


@db_api.snapshot_connection_reader
def node_provider_state(context, node_uuid, node_id, node_trait):
    """A node's tree and the stray claims on its provider, in one snapshot.

    What a sync of the node's providers reads over Placement's API (the
    ``placement`` backend's ``sync_node``), read from the database: the
    node's tree as :func:`node_provider_trees` gives it, and the
    consumers holding allocations on the node's provider (``GET
    /resource_providers/{uuid}/allocations``) that are not allocations
    of the node. Four statements, built once.

    :param node_id: the node's id, whose allocations are not stray.
    :returns: ``(providers, consumers)``: the node's providers (None when
        it has none) and the sorted UUIDs of those consumers.
    """
    conn = context.connection
    params = {'node_uuid': node_uuid}
    rows = conn.execute(_NODE_TREE, dict(params, node_trait=node_trait))
    by_id = {row.id: _provider(row) for row in rows}
    if not by_id:
        return None, []
    for row in conn.execute(_NODE_TREE_INVENTORIES, params):
        _inventory(context, by_id, row)
    for rp_id, kind, tag in conn.execute(_NODE_TREE_TAGS, params):
        by_id[rp_id]['traits' if kind == 't' else 'aggregates'].append(tag)
    consumers = conn.execute(_STRAY_CONSUMERS, dict(
        params, node_id=node_id)).scalars().all()
    return list(by_id.values()), consumers
