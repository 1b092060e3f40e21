"""Allocation candidates: where a set of resource requests can be served.

``get_candidates`` answers ``GET /allocation_candidates``. The work is
done one provider tree at a time:

1. A query of root provider ids looks at one window of ids at a time and
   keeps the roots whose tree (or a sharing provider associated with it
   by aggregate) has room for every requested class, each condition a
   sub-select correlated with the root; it returns at most a chunk of
   roots, sized after ``limit``, and a window that yields too few roots
   makes the next one wider. When a requested class has few inventories
   able to take the amount, the roots looked at are instead the next
   trees having one (``_driver``), in the same order. Without a limit
   nor a driving class, the query leaves the room of each class out:
   every tree is read anyway, and step 3 drops those without room.
2. For a chunk, the providers of those trees are read with their
   inventories and usages (one query), traits and aggregates (a second
   one). What the search needs of the sharing providers (their roots,
   aggregates, and room for each amount asked) is read once per request
   (``_Sharing``, one query): those anchored to the trees of a chunk are
   found from it in memory, never by reading the members of the trees'
   aggregates, and only their trees are read besides.
3. Candidates of each tree are generated lazily, depth first, dropping a
   partial choice as soon as it no longer fits, and the search stops as
   soon as ``limit`` candidates, or the configured cap, are reached.

So the work of a query grows with ``limit`` (and the size of the trees
looked at), not with the number of providers that could match, and the
memory it holds is bounded by the chunk and the candidates it returns.

What room, a sharing provider, the tree of ``in_tree`` and the traits of
a request mean is decided by ``candidate_predicates``, which the
explanation of a search (``candidate_explanation``) uses too; this
module decides only how to look.
"""

import collections
import functools
import itertools
import json
import operator
import random
import threading
import time

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql
from sqlalchemy.ext import compiler as sa_compiler
from sqlalchemy.sql import expression
from sqlalchemy.sql import visitors

from alloc_framework.db import api as db_api
from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects.placement import attribute_cache
from alloc_framework.objects.placement import candidate_predicates as preds

RP_TBL = models.ResourceProvider.__table__
INV_TBL = models.Inventory.__table__
ALLOC_TBL = models.Allocation.__table__
AGG_TBL = models.PlacementAggregate.__table__
RP_AGG_TBL = models.ResourceProviderAggregate.__table__
RP_TRAIT_TBL = models.ResourceProviderTrait.__table__
# Aliases of the sub-selects, made once: each alias sets up its columns.
MEMBER = RP_TBL.alias('member')
MEMBER_INV = INV_TBL.alias('inv')
MEMBER_AGG = RP_AGG_TBL.alias('mine')
MEMBER_TRAIT = RP_TRAIT_TBL.alias('member_trait')
# Those of the sharing providers, in sub-selects of their own.
SHARE_INV = INV_TBL.alias('share_inv')
SHARE_TRAIT = RP_TRAIT_TBL.alias('share_trait')
SHARE_AGG = RP_AGG_TBL.alias('share_agg')
SHARE_TREE = RP_TBL.alias('share_tree')

# Roots read per query when a limit (or max_allocation_candidates)
# bounds the search: twice the bound, within these.
_MAX_CHUNK = 500
_MIN_CHUNK = 16
# Roots read per query when nothing bounds the search: every tree that
# fits is read anyway, and each query of a chunk's trees costs the
# database a scan of the inventories (PostgreSQL hashes the chunk's
# providers against them) and the service a statement: fewer, larger
# chunks cost less of both.
_UNBOUNDED_CHUNK = 2000
# Widest range of provider ids one query of candidate roots looks at.
_MAX_WINDOW = 65536
# Requests whose first window is remembered (see _WindowHints).
_HINTS_KEPT = 256
# Seconds the counts of inventories per class (which only choose how to
# search, never what is found) are kept before being read again.
_COUNTS_TTL = 60
# A class whose inventories are at most this share of the providers
# drives the search of candidate roots.
_DRIVER_SHARE = 0.25
# Driving roots read by the first query of a driven search.
_DRIVER_FIRST_READ = 1024


class RequestGroup:
    """One request group: the unsuffixed one (``suffix == ''``), whose
    resources may come from several providers of one tree and its sharing
    providers, or a granular one, served by a single provider.

    :param required_traits: list of sets of trait names (any of each set).
    :param member_of: list of sets of aggregate uuids (any of each set).
    """

    def __init__(self, suffix='', resources=None, required_traits=None,
                 forbidden_traits=None, member_of=None, forbidden_aggs=None,
                 in_tree=None):
        self.suffix = suffix
        self.resources = resources or {}
        self.required_traits = required_traits or []
        self.forbidden_traits = forbidden_traits or set()
        self.member_of = member_of or []
        self.forbidden_aggs = forbidden_aggs or set()
        self.in_tree = in_tree

    @property
    def use_same_provider(self):
        return bool(self.suffix)

    def trait_names(self):
        names = set(self.forbidden_traits)
        for any_of in self.required_traits:
            names |= any_of
        return names


class RequestWide:
    """Parameters of the whole request.

    :param limit: at most this many candidates (None: no limit).
    :param group_policy: ``'isolate'`` or ``'none'``/None.
    :param root_required: trait names the tree's root must have.
    :param root_forbidden: trait names the tree's root must not have.
    :param same_subtrees: list of sets of group suffixes.
    :param nested_aware: False before microversion 1.29: one provider per
        tree in a candidate.
    """

    def __init__(self, limit=None, group_policy=None, root_required=None,
                 root_forbidden=None, same_subtrees=None, nested_aware=True):
        self.limit = limit
        self.group_policy = group_policy
        self.root_required = root_required or set()
        self.root_forbidden = root_forbidden or set()
        self.same_subtrees = same_subtrees or []
        self.nested_aware = nested_aware


_NO_IDS = frozenset()
_INT_ARRAY = postgresql.ARRAY(sa.Integer)


class Provider:
    """A provider of a tree being searched, with what it offers."""

    __slots__ = ('id', 'uuid', 'parent_id', 'root_id', 'parent_uuid',
                 'root_uuid', 'inventories', 'used', 'traits', 'aggregates')

    def __init__(self, row):
        self.id, self.uuid, self.parent_id, self.root_id = row
        # Set once the whole tree is loaded (a root's now).
        self.parent_uuid = None
        self.root_uuid = self.uuid if self.root_id == self.id else None
        # {rc_id: (min_unit, max_unit, step_size, capacity)}
        self.inventories = {}
        # {rc_id: used}
        self.used = {}
        # trait ids (a frozenset, set once loaded)
        self.traits = _NO_IDS
        # aggregate uuids (a frozenset, set once loaded)
        self.aggregates = _NO_IDS

    def capacity(self, rc_id):
        return self.inventories[rc_id][3]

    def can_serve(self, rc_id, amount):
        inv = self.inventories.get(rc_id)
        if inv is None:
            return False
        min_unit, max_unit, step_size, capacity = inv
        return preds.can_take(min_unit, max_unit, step_size, capacity,
                              self.used.get(rc_id, 0), amount)

    def fits(self, rc_id, amount):
        """Whether ``amount`` (several groups' sum) fits at all."""
        inv = self.inventories[rc_id]
        return (amount <= inv[1] and
                self.used.get(rc_id, 0) + amount <= inv[3])


class Candidate:
    """One allocation request: ``{(provider, rc_id): amount}`` and the
    providers that satisfied each group (``mappings``)."""

    __slots__ = ('allocations', 'mappings')

    # Set by SingleCandidate only: the one provider and the one group.
    provider = None
    group = None

    def __init__(self, allocations, mappings):
        self.allocations = allocations
        self.mappings = mappings

    def key(self):
        return (frozenset((p.id, rc, a)
                          for (p, rc), a in self.allocations.items()),
                frozenset((s, frozenset(p.uuid for p in ps))
                          for s, ps in self.mappings.items()))


class SingleCandidate:
    """The candidate of a request of one group served by one provider
    alone (each candidate of a flat cloud): the provider and the group
    only. Its ``allocations`` and ``mappings``, those of the equal
    Candidate, are made when asked for; a writer of the answer can use
    ``provider`` and ``group`` instead (the same text for every
    candidate of the group but the provider's uuid)."""

    __slots__ = ('provider', 'group')

    def __init__(self, provider, group):
        self.provider = provider
        self.group = group

    @property
    def allocations(self):
        rp = self.provider
        return {(rp, rc_id): amount for rc_id, amount in self.group.ordered}

    @property
    def mappings(self):
        return {self.group.suffix: (self.provider,)}

    key = Candidate.key


class _Group:
    """A RequestGroup with its names resolved to ids."""

    def __init__(self, context, group, trait_ids, agg_ids, in_tree_root):
        self.suffix = group.suffix
        self.use_same_provider = group.use_same_provider
        self.resources = [
            (attribute_cache.rc_id(context, rc), amount)
            for rc, amount in group.resources.items()]
        # In the order of the allocations of a candidate (see
        # _group_options).
        self.ordered = (self.resources if self.use_same_provider
                        else sorted(self.resources))
        self.required = [{trait_ids[n] for n in any_of}
                         for any_of in group.required_traits]
        self.forbidden = {trait_ids[n] for n in group.forbidden_traits}
        self.member_of = group.member_of
        # The ids of the aggregates of each set of member_of (those that
        # exist: an unknown uuid has no member).
        self.member_of_ids = [{agg_ids[u] for u in any_of if u in agg_ids}
                              for any_of in group.member_of]
        self.forbidden_aggs = group.forbidden_aggs
        self.in_tree_root = in_tree_root
        # Whether provider_allowed has anything to check.
        self.filtered = bool(in_tree_root is not None or self.forbidden or
                             self.member_of or self.forbidden_aggs)

    def provider_allowed(self, rp, root):
        """Aggregates, forbidden traits and in_tree of one provider."""
        if self.in_tree_root is not None and rp.root_id != self.in_tree_root:
            return False
        if rp.traits & self.forbidden:
            return False
        if self.member_of or self.forbidden_aggs:
            # The unsuffixed group's providers are members through their
            # root too; a granular group's provider only directly.
            aggs = rp.aggregates
            if not self.use_same_provider:
                aggs = aggs | root.aggregates
            if aggs & self.forbidden_aggs:
                return False
            if not all(aggs & any_of for any_of in self.member_of):
                return False
        return True

    def traits_satisfied(self, traits):
        return all(traits & any_of for any_of in self.required)


def _is_postgresql(context):
    return db_api.connection(context).dialect.name == 'postgresql'


# The statements of the search are built once per shape (the number of
# classes, groups, filters... of a request, and the database) and kept,
# their values named parameters given at execution: building a select()
# and computing its cache key cost more CPU time than the rest of a
# limited request's SQL. The shapes a deployment sees are few; this many
# of each kind are kept.
_SHAPES_KEPT = 256


def _ids_param(name, per_row):
    """A named parameter holding a list of ids (see :func:`_in_param`)."""
    if per_row:
        return sa.bindparam(name, type_=_INT_ARRAY)
    return preds.ids_param(name)


def _in_param(column, name, per_row):
    """``column IN ids``, the ids the parameter ``name`` holds at
    execution (a sorted list). On PostgreSQL (``per_row``), ``column =
    ANY(array)`` with the ids as one array parameter: PostgreSQL plans an
    IN list that way anyway, and the statement is then the same whatever
    the ids, instead of one placeholder rendered per id. On SQLite the
    same with the ids as one JSON text (see :class:`_SQLiteIdsIn`).
    Elsewhere one expanding parameter of a known type: SQLAlchemy then
    neither coerces each id into a literal of its own nor guesses their
    type."""
    param = _ids_param(name, per_row)
    if per_row:
        return column == sa.any_(param)
    ids = sa.func.json_each(
        sa.bindparam(name, type_=_JsonIds())).table_valued('value')
    return _SQLiteIdsIn(column.in_(param),
                        column.in_(sa.select(ids.c.value)))


class _JsonIds(sa.types.TypeDecorator):
    """A list of integer ids sent as one JSON text."""

    impl = sa.String
    cache_ok = True

    def process_bind_param(self, value, dialect):
        return json.dumps(value)


class _SQLiteIdsIn(expression.ColumnElement):
    """``column IN ids`` (``default``), rendered on SQLite as ``column IN
    (SELECT value FROM json_each(:ids))`` (``sqlite``), the ids one JSON
    text: the statement is the same whatever the number of ids. An
    expanding parameter renders one placeholder per id at every
    execution (SQLAlchemy's work, a few hundred per chunk of trees), and
    the new text is parsed and planned again by SQLite each time."""

    inherit_cache = True
    type = sa.Boolean()
    _is_implicitly_boolean = True
    _traverse_internals = [
        ('default', visitors.InternalTraversal.dp_clauseelement),
        ('sqlite', visitors.InternalTraversal.dp_clauseelement)]

    def __init__(self, default, sqlite):
        self.default = default
        self.sqlite = sqlite

    @property
    def _from_objects(self):
        return self.default._from_objects


@sa_compiler.compiles(_SQLiteIdsIn)
def _ids_in_default(element, compiler, **kw):
    return compiler.process(element.default, **kw)


@sa_compiler.compiles(_SQLiteIdsIn, 'sqlite')
def _ids_in_sqlite(element, compiler, **kw):
    return compiler.process(element.sqlite, **kw)


def _per_root(select, per_row):
    """Whether the sub-select correlated with the outer row (a root, a
    sharing provider) finds a row.

    With ``per_row`` (PostgreSQL), a scalar sub-select with LIMIT 1
    rather than EXISTS: PostgreSQL turns EXISTS into a semi-join that may
    start from every inventory of a class, when only the roots of one
    window of ids are to be checked, each with a few index look-ups.
    MariaDB plans EXISTS well and the scalar form badly.
    """
    if per_row:
        return select.limit(1).scalar_subquery().isnot(None)
    return select.exists()


class _LeftFirst(expression.Join):
    """An inner join whose left side must be the outer loop: rendered
    ``CROSS JOIN ... ON`` on SQLite, a plain ``JOIN`` elsewhere.

    Without statistics (``sqlite_stat1``) SQLite's planner prefers the
    index of an equality on a column of the right side to the join
    column: in :func:`_tree_has_room` it scanned every inventory of the
    class for each root (the index on ``(resource_class_id,
    max_unit)``) instead of the few providers of the root's tree and an
    inventory look-up for each, and the sharing providers' inventories
    were read the same way. ``CROSS JOIN`` is how SQLite lets a query
    fix the order of its tables.
    """

    inherit_cache = True


@sa_compiler.compiles(_LeftFirst, 'sqlite')
def _left_first_sqlite(join, compiler, from_linter=None, **kw):
    if from_linter is not None:
        from_linter.edges.update(itertools.product(
            join.left._from_objects, join.right._from_objects))
    kw['asfrom'] = True
    return '%s CROSS JOIN %s ON %s' % (
        join.left._compiler_dispatch(compiler, from_linter=from_linter,
                                     **kw),
        join.right._compiler_dispatch(compiler, from_linter=from_linter,
                                      **kw),
        join.onclause._compiler_dispatch(compiler, from_linter=from_linter,
                                         **kw))


def _tree_has_room(rc_id, amount, per_row):
    """A provider of the tree of the outer root can serve it."""
    member = MEMBER
    inv = MEMBER_INV
    return _per_root(sa.select(sa.literal(1)).select_from(
        _LeftFirst(member, inv, inv.c.resource_provider_id == member.c.id)
    ).where(member.c.root_provider_id == RP_TBL.c.id,
            preds.room(inv, rc_id, amount)), per_row)


def _anchored_to(agg_ids, per_row):
    """A provider of the tree of the outer root is in one of the
    aggregates of the parameter ``agg_ids``."""
    member = MEMBER
    mine = MEMBER_AGG
    return _per_root(sa.select(sa.literal(1)).select_from(
        member.join(mine, mine.c.resource_provider_id == member.c.id)
    ).where(member.c.root_provider_id == RP_TBL.c.id,
            _in_param(mine.c.aggregate_id, agg_ids, per_row)), per_row)


def _tree_has_member(condition, per_row):
    """A provider of the tree of the outer root meets ``condition`` (a
    condition on ``MEMBER``)."""
    return _per_root(sa.select(sa.literal(1)).select_from(MEMBER).where(
        MEMBER.c.root_provider_id == RP_TBL.c.id, condition), per_row)


def _member_in(agg_ids, per_row):
    """Condition: the ``MEMBER`` provider is in one of the aggregates of
    the parameter ``agg_ids``."""
    return sa.select(sa.literal(1)).where(
        MEMBER_AGG.c.resource_provider_id == MEMBER.c.id,
        _in_param(MEMBER_AGG.c.aggregate_id, agg_ids, per_row)).exists()


def _member_has_trait(trait_ids, per_row):
    """Condition: the ``MEMBER`` provider has one of the traits of the
    parameter ``trait_ids``."""
    return sa.select(sa.literal(1)).where(
        MEMBER_TRAIT.c.resource_provider_id == MEMBER.c.id,
        _in_param(MEMBER_TRAIT.c.trait_id, trait_ids, per_row)).exists()


def _group_filters(context, groups, sharing):
    """Conditions on the outer root for the aggregates and traits of the
    groups: necessary ones only, the search checks every provider.

    A group with resources takes at least one provider of the tree or
    of a sharing provider anchored to it, and every provider it takes is
    in one aggregate of each set of its ``member_of`` (directly or
    through its root, which is in the tree too), and they have, between
    them, a trait of each set of its required traits; and, with
    forbidden traits, one of them lacks them all. So for each of these
    some provider of the tree must qualify, unless the tree is anchored
    to a sharing provider with room for a class of the group, which may
    be the one (for ``member_of``, only one that may be a member of the
    aggregates itself). A group without resources may take no provider
    at all: it adds no condition.

    :returns: the conditions, each ``(kind, ids, shared)``: a provider
        of the tree is in one of the aggregates ``ids`` (``'in'``), has
        one of the traits ``ids`` (``'has'``) or lacks them all
        (``'lacks'``), or a provider of the tree is in one of the
        aggregates ``shared`` (sorted tuples of ids) of sharing
        providers with room; see :func:`_root_select`.
    """
    conditions = {}
    for group in groups:
        if not group.resources:
            continue
        wanted = [('in', ids) for ids in group.member_of_ids]
        wanted += [('has', ids) for ids in group.required]
        if group.forbidden:
            wanted.append(('lacks', group.forbidden))
        if not wanted:
            continue
        shared = set()
        for rc_id, amount in group.resources:
            shared.update(
                sharing.aggregates_with_room(context, rc_id, amount) or ())
        for kind, ids in wanted:
            via = shared
            if kind == 'in' and shared:
                # Only a sharing provider that is itself a member may be
                # the one.
                via = sharing.aggregates_of_members(
                    context, group.resources, ids)
            conditions[kind, tuple(sorted(ids)), tuple(sorted(via))] = None
    return list(conditions)


class _Sharing:
    """How the providers with the trait MISC_SHARES_VIA_AGGREGATE take
    part in a request.

    One query per request reads, for each sharing provider (an index
    look-up of each, starting from the trait): its root, its
    aggregates, whether it has any inventory, whether it is alone in its
    tree and, for each amount of a class the request asks for, whether
    it has room for it. Those rows (one per sharing provider and
    aggregate) answer every later question of the search in memory: the
    aggregates with room for an amount, the sharing providers anchored
    to the trees of a chunk, and the trees of sharing providers that
    cannot be candidate roots (:meth:`idle_roots`). A request never
    reads the sharing providers' inventories, usages and traits beyond
    that, nor the members of the trees' aggregates.

    :param pairs: the ``(rc_id, amount)`` the request asks for.
    """

    def __init__(self, context, per_row, pairs):
        self.per_row = per_row
        # {(rc_id, amount): sorted aggregate ids}, derived from
        # _providers_with_room and aggregates_of when first asked.
        self._with_room = {}
        # Whether some sharing provider has an inventory.
        self._any_inventory = False
        # {aggregate id: {sharing provider id}}
        self.by_aggregate = collections.defaultdict(set)
        # {sharing provider id: {aggregate id}}
        self.aggregates_of = collections.defaultdict(set)
        # {(rc_id, amount): {sharing provider id}}
        self._providers_with_room = {}
        # {sharing provider id: root provider id}
        self.root_of = {}
        # The sharing providers alone in their trees, with the pairs
        # they have room for and their aggregates:
        # {sharing provider id: ({(rc_id, amount)}, {aggregate id})}.
        self._alone = {}
        self.trait_id = preds.sharing_trait_id(context)
        if self.trait_id is None:
            return
        pairs = sorted(pairs)
        params = {'trait_id': self.trait_id}
        for i, (rc_id, amount) in enumerate(pairs):
            params['rc_%d' % i] = rc_id
            params['amount_%d' % i] = amount
        providers = {pair: set() for pair in pairs}
        for row in db_api.connection(context).execute(
                _sharing_select(per_row, len(pairs)), params).all():
            share_id, root_id, agg_id, has_inventory, alone = row[:5]
            self.root_of[share_id] = root_id
            self._any_inventory = self._any_inventory or bool(has_inventory)
            rooms = [pair for pair, room in zip(pairs, row[5:]) if room]
            if alone:
                mine = self._alone.setdefault(share_id, (set(rooms), set()))
                if agg_id is not None:
                    mine[1].add(agg_id)
            if agg_id is None:
                continue
            self.by_aggregate[agg_id].add(share_id)
            self.aggregates_of[share_id].add(agg_id)
            for pair in rooms:
                providers[pair].add(share_id)
        self._providers_with_room = providers

    def __bool__(self):
        return self._any_inventory

    def aggregates(self):
        """SELECT of the ids of the aggregates of sharing providers."""
        return sa.select(SHARE_AGG.c.aggregate_id).where(
            SHARE_AGG.c.resource_provider_id.in_(
                sa.select(SHARE_TRAIT.c.resource_provider_id).where(
                    SHARE_TRAIT.c.trait_id == self.trait_id)))

    def providers_in(self, agg_ids):
        """``(aggregate id, sharing provider id)`` of the sharing providers
        in the aggregates ``agg_ids`` (from the rows read up front)."""
        return [(agg_id, share_id) for agg_id in sorted(agg_ids)
                for share_id in sorted(self.by_aggregate.get(agg_id, ()))]

    def idle_roots(self, context, smallest):
        """Root ids of the trees made of a sharing provider alone that
        the query of candidate roots rejects for lack of room: for a
        class of ``smallest`` (``{rc_id: amount}``, see :func:`_smallest`),
        neither the provider nor a sharing provider of its aggregates
        has room for the amount. Decided in memory, exactly as that
        query would for these trees: they can be left out of the roots
        it checks without changing what is found (a storage provider
        cannot serve ``VCPU``)."""
        idle = set()
        for rc_id, amount in smallest.items():
            aggs = None
            for share_id, (rooms, agg_ids) in self._alone.items():
                if (rc_id, amount) in rooms:
                    continue
                if aggs is None:
                    aggs = set(self.aggregates_with_room(
                        context, rc_id, amount))
                if not aggs & agg_ids:
                    idle.add(self.root_of[share_id])
        return idle

    def aggregates_with_room(self, context, rc_id, amount):
        """Ids of the aggregates of the sharing providers that can serve
        ``amount`` of ``rc_id`` (sorted), empty when none can."""
        if self.trait_id is None:
            return []
        key = (rc_id, amount)
        found = self._with_room.get(key)
        if found is None:
            if key not in self._providers_with_room:
                # An amount the request did not announce: read it alone.
                alone = _Sharing(context, self.per_row, [key])
                self._providers_with_room[key] = (
                    alone._providers_with_room.get(key, set()))
            found = self._with_room[key] = sorted(
                {agg_id for share_id in self._providers_with_room[key]
                 for agg_id in self.aggregates_of[share_id]})
        return found

    def aggregates_of_members(self, context, resources, agg_ids):
        """Ids of the aggregates (sorted) of the sharing providers that
        can serve an amount of ``resources`` (``(rc_id, amount)`` pairs)
        and may be members of one of the aggregates ``agg_ids``: in one
        of them themselves, or below a root (whose aggregates were not
        read) that may be. A sharing provider in none of them cannot
        serve a group with that ``member_of``."""
        found = set()
        for rc_id, amount in resources:
            if not self.aggregates_with_room(context, rc_id, amount):
                continue
            for share_id in self._providers_with_room[rc_id, amount]:
                aggs = self.aggregates_of[share_id]
                if (self.root_of[share_id] != share_id or
                        not aggs.isdisjoint(agg_ids)):
                    found |= aggs
        return sorted(found)


@functools.lru_cache(maxsize=_SHAPES_KEPT)
def _sharing_select(per_row, classes):
    """SELECT of the rows of :class:`_Sharing`: per sharing provider (the
    parameter ``trait_id``) and aggregate, its root, whether it has an
    inventory, whether it is alone in its tree and, for each of
    ``classes`` pairs of parameters ``rc_N`` and ``amount_N``, whether
    it has room for it. Built once per shape."""
    rp_id = SHARE_TRAIT.c.resource_provider_id
    columns = [rp_id, RP_TBL.c.root_provider_id]
    if per_row:
        # A LATERAL look-up per sharing provider: a join would scan
        # every aggregate membership. OFFSET 0 keeps PostgreSQL from
        # flattening it into a join.
        aggs = sa.select(SHARE_AGG.c.aggregate_id).where(
            SHARE_AGG.c.resource_provider_id == rp_id
        ).offset(0).lateral('share_aggs')
        members = SHARE_TRAIT.join(
            RP_TBL, RP_TBL.c.id == rp_id).outerjoin(aggs, sa.true())
    else:
        aggs = SHARE_AGG
        members = _LeftFirst(
            SHARE_TRAIT, RP_TBL, RP_TBL.c.id == rp_id).outerjoin(
                aggs, aggs.c.resource_provider_id == rp_id)
    columns.append(aggs.c.aggregate_id)
    columns.append(_per_root(sa.select(sa.literal(1)).where(
        SHARE_INV.c.resource_provider_id == rp_id), per_row))
    # Alone in its tree: no other provider has its root (an index
    # look-up of the root's providers).
    columns.append(sa.not_(_per_root(sa.select(sa.literal(1)).where(
        SHARE_TREE.c.root_provider_id == RP_TBL.c.root_provider_id,
        SHARE_TREE.c.id != rp_id), per_row)))
    for i in range(classes):
        columns.append(_per_root(sa.select(sa.literal(1)).where(
            SHARE_INV.c.resource_provider_id == rp_id,
            preds.room(SHARE_INV, preds.int_param('rc_%d' % i),
                       preds.int_param('amount_%d' % i))), per_row))
    return sa.select(*columns).select_from(members).where(
        SHARE_TRAIT.c.trait_id == preds.int_param('trait_id'))


def _smallest(groups):
    """``{rc_id: smallest amount}`` any group asks of the class."""
    smallest = {}
    for group in groups:
        for rc_id, amount in group.resources:
            smallest[rc_id] = min(amount, smallest.get(rc_id, amount))
    return smallest


def _root_query(context, groups, wide, trait_ids, sharing, in_tree_roots,
                per_row, filters, check_room=True):
    """The query of candidate root ids (necessary conditions only), a
    :class:`_RootQuery`.

    Every condition is a sub-select correlated with the root, so that a
    database scanning the roots in id order stops at the LIMIT the
    caller puts on it: the work depends on the roots looked at, not on
    how many providers could serve the request.

    Without ``check_room`` the query leaves out the room of each class
    (the costliest conditions: a usage sum per root and class), which
    the search checks anyway when it generates the candidates of a tree.
    ``filters`` are the conditions of :func:`_group_filters` it checks.
    """
    params = {}
    rooms = []
    smallest = _smallest(groups) if check_room else {}
    for i, (rc_id, amount) in enumerate(sorted(smallest.items())):
        params['rc_%d' % i] = rc_id
        params['amount_%d' % i] = amount
        aggs = sharing.aggregates_with_room(context, rc_id, amount)
        if aggs:
            # Or a provider of the tree is in an aggregate of a sharing
            # provider with room (those were found once, above).
            params['room_aggs_%d' % i] = list(aggs)
        rooms.append(bool(aggs))
    in_tree = []
    if not sharing or (len(in_tree_roots) == 1 and
                       all(g.in_tree_root is not None for g in groups)):
        # Without sharing providers every group is served by the tree of
        # the candidate; with them too when every group names one tree.
        in_tree = sorted(in_tree_roots)
    for i, root_id in enumerate(in_tree):
        params['in_tree_%d' % i] = root_id
    checked = []
    for i, (kind, ids, shared) in enumerate(filters):
        params['filter_%d' % i] = list(ids)
        if shared:
            params['filter_shared_%d' % i] = list(shared)
        checked.append((kind, bool(shared)))
    required = sorted(wide.root_required)
    for i, name in enumerate(required):
        params['root_required_%d' % i] = [trait_ids[name]]
    if wide.root_forbidden:
        params['root_forbidden'] = sorted(
            trait_ids[n] for n in wide.root_forbidden)
    shape = (per_row, tuple(rooms), len(in_tree), tuple(checked),
             len(required),
             bool(wide.root_forbidden))
    return _RootQuery(shape, params)


class _RootQuery:
    """The query of candidate root ids of one request: the shape of its
    statements (see :func:`_root_select`) and the values of their
    parameters."""

    def __init__(self, shape, params):
        self.shape = shape
        self.params = params

    @property
    def key(self):
        """A hashable key of the request: its shape and values."""
        return (self.shape, tuple(sorted(
            (name, tuple(value) if isinstance(value, list) else value)
            for name, value in self.params.items())))

    def window(self, context, after, upto, limit):
        """Up to ``limit`` candidate root ids in ``(after, upto]``."""
        params = dict(self.params, after=after, upto=upto, chunk=limit)
        return db_api.connection(context).execute(
            _root_select(self.shape, 'window'), params).scalars().all()

    def among(self, context, ids):
        """The candidate root ids among ``ids`` (root ids, in order)."""
        if not any(self.shape[1:]):
            # Nothing to check of these roots.
            return list(ids)
        params = dict(self.params, roots=sorted(ids))
        return db_api.connection(context).execute(
            _root_select(self.shape, 'among'), params).scalars().all()


@functools.lru_cache(maxsize=_SHAPES_KEPT)
def _root_select(shape, variant):
    """SELECT of candidate root ids for a ``shape`` of
    :func:`_root_query`, either in a window of ids (``variant``
    ``'window'``: parameters ``after``, ``upto`` and ``chunk``, the
    LIMIT) or among given ids (``'among'``: parameter ``roots``), in id
    order. Built once per shape; the values are those of
    :attr:`_RootQuery.params`."""
    per_row, rooms, in_tree, filters, required, forbidden = shape
    query = sa.select(RP_TBL.c.id).where(
        RP_TBL.c.id == RP_TBL.c.root_provider_id)
    for i, shared in enumerate(rooms):
        room = _tree_has_room(preds.int_param('rc_%d' % i),
                              preds.int_param('amount_%d' % i), per_row)
        if shared:
            room = sa.or_(room, _anchored_to('room_aggs_%d' % i, per_row))
        query = query.where(room)
    for i in range(in_tree):
        query = query.where(RP_TBL.c.id == preds.int_param('in_tree_%d' % i))
    for i, (kind, shared) in enumerate(filters):
        ids = 'filter_%d' % i
        if kind == 'in':
            found = _tree_has_member(_member_in(ids, per_row), per_row)
        elif kind == 'has':
            found = _tree_has_member(_member_has_trait(ids, per_row),
                                     per_row)
        else:
            found = _tree_has_member(~_member_has_trait(ids, per_row),
                                     per_row)
        if shared:
            found = sa.or_(found, _anchored_to('filter_shared_%d' % i,
                                               per_row))
        query = query.where(found)
    for i in range(required):
        query = query.where(preds.root_has_traits(sa.bindparam(
            'root_required_%d' % i, type_=sa.Integer, expanding=True)))
    if forbidden:
        query = query.where(~preds.root_has_traits(sa.bindparam(
            'root_forbidden', type_=sa.Integer, expanding=True)))
    # Every condition is checked from the root by look-ups: the index
    # dives into the aggregates of a sub-select (hundreds of sharing
    # aggregates) cost MariaDB's optimizer more than running the
    # statement (see db_api._mysql_setup).
    query = query.execution_options(**{db_api.FEW_INDEX_DIVES: True})
    if variant == 'window':
        return query.where(
            RP_TBL.c.id > preds.int_param('after'),
            RP_TBL.c.id <= preds.int_param('upto'),
        ).order_by(RP_TBL.c.id).limit(preds.int_param('chunk'))
    return query.where(_in_param(RP_TBL.c.id, 'roots', per_row)).order_by(
        RP_TBL.c.id)


class ClassCounts:
    """Inventories per resource class and ``max_unit``, providers per
    trait and per aggregate, providers in all and members of the
    aggregates of sharing providers, read at most
    every ``_COUNTS_TTL`` seconds by the requests that share it: enough
    to tell how many providers could take an amount.

    One belongs to each Placement application (the route table's handler
    hands it to every request context as ``context.class_counts``), so
    two applications of one process never see each other's counts. A
    context made outside an application gets one of its own on first
    use. The counts only choose how to search, never what is found; so
    do the spans of ids its searches covered (``windows``, a
    :class:`_WindowHints`).
    """

    def __init__(self):
        self.windows = _WindowHints()
        self._lock = threading.Lock()
        self.read_at = None
        # {rc_id: [(max_unit, inventories)]}
        self._counts = {}
        # {trait_id: providers}
        self.traits = {}
        # {aggregate_id: members}
        self.aggregates = {}
        self._providers = 0
        self._sharing_members = 0

    def get(self, context, sharing):
        """``(counts, providers, sharing members)``."""
        now = time.monotonic()
        with self._lock:
            if self.read_at is not None and now - self.read_at < _COUNTS_TTL:
                return self._counts, self._providers, self._sharing_members
        counts = collections.defaultdict(list)
        for row in db_api.connection(context).execute(
                sa.select(INV_TBL.c.resource_class_id, INV_TBL.c.max_unit,
                          sa.func.count())
                .group_by(INV_TBL.c.resource_class_id, INV_TBL.c.max_unit)):
            counts[row[0]].append((row[1], row[2]))
        providers = db_api.connection(context).execute(
            sa.select(sa.func.count()).select_from(RP_TBL)).scalar()
        traits = dict(db_api.connection(context).execute(
            sa.select(RP_TRAIT_TBL.c.trait_id, sa.func.count())
            .group_by(RP_TRAIT_TBL.c.trait_id)).all())
        aggregates = dict(db_api.connection(context).execute(
            sa.select(RP_AGG_TBL.c.aggregate_id, sa.func.count())
            .group_by(RP_AGG_TBL.c.aggregate_id)).all())
        members = 0
        if sharing.trait_id is not None:
            members = db_api.connection(context).execute(
                sa.select(sa.func.count()).select_from(RP_AGG_TBL)
                .where(RP_AGG_TBL.c.aggregate_id.in_(sharing.aggregates()))
            ).scalar()
        with self._lock:
            self._counts, self._providers, self.read_at = (
                counts, providers, now)
            self.traits = traits
            self.aggregates = aggregates
            self._sharing_members = members
        return counts, providers, members


def class_counts(context):
    """The :class:`ClassCounts` of the application of ``context``."""
    counts = getattr(context, 'class_counts', None)
    if counts is None:
        # A context made outside an application.
        counts = context.class_counts = ClassCounts()
    return counts


def _driver(context, smallest, sharing, groups, filters, bound=None):
    """What drives the search, when it is rare compared with the
    providers: the requested class whose inventories able to take the
    amount (and, when sharing providers serve it, the members of their
    aggregates) are fewest, or a set of required traits of a group with
    resources whose providers (and the members of the aggregates of the
    sharing providers that could serve the group) are as few or fewer
    (on MariaDB the driving roots of 10,000 inventories of a class took
    50,000 page reads, those of 10,000 providers of a trait 20,000), or a
    set of aggregates of the ``member_of`` of such a group whose members
    (and those of the aggregates of the sharing providers that may be
    the group's member) are fewer still. ``filters`` are the conditions
    of :func:`_group_filters`. A set of aggregates drives only a search
    that nothing bounds (``bound`` None: every tree that fits is read
    anyway) or whose members one read of driving roots covers: the
    members of aggregates are not rare the way the providers of a class
    or trait are, and with a limit a search through the windows of
    roots finds its trees among the first ones checked, where the
    driving roots would be every member's root, sorted.

    :returns: ``(('class', rc_id, amount) or ('traits', trait ids) or
        ('aggregates', aggregate ids), aggregate ids or None)`` or None.
    """
    if not smallest:
        return None
    counting = class_counts(context)
    counts, providers, members = counting.get(context, sharing)
    best = None
    for rc_id, amount in sorted(smallest.items()):
        able = sum(n for max_unit, n in counts.get(rc_id, ())
                   if max_unit >= amount)
        aggs = sharing.aggregates_with_room(context, rc_id, amount)
        if aggs:
            able += members
        if best is None or able < best[0]:
            best = (able, ('class', rc_id, amount), aggs)
    for group in groups:
        if not group.resources:
            continue
        shared = set()
        for rc_id, amount in group.resources:
            shared.update(
                sharing.aggregates_with_room(context, rc_id, amount) or ())
        for ids in group.required:
            able = sum(counting.traits.get(i, 0) for i in ids)
            if shared:
                able += members
            # As few as the inventories of the class will do: the
            # providers of a trait are read from its index alone, where
            # each inventory of a class costs a read of its row.
            if able <= best[0]:
                best = (able, ('traits', tuple(sorted(ids))),
                        sorted(shared) or None)
    for kind, ids, shared in filters:
        if kind != 'in':
            continue
        able = sum(counting.aggregates.get(i, 0) for i in ids)
        if shared:
            able += members
        if bound is not None and able > _DRIVER_FIRST_READ:
            continue
        if able < best[0]:
            best = (able, ('aggregates', ids), list(shared) or None)
    if best[0] > _DRIVER_SHARE * providers:
        return None
    return best[1:]


def _driver_roots(context, driver, after, until, count):
    """Up to ``count`` (None: all) root ids in ``(after, until]`` (either
    None: no bound on that side), in order, of the trees with a provider
    whose inventory of the driving class can take the amount (or with
    one of the driving traits, or in one of the driving aggregates), or
    in an aggregate of a sharing provider that can: index ranges of the
    (few) inventories, traits and aggregate members concerned, the root
    of each found by a look-up of its provider. Usages are left to the
    query of the roots, which checks them for these roots only."""
    what, aggs = driver
    params = {}
    if after is not None:
        params['after'] = after
    if until is not None:
        params['until'] = until
    if what[0] == 'class':
        params['rc'], params['amount'] = what[1:]
    elif what[0] == 'traits':
        params['traits'] = sorted(what[1])
    else:
        params['members_of'] = sorted(what[1])
    if aggs:
        params['aggs'] = sorted(aggs)
    if count is not None:
        params['count'] = count
    return db_api.connection(context).execute(
        _driver_select(_is_postgresql(context), what[0], bool(aggs),
                       after is not None, until is not None,
                       count is not None), params).scalars().all()


@functools.lru_cache(maxsize=_SHAPES_KEPT)
def _driver_select(per_row, kind, shared, above, below, limited):
    """SELECT of :func:`_driver_roots`, built once per shape: the roots
    of the inventories of class ``rc`` able to take ``amount`` (``kind``
    ``'class'``), of the providers with one of the ``traits``
    (``'traits'``) or of the members of the aggregates ``members_of``
    (``'aggregates'``), and with ``shared``, of the members of the
    aggregates ``aggs``; above ``after`` and at most ``until`` (when
    ``above`` and ``below``), at most ``count`` when ``limited``."""
    inv = MEMBER_INV
    mine = MEMBER_AGG

    # The root of each row by a correlated look-up: joined with the
    # providers, PostgreSQL and MariaDB may read every provider (they
    # cannot tell how few inventories of a class have a large max_unit).
    def root_of(provider_id):
        return sa.select(MEMBER.c.root_provider_id).where(
            MEMBER.c.id == provider_id).scalar_subquery().label('root_id')

    if kind == 'class':
        amount = preds.int_param('amount')
        parts = [sa.select(root_of(inv.c.resource_provider_id)).where(
            inv.c.resource_class_id == preds.int_param('rc'),
            inv.c.max_unit >= amount, inv.c.min_unit <= amount,
            (inv.c.total - inv.c.reserved) * inv.c.allocation_ratio >=
            amount)]
    elif kind == 'traits':
        trait = MEMBER_TRAIT
        parts = [sa.select(root_of(trait.c.resource_provider_id)).where(
            _in_param(trait.c.trait_id, 'traits', per_row))]
    else:
        parts = [sa.select(root_of(mine.c.resource_provider_id)).where(
            _in_param(mine.c.aggregate_id, 'members_of', per_row))]
    if shared:
        parts.append(sa.select(root_of(mine.c.resource_provider_id)).where(
            _in_param(mine.c.aggregate_id, 'aggs', per_row)))
    # OFFSET 0: each root is looked up once, not again in the filter.
    roots = (sa.union(*parts) if len(parts) > 1
             else parts[0].distinct()).offset(0).subquery('roots')
    query = sa.select(roots.c.root_id).order_by(roots.c.root_id)
    if above:
        query = query.where(roots.c.root_id > preds.int_param('after'))
    if below:
        query = query.where(roots.c.root_id <= preds.int_param('until'))
    if limited:
        query = query.limit(preds.int_param('count'))
    return query


def _used(inv):
    """Scalar sub-select: the usage of the inventory row ``inv`` (an
    index-only look-up of its allocations)."""
    return sa.select(sa.func.sum(ALLOC_TBL.c.used)).where(
        ALLOC_TBL.c.resource_provider_id == inv.c.resource_provider_id,
        ALLOC_TBL.c.resource_class_id == inv.c.resource_class_id,
    ).scalar_subquery()


def _three_columns_capacity(row):
    """A tuple of Provider.inventories from a row of the inventories of
    :func:`_trees_selects` whose capacity is its three columns (MySQL)."""
    return (row[2], row[3], row[4], preds.capacity(row[5], row[6], row[7]))


@functools.lru_cache(maxsize=3)
def _trees_selects(dialect):
    """The three SELECTs of :func:`_load_trees`, built once per database
    (``dialect``, its name), and the function that makes a tuple of
    Provider.inventories of a row of the second: the providers of the
    trees of the roots ``roots``, the inventories of the providers
    ``ids`` with the usage of each, and the traits and aggregates of the
    providers ``ids``.

    A row of the providers is (id, uuid, parent id, root id); one of the
    inventories (provider id, class id, min_unit, max_unit, step_size,
    capacity..., used), the capacity one column computed by PostgreSQL
    and SQLite (``preds.whole_capacity_of``), on MySQL the three it
    comes from (there a ratio is a single-precision FLOAT, whose product
    differs from the one of the value the driver reads). The providers
    and their inventories are read apart, not joined: a provider's
    columns (its uuid, a text) would otherwise be read, and made into
    Python values, once per inventory (on SQLite the join cost about a
    quarter more CPU than the two queries, most of it in making
    values)."""
    per_row = dialect == 'postgresql'
    inv = MEMBER_INV
    if dialect == 'mysql':
        capacity = [inv.c.total, inv.c.reserved, inv.c.allocation_ratio]
        inventory = _three_columns_capacity
    else:
        capacity = [preds.whole_capacity_of(inv, dialect)]
        inventory = operator.itemgetter(2, 3, 4, 5)
    providers = (
        sa.select(RP_TBL.c.id, RP_TBL.c.uuid, RP_TBL.c.parent_provider_id,
                  RP_TBL.c.root_provider_id)
        .where(_in_param(RP_TBL.c.root_provider_id, 'roots', per_row))
        .order_by(RP_TBL.c.id))
    inventories = (
        sa.select(inv.c.resource_provider_id, inv.c.resource_class_id,
                  inv.c.min_unit, inv.c.max_unit, inv.c.step_size,
                  *capacity, _used(inv))
        .where(_in_param(inv.c.resource_provider_id, 'ids', per_row))
        .order_by(inv.c.resource_provider_id, inv.c.resource_class_id))
    no_int = sa.cast(sa.null(), sa.Integer)
    attributes = sa.union_all(
        sa.select(RP_TRAIT_TBL.c.resource_provider_id,
                  RP_TRAIT_TBL.c.trait_id, no_int,
                  sa.cast(sa.null(), AGG_TBL.c.uuid.type))
        .where(_in_param(RP_TRAIT_TBL.c.resource_provider_id, 'ids',
                         per_row)),
        sa.select(RP_AGG_TBL.c.resource_provider_id, no_int,
                  RP_AGG_TBL.c.aggregate_id, AGG_TBL.c.uuid)
        .select_from(RP_AGG_TBL.join(
            AGG_TBL, AGG_TBL.c.id == RP_AGG_TBL.c.aggregate_id))
        .where(_in_param(RP_AGG_TBL.c.resource_provider_id, 'ids',
                         per_row)))
    return providers, inventories, attributes, inventory


def _load_trees(context, root_ids, rps):
    """Add the providers of the trees ``root_ids`` to ``rps``, with their
    inventories, usages, traits and aggregates: three queries, one of
    the providers, one of their inventories and the usage of each, one
    of their traits and aggregates.

    :returns: ``{provider id: {aggregate id}}`` of the providers added.
    """
    conn = db_api.connection(context)
    providers, inventories, attributes, inventory = _trees_selects(
        conn.dialect.name)
    # The providers added (in the order of their ids), and those of them
    # that are not roots (their parent's and root's uuids are set once
    # every provider is read).
    tree = []
    below = []
    for row in conn.execute(providers,
                            {'roots': sorted(root_ids)}).all():
        if row[0] not in rps:
            rp = rps[row[0]] = Provider(row)
            tree.append(rp)
            if rp.parent_id is not None:
                below.append(rp)
    for rp in below:
        rp.parent_uuid = rps[rp.parent_id].uuid
        rp.root_uuid = rps[rp.root_id].uuid
    agg_ids = collections.defaultdict(set)
    if not tree:
        return agg_ids
    ids = [rp.id for rp in tree]
    # The rows of a provider follow each other (one per inventory, in
    # the order of their classes).
    last = None
    for row in conn.execute(inventories, {'ids': ids}).all():
        if row[0] != last:
            last = row[0]
            rp = rps[last]
            found = rp.inventories
            used = rp.used
        found[row[1]] = inventory(row)
        if row[-1] is not None:
            used[row[1]] = int(row[-1])
    traits = collections.defaultdict(list)
    aggs = collections.defaultdict(list)
    for rp_id, trait_id, agg_id, uuid in conn.execute(
            attributes, {'ids': ids}).all():
        if agg_id is None:
            traits[rp_id].append(trait_id)
        else:
            aggs[rp_id].append(uuid)
            agg_ids[rp_id].add(agg_id)
    for rp_id, found in traits.items():
        rps[rp_id].traits = frozenset(found)
    for rp_id, found in aggs.items():
        rps[rp_id].aggregates = frozenset(found)
    return agg_ids


def _load_providers(context, root_ids, sharing):
    """``{id: Provider}`` of the trees ``root_ids`` and ``{root id: {sharing
    provider ids}}`` anchored to them; the trees of those sharing
    providers are loaded too.

    Each query's rows are fetched at once (``all()``): iterating over a
    result fetches its rows one call at a time, a cost per provider."""
    rps = {}
    agg_ids = _load_trees(context, root_ids, rps)
    anchored = collections.defaultdict(set)
    if sharing:
        # The sharing providers of the aggregates of the trees, from the
        # memberships read once per request.
        tree_aggs = collections.defaultdict(set)
        for rp_id, ids in agg_ids.items():
            for agg_id in ids:
                tree_aggs[agg_id].add(rps[rp_id].root_id)
        for agg_id, share_id in sharing.providers_in(tree_aggs):
            for root_id in tree_aggs[agg_id]:
                anchored[root_id].add(share_id)
        missing = set().union(*anchored.values()) - set(rps)
        if missing:
            _load_trees(context, {sharing.root_of[i] for i in missing}, rps)
    return rps, anchored


def _group_options(group, members, rps):
    """The ways ``group`` can be served by ``members`` (providers of one
    tree and its sharing providers): a list of (allocations, providers).
    """
    if not group.filtered:
        # Nothing provider_allowed would check.
        allowed = members
    else:
        allowed = [rp for rp in members
                   if group.provider_allowed(rp, rps[rp.root_id])]
    if group.use_same_provider:
        options = []
        for rp in allowed:
            if not group.traits_satisfied(rp.traits):
                continue
            if all(rp.can_serve(rc, amount)
                   for rc, amount in group.resources):
                options.append((
                    {(rp, rc): amount for rc, amount in group.resources},
                    (rp,)))
        return options
    per_class = []
    for rc, amount in group.ordered:
        able = [rp for rp in allowed if rp.can_serve(rc, amount)]
        if not able:
            return []
        per_class.append([(rp, rc, amount) for rp in able])
    return _OptionProduct(group, per_class)


class _OptionProduct:
    """The lazy product of the providers able to serve each class of an
    unsuffixed group, filtered on the traits of the chosen providers."""

    def __init__(self, group, per_class):
        self.group = group
        self.per_class = per_class

    def __iter__(self):
        required = self.group.required
        if len(self.per_class) == 1:
            # One class: each option is one provider.
            for rp, rc, amount in self.per_class[0]:
                if required and not self.group.traits_satisfied(rp.traits):
                    continue
                yield {(rp, rc): amount}, (rp,)
            return
        for choice in itertools.product(*self.per_class):
            # The providers in the order of their first class.
            providers = tuple(dict.fromkeys(rp for rp, _rc, _a in choice))
            if required:
                traits = set()
                for rp in providers:
                    traits |= rp.traits
                if not self.group.traits_satisfied(traits):
                    continue
            yield ({(rp, rc): amount for rp, rc, amount in choice},
                   providers)


def _ancestors(rp, rps):
    found = {rp.id}
    while rp.parent_id is not None and rp.parent_id in rps:
        rp = rps[rp.parent_id]
        found.add(rp.id)
    return found


def _same_subtree(chosen, wide, rps):
    for suffixes in wide.same_subtrees:
        members = {rp.id for suffix in suffixes
                   for rp in chosen.get(suffix, ())}
        if len(members) <= 1:
            continue
        common = set.intersection(*(_ancestors(rps[i], rps)
                                    for i in members))
        if not common & members:
            return False
    return True


def _single_candidate(rp, group):
    """The candidate of a tree of one provider, ``rp`` (a flat cloud's
    trees), for a request of one group: ``rp`` serves all of it (a
    SingleCandidate) or nothing (None). The candidate of the general
    case, without building the options of each class."""
    if not group.resources:
        return None
    if group.filtered and not group.provider_allowed(rp, rp):
        return None
    if group.required:
        traits = rp.traits
        for any_of in group.required:
            if traits.isdisjoint(any_of):
                return None
    inventories = rp.inventories
    used = rp.used
    can_take = preds.can_take
    for rc_id, amount in group.resources:
        inv = inventories.get(rc_id)
        # inv is (min_unit, max_unit, step_size, capacity).
        if inv is None or not can_take(
                *inv, used.get(rc_id, 0) if used else 0, amount):
            return None
    return SingleCandidate(rp, group)


def _tree_candidates(root, groups, wide, rps, trees, anchored):
    """Generate the candidates of the tree of ``root`` (but that of a
    tree of one provider for one group: see ``_single_candidate``)."""
    tree = trees[root.id]
    shared = [rps[i] for i in sorted(anchored.get(root.id, ()))
              if rps[i].root_id != root.id]
    members = sorted(tree, key=lambda rp: rp.id) + shared
    options = []
    for group in groups:
        opts = _group_options(group, members, rps)
        if isinstance(opts, list) and not opts:
            return
        options.append(opts)
    if len(groups) == 1:
        # What _combine gives of one group: each of its options.
        suffix = groups[0].suffix
        combined = ((allocations, {suffix: providers})
                    for allocations, providers in options[0])
    else:
        granular = sum(1 for g in groups if g.use_same_provider)
        isolate = wide.group_policy == 'isolate' and granular > 1
        combined = _combine(groups, options, isolate)
    for allocations, chosen in combined:
        if wide.same_subtrees and not _same_subtree(chosen, wide, rps):
            continue
        if not wide.nested_aware:
            roots = {rp.root_id for rp, _rc in allocations}
            providers = {rp.id for rp, _rc in allocations}
            if len(roots) != len(providers):
                continue
        yield Candidate(allocations, chosen)


def _combine(groups, options, isolate):
    """Pick one option per group, depth first and lazily, dropping a
    partial choice as soon as the amounts it puts on one provider no
    longer fit (or, with ``isolate``, two granular groups share a
    provider): memory stays bounded by the number of groups, however
    wide the tree.

    Yields ``(allocations, {suffix: providers})``.
    """
    chosen = {}

    def walk(index, allocations, taken):
        if index == len(groups):
            yield allocations, dict(chosen)
            return
        group = groups[index]
        for allocs, providers in options[index]:
            if isolate and group.use_same_provider:
                if providers[0].id in taken:
                    continue
                now_taken = taken | {providers[0].id}
            else:
                now_taken = taken
            if allocations:
                merged = dict(allocations)
                fit = True
                for key, amount in allocs.items():
                    before = merged.get(key)
                    if before is None:
                        # can_serve chose this option: the amount alone
                        # fits.
                        merged[key] = amount
                    else:
                        merged[key] = before + amount
                        if not key[0].fits(key[1], before + amount):
                            fit = False
                            break
                if not fit:
                    continue
            else:
                # The first group: its options are never changed, and
                # can_serve made sure each amount fits.
                merged = allocs
            chosen[group.suffix] = providers
            yield from walk(index + 1, merged, now_taken)
        chosen.pop(group.suffix, None)

    return walk(0, {}, frozenset())


def _chunk_size(bound):
    if bound is None:
        return _UNBOUNDED_CHUNK
    return max(_MIN_CHUNK, min(_MAX_CHUNK, 2 * bound))


_ID_RANGE = sa.select(sa.func.min(RP_TBL.c.id), sa.func.max(RP_TBL.c.id))


class _WindowHints:
    """How wide the first window of a request's next search starts.

    Without a hint, the search of a request looks at ``4 * chunk`` ids
    first and doubles the window while it finds too few roots. Where
    the first trees are full (the first candidates are claimed first,
    so a filling cloud fills from its lowest ids), every search of the
    request pays for the same few small windows, one statement each,
    before reaching trees with room. The span of ids the last search
    of the same request (same shape, same values) covered is kept
    here, and the next one starts with a window that wide: one
    statement instead of several.

    Only how many ids one statement looks at changes, never which
    roots are found nor in what order: every window starts where the
    one before ended, and returns the first roots in id order up to
    its LIMIT. A hint that is too wide costs nothing where trees have
    room (the statement stops at its LIMIT), and the next search
    remembers its own, narrower span. Kept by each application (its
    :class:`ClassCounts`), for the ``_HINTS_KEPT`` requests seen last.
    """

    def __init__(self, kept=_HINTS_KEPT):
        self._kept = kept
        self._spans = collections.OrderedDict()
        self._lock = threading.Lock()

    def get(self, key):
        with self._lock:
            return self._spans.get(key)

    def remember(self, key, span):
        with self._lock:
            self._spans[key] = span
            self._spans.move_to_end(key)
            while len(self._spans) > self._kept:
                self._spans.popitem(last=False)


def _root_ids(context, query, bound, randomize, driver=None,
              idle=frozenset()):
    """Candidate root ids in id order (from a random start, wrapping
    around, when ``randomize``), in chunks (sized for ``bound``, the most
    candidates wanted, or None).

    Each query looks at a window of provider ids only, so that a
    database has no choice but to check the conditions of the roots of
    that window: the work is bounded by the window, whatever the plan.
    A window that yields fewer roots than wanted (few trees fit) makes
    the next one twice as wide, so a rare match is still found in a few
    queries; in id order, the first window is as wide as the span the
    last search of the same request covered (:class:`_WindowHints`).

    With a ``driver`` (a rare class, see ``_driver``) the roots checked
    are instead the next trees having a provider of that class, so that
    the roots without it are never looked at; nor are the driving roots
    ``idle``, which ``query`` is known to reject (see
    :meth:`_Sharing.idle_roots`): the batches checked are of trees that
    may fit, and the roots found are the same.
    """
    chunk = _chunk_size(bound)
    if driver is not None and not randomize:
        # The driving roots are read in order from the first: the range
        # of ids is not needed (one statement less).
        ranges = [(None, None)]
    else:
        low, high = db_api.connection(context).execute(_ID_RANGE).first()
        if low is None:
            return
        if randomize:
            start = random.randint(low, high)
            ranges = [(start - 1, high), (low - 1, start - 1)]
        else:
            ranges = [(low - 1, high)]
    window = 4 * chunk
    if driver is not None:
        # The first read of the driving roots takes up to
        # _DRIVER_FIRST_READ of them: the database finds and sorts every
        # driving root whatever the LIMIT, so a short first read only
        # made the search that needs more (the first driving trees do
        # not fit: sharing providers that cannot serve the request
        # alone, for one) pay the same query twice. When the search
        # needs more still, the rest are read in one go (the driving
        # class is rare by choice). They are checked a batch at a time,
        # the first of a chunk: the driving trees have the rare class
        # (and those known not to fit are left out), so most of them fit
        # and checking more than a chunk would check trees the search
        # does not read; a batch of which fewer than a chunk fit makes
        # the next one twice as large.
        first = max(window, _DRIVER_FIRST_READ)
        window = chunk
        for after, until in ranges:
            read = _driver_roots(context, driver, after, until, first)
            complete = len(read) < first
            while read:
                last = read[-1]
                pending = [i for i in read if i not in idle]
                read = None
                while pending:
                    batch, pending = pending[:window], pending[window:]
                    ids = query.among(context, batch)
                    for start in range(0, len(ids), chunk):
                        yield ids[start:start + chunk]
                    if len(ids) < chunk:
                        # Few of these trees fit: check more of them at
                        # once.
                        window = min(2 * window, _MAX_WINDOW)
                if not complete:
                    read = _driver_roots(context, driver, last, until, None)
                    complete = True
        return
    if randomize:
        # A random start each time: no span to remember.
        for after, until in ranges:
            window = yield from _windows(context, query, chunk, after,
                                         until, window)
        return
    ((after, until),) = ranges
    hints = class_counts(context).windows
    key = query.key
    window = max(window, hints.get(key) or 0)
    covered = [after]
    try:
        yield from _windows(context, query, chunk, after, until, window,
                            covered)
    finally:
        # Also when the caller stops early: the span it needed.
        hints.remember(key, min(_MAX_WINDOW, covered[0] - after))


def _windows(context, query, chunk, after, until, window, covered=None):
    """Chunks of candidate root ids in ``(after, until]``, in id order,
    looking at ``window`` ids first (see :func:`_root_ids`).

    :param covered: a list whose only item is set to the last id looked
        at, as the search goes.
    :returns: the width of the next window.
    """
    last = after
    while last < until:
        upper = min(until, last + window)
        ids = query.window(context, last, upper, chunk)
        if len(ids) == chunk:
            last = ids[-1]
        else:
            last = upper
            window = min(2 * window, _MAX_WINDOW)
        if covered is not None:
            covered[0] = last
        if ids:
            yield ids
    return window


@db_api.reader.connection
def get_candidates(context, groups, wide, max_candidates=-1,
                   randomize=False):
    """The allocation candidates of ``groups`` (RequestGroup list).

    :returns: (list of Candidate, {provider id: Provider} of the trees of
        the candidates).
    :raises ResourceClassNotFound: an unknown resource class.
    :raises TraitNotFound: an unknown trait (all named).
    """
    trait_ids = preds.trait_ids(context, groups, wide)
    agg_ids = preds.aggregate_ids(
        context, {u for g in groups for any_of in g.member_of
                  for u in any_of})
    resolved = []
    in_tree_roots = set()
    for group in groups:
        root_id = None
        if group.in_tree is not None:
            root_id = preds.in_tree_root(context, group.in_tree)
            if root_id is None:
                return [], {}
            in_tree_roots.add(root_id)
        resolved.append(
            _Group(context, group, trait_ids, agg_ids, root_id))
        if resolved[-1].resources and not all(resolved[-1].member_of_ids):
            # A set of member_of none of whose aggregates exists: no
            # provider can serve the group (the search would otherwise
            # check every tree to find none).
            return [], {}
    per_row = _is_postgresql(context)
    sharing = _Sharing(context, per_row, {
        pair for group in resolved for pair in group.resources})

    bound = wide.limit
    if max_candidates >= 0 and (bound is None or max_candidates < bound):
        bound = max_candidates
    filters = _group_filters(context, resolved, sharing)
    driver = (None if in_tree_roots
              else _driver(context, _smallest(resolved), sharing, resolved,
                           filters, bound))
    by_members = driver is not None and driver[0][0] == 'aggregates'
    if by_members:
        # The driving roots are those of the trees meeting this condition
        # of member_of: the query of the roots need not check it again.
        driving = ('in', driver[0][1], tuple(driver[1] or ()))
        filters = [f for f in filters if f != driving]
    # Without a limit every tree that fits is read anyway: when no rare
    # class drives the search (the members of aggregates do not tell
    # whether a tree has room either), reading a tree costs less than
    # checking its room in SQL first (a usage sum per root and class),
    # so the roots are only those of the windows (or of the members),
    # and the trees that cannot serve the request simply yield no
    # candidate.
    check_room = not (wide.limit is None and
                      (driver is None or by_members) and
                      not in_tree_roots)
    query = _root_query(context, resolved, wide, trait_ids, sharing,
                        in_tree_roots, per_row, filters,
                        check_room=check_room)
    found = []
    seen = set()
    providers = {}
    # The group of a request of one group: a tree of one provider has its
    # candidate from _single_candidate.
    single = resolved[0] if len(resolved) == 1 else None
    idle = frozenset()
    if driver is not None and sharing:
        # The trees of sharing providers alone that cannot serve a class
        # of the request: the driving roots of an amount only sharing
        # providers have start with them.
        idle = sharing.idle_roots(context, _smallest(resolved))
    for root_ids in _root_ids(context, query, bound, randomize,
                              driver, idle):
        rps, anchored = _load_providers(context, root_ids, sharing)
        trees = collections.defaultdict(list)
        for rp in rps.values():
            trees[rp.root_id].append(rp)
        # The roots whose providers were put in ``providers`` from this
        # chunk (each chunk reads its own copy of the sharing providers).
        listed = set()
        # The sharing providers of this chunk: every one is anchored at
        # least to its own tree, through its own aggregates.
        shared_ids = set().union(*anchored.values())
        for root_id in root_ids:
            tree = trees[root_id]
            if single is not None and len(tree) == 1:
                # A tree of one provider, with no sharing provider but
                # itself (a sharing provider is anchored to its tree).
                anchors = anchored.get(root_id)
                if not anchors or anchors == {root_id}:
                    rp = tree[0]
                    candidate = _single_candidate(rp, single)
                    if candidate is None:
                        continue
                    if rp.id in shared_ids:
                        key = candidate.key()
                        if key in seen:
                            continue
                        seen.add(key)
                    found.append(candidate)
                    if root_id not in listed:
                        listed.add(root_id)
                        providers[rp.id] = rp
                    if bound is not None and len(found) >= bound:
                        break
                    continue
            for candidate in _tree_candidates(rps[root_id], resolved, wide,
                                              rps, trees, anchored):
                # Only the trees a sharing provider is anchored to have
                # it among their providers: a candidate with any other
                # provider comes from its tree alone and needs no key.
                for rp, _rc in candidate.allocations:
                    if rp.id not in shared_ids:
                        break
                else:
                    key = candidate.key()
                    if key in seen:
                        continue
                    seen.add(key)
                found.append(candidate)
                for rp, _rc in candidate.allocations:
                    if rp.root_id not in listed:
                        listed.add(rp.root_id)
                        for other in trees[rp.root_id]:
                            providers[other.id] = other
                if bound is not None and len(found) >= bound:
                    break
            if bound is not None and len(found) >= bound:
                break
        if bound is not None and len(found) >= bound:
            break
    if randomize:
        random.shuffle(found)
    return found, providers
