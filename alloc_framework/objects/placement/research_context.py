"""Searches for resource providers across providers, aggregates, traits,
inventories and allocations.

``get_all_by_filters`` answers ``GET /resource_providers``: each filter
narrows the set with one ``IN`` / ``NOT IN`` sub-select on the provider
id, so filters combine with a plain AND.

``explain_candidates`` answers ``GET /allocation_candidates?explain=true``:
how many providers (or provider trees) are left after each requirement of
an allocation candidates request, each count one ``COUNT`` query.
"""

import collections

import sqlalchemy as sa

from alloc_framework.db import api as db_api
from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects.placement import allocation_candidate as ac_obj
from alloc_framework.objects.placement import attribute_cache
from alloc_framework.objects.placement import exception
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


# What the count of a step counts: providers (a granular group is served
# by one provider), provider trees (the unsuffixed group is served by a
# tree with its sharing providers; the whole request by one tree), or the
# allocation candidates the search found.
PROVIDERS = 'providers'
TREES = 'trees'
CANDIDATES = 'candidates'

# One step of an explanation. ``group`` is the suffix of the request
# group ('' for the unsuffixed one) or None for the whole request;
# ``requirement`` is spelled as in the query string (``resources1
# VCPU:8``, ``required !CUSTOM_X``, ``member_of in:A,B``); ``count`` is
# how many ``unit`` are left once it and every earlier step of the same
# group apply.
Step = collections.namedtuple('Step', 'group requirement count unit')


class Explanation:
    """The steps of an explanation, a human summary and the culprit."""

    def __init__(self, steps, summary):
        self.steps = steps
        self.summary = summary

    @property
    def culprit(self):
        """The first step that left nothing, or None."""
        for step in self.steps:
            if step.count == 0:
                return step
        return None


class _Requirement:
    """One requirement of a request group, in the order it narrows.

    ``kind`` is 'inventory' (an inventory of ``rc_id``), 'room' (room for
    ``amount`` of ``rc_id``), 'traits' (any of ``ids``) or 'filter' (a
    provider-level condition, ``clause(p, via_root)`` on a provider
    table ``p``).
    """

    def __init__(self, kind, text, rc_id=None, amount=None, ids=None,
                 clause=None):
        self.kind = kind
        self.text = text
        self.rc_id = rc_id
        self.amount = amount
        self.ids = ids
        self.clause = clause


def _with_inventory(rc_id):
    """Sub-select: providers with an inventory of class ``rc_id``."""
    return sa.select(INV_TBL.c.resource_provider_id).where(
        INV_TBL.c.resource_class_id == rc_id)


def _serves(p, rc_id, amount):
    if amount is None:
        return p.c.id.in_(_with_inventory(rc_id))
    return p.c.id.in_(_with_capacity(rc_id, amount))


def _aggs_clause(uuids, forbidden):
    """Provider-level member_of: directly, or through the root of the
    provider's tree for the unsuffixed group (``via_root``)."""
    def clause(p, via_root):
        direct = p.c.id.in_(_in_aggregates(uuids))
        root = p.c.root_provider_id.in_(_in_aggregates(uuids))
        if forbidden:
            return sa.and_(~direct, ~root) if via_root else ~direct
        return sa.or_(direct, root) if via_root else direct
    return clause


def _uuids_text(uuids, forbidden=False):
    text = (sorted(uuids)[0] if len(uuids) == 1
            else 'in:' + ','.join(sorted(uuids)))
    return '!' + text if forbidden else text


def _requirements(context, group, trait_ids, in_tree_root):
    """The requirements of ``group`` (a RequestGroup), in narrowing order:
    each class's inventory then room, in_tree, member_of, forbidden
    aggregates, required traits, forbidden traits."""
    reqs = []
    suffix = group.suffix
    for rc, amount in group.resources.items():
        rc_id = attribute_cache.rc_id(context, rc)
        reqs.append(_Requirement('inventory', 'resources%s %s' % (suffix, rc),
                                 rc_id=rc_id))
        reqs.append(_Requirement(
            'room', 'resources%s %s:%d' % (suffix, rc, amount),
            rc_id=rc_id, amount=amount))
    if group.in_tree is not None:
        reqs.append(_Requirement(
            'filter', 'in_tree%s %s' % (suffix, group.in_tree),
            clause=lambda p, via_root: (
                sa.false() if in_tree_root is None
                else p.c.root_provider_id == in_tree_root)))
    for uuids in group.member_of:
        reqs.append(_Requirement(
            'filter', 'member_of%s %s' % (suffix, _uuids_text(uuids)),
            clause=_aggs_clause(uuids, False)))
    if group.forbidden_aggs:
        reqs.append(_Requirement(
            'filter', 'member_of%s %s' % (
                suffix, _uuids_text(group.forbidden_aggs, True)),
            clause=_aggs_clause(group.forbidden_aggs, True)))
    for any_of in group.required_traits:
        text = (sorted(any_of)[0] if len(any_of) == 1
                else 'in:' + ','.join(sorted(any_of)))
        reqs.append(_Requirement(
            'traits', 'required%s %s' % (suffix, text),
            ids=[trait_ids[n] for n in any_of]))
    for name in sorted(group.forbidden_traits):
        reqs.append(_Requirement(
            'filter', 'required%s !%s' % (suffix, name),
            clause=lambda p, via_root, t=trait_ids[name]: p.c.id.not_in(
                _with_traits([t]))))
    return reqs


# Every count below is the size of an INTERSECT of "sides", each one
# SELECT of ids (providers, or roots of trees) for one requirement. The
# databases run each side once and intersect hashed sets; ANDing
# several ``IN`` sub-selects in one WHERE instead lets a planner that
# misjudges their sizes re-run one of them per row of another.


def _provider_sides(reqs):
    """One SELECT of provider ids per requirement of a granular group."""
    sides = []
    for req in reqs:
        if req.kind == 'inventory':
            sides.append(_with_inventory(req.rc_id))
        elif req.kind == 'room':
            sides.append(_with_capacity(req.rc_id, req.amount))
        elif req.kind == 'traits':
            sides.append(_with_traits(req.ids))
        else:
            sides.append(sa.select(RP_TBL.c.id).where(
                req.clause(RP_TBL, False)))
    return sides


def _roots_near(sharing, clause_of):
    """SELECT of the roots of the trees that have a provider ``p`` for
    which ``clause_of(p)``, or one of whose providers shares an aggregate
    with such a sharing provider (``sharing``: a SELECT of the sharing
    providers' ids, None when there are none)."""
    p = RP_TBL.alias('p')
    own = sa.select(p.c.root_provider_id.label('id')).where(clause_of(p))
    if sharing is None:
        return own
    shared = RP_TBL.alias('shared')
    member = RP_TBL.alias('member')
    mine = RP_AGG_TBL.alias('mine')
    theirs = RP_AGG_TBL.alias('theirs')
    anchored = sa.select(member.c.root_provider_id.label('id')).select_from(
        shared.join(theirs, theirs.c.resource_provider_id == shared.c.id)
        .join(mine, mine.c.aggregate_id == theirs.c.aggregate_id)
        .join(member, member.c.id == mine.c.resource_provider_id)
    ).where(shared.c.id.in_(sharing), clause_of(shared))
    return sa.union(own, anchored)


def _tree_sides(reqs, sharing):
    """One SELECT of root ids per class and per required trait of the
    unsuffixed group: the trees (with their sharing providers) where,
    among the providers the group's filters allow, one can serve the
    class, and one serving a class has the trait."""
    filters = [r.clause for r in reqs if r.kind == 'filter']
    classes = collections.OrderedDict()
    for req in reqs:
        if req.kind in ('inventory', 'room'):
            classes[req.rc_id] = req.amount

    def allowed(p):
        return sa.and_(sa.true(), *(f(p, True) for f in filters))

    sides = []
    for rc_id, amount in classes.items():
        sides.append(_roots_near(
            sharing,
            lambda p, rc_id=rc_id, amount=amount: sa.and_(
                allowed(p), _serves(p, rc_id, amount))))
    for req in reqs:
        if req.kind == 'traits':
            sides.append(_roots_near(
                sharing,
                lambda p, ids=req.ids: sa.and_(
                    allowed(p), p.c.id.in_(_with_traits(ids)),
                    sa.or_(sa.false(), *(_serves(p, rc, a)
                                         for rc, a in classes.items())))))
    if not sides:
        # Filters alone: the trees of the providers they allow.
        sides.append(_roots_near(sharing, allowed))
    return sides


def _set_of(sides, minus=()):
    """SELECT of the ids in every one of ``sides`` and in none of
    ``minus``."""
    selects = [sa.select(list(side.subquery().c)[0]) for side in sides]
    query = selects[0] if len(selects) == 1 else sa.intersect(*selects)
    if minus:
        query = sa.except_(
            sa.select(list(query.subquery().c)[0]),
            *(sa.select(list(side.subquery().c)[0]) for side in minus))
    return query


def _count(context, sides, minus=()):
    return context.session.execute(
        sa.select(sa.func.count()).select_from(
            _set_of(sides, minus).subquery())).scalar()


def _final_requirement(groups, wide):
    extras = []
    granular = sum(1 for g in groups if g.use_same_provider)
    if wide.group_policy == 'isolate' and granular > 1:
        extras.append('group_policy isolate')
    for suffixes in wide.same_subtrees:
        extras.append('same_subtree %s' % ','.join(sorted(suffixes)))
    if not wide.nested_aware:
        extras.append('one provider per tree')
    if extras:
        return 'allocation candidates (%s)' % ', '.join(extras)
    return 'allocation candidates'


_UNIT_WORDS = {PROVIDERS: 'providers', TREES: 'provider trees',
               CANDIDATES: 'allocation candidates'}


def _group_label(group):
    if group is None:
        return 'whole request'
    if group == '':
        return 'unsuffixed group'
    return 'group %s' % group


def _summary(steps, limited):
    """One sentence per group, then the conclusion."""
    parts = []
    by_group = collections.OrderedDict()
    for step in steps:
        by_group.setdefault(step.group, []).append(step)
    for group, group_steps in by_group.items():
        parts.append('%s: %s.' % (
            _group_label(group).capitalize(),
            '; '.join('%s: %d %s' % (s.requirement, s.count,
                                     _UNIT_WORDS[s.unit])
                      for s in group_steps)))
    culprit = Explanation(steps, '').culprit
    final = steps[-1]
    if culprit is None:
        parts.append('%d allocation candidates%s.' % (
            final.count, ' (the limit was reached)' if limited else ''))
        return ' '.join(parts)
    if culprit is final:
        # The search itself: after every count of the request.
        before = steps[:-1]
    else:
        group_steps = by_group[culprit.group]
        before = group_steps[:group_steps.index(culprit)]
    if before:
        reason = '%d %s before it, none after' % (
            before[-1].count, _UNIT_WORDS[before[-1].unit])
    else:
        reason = 'no %s meet it' % _UNIT_WORDS[culprit.unit]
    parts.append('No allocation candidate: `%s` (%s) eliminated them: %s.'
                 % (culprit.requirement, _group_label(culprit.group),
                    reason))
    return ' '.join(parts)


def _sharing(context):
    """SELECT of the ids of the sharing providers, or None."""
    try:
        shares = attribute_cache.trait_id(context, ac_obj.SHARES_TRAIT)
    except exception.TraitNotFound:
        return None
    sharing = _with_traits([shares])
    if context.session.execute(sharing.limit(1)).first() is None:
        # No sharing provider: spare every count the join that looks
        # for them.
        return None
    return sharing


@db_api.reader
def explain_candidates(context, groups, wide, candidates=None):
    """Which requirement of an allocation candidates request left nothing.

    Each requirement of each request group narrows a count, in the order
    resources (an inventory of the class, then room for the amount),
    in_tree, member_of, forbidden aggregates, required traits, forbidden
    traits; then the whole request (every group in one tree,
    root_required) and the candidates found. A granular group counts the
    providers that meet its requirements so far; the unsuffixed group
    counts the provider trees whose providers (and sharing providers)
    can still serve it; the whole request counts trees.

    Cost: one ``COUNT`` query per step (no provider is loaded), each
    looking at every provider, plus the search itself when
    ``candidates`` is not given.

    :param context: a RequestContext.
    :param groups: the parsed request: a list of
        ``allocation_candidate.RequestGroup``.
    :param wide: the request-wide parameters, an
        ``allocation_candidate.RequestWide``.
    :param candidates: how many candidates ``get_candidates`` found for
        this request, when the caller already searched; None to search
        here (bounded by ``wide.limit``).
    :returns: an :class:`Explanation`: ``steps`` (a list of
        :class:`Step`), ``summary`` (one human string) and ``culprit``
        (the first step that left nothing, None when candidates exist).
    :raises ResourceClassNotFound: an unknown resource class.
    :raises TraitNotFound: an unknown trait (all named).
    """
    names = set(wide.root_required) | set(wide.root_forbidden)
    for group in groups:
        names |= group.trait_names()
    trait_ids = resource_provider_trait.trait_ids(context, names)
    sharing = _sharing(context)
    steps = []
    whole = []
    ordered = sorted(groups, key=lambda g: (g.use_same_provider, g.suffix))
    for group in ordered:
        in_tree_root = None
        if group.in_tree is not None:
            row = context.session.execute(
                sa.select(RP_TBL.c.root_provider_id).where(
                    RP_TBL.c.uuid == group.in_tree)).first()
            in_tree_root = None if row is None else row.root_provider_id
        reqs = _requirements(context, group, trait_ids, in_tree_root)
        for index, req in enumerate(reqs, 1):
            if group.use_same_provider:
                count = _count(context, _provider_sides(reqs[:index]))
                unit = PROVIDERS
            else:
                count = _count(context,
                               _tree_sides(reqs[:index], sharing))
                unit = TREES
            steps.append(Step(group.suffix, req.text, count, unit))
        if not group.use_same_provider:
            whole.extend(_tree_sides(reqs, sharing))
        elif reqs:
            served = _set_of(_provider_sides(reqs)).subquery()
            whole.append(_roots_near(
                sharing,
                lambda p, served=served: p.c.id.in_(
                    sa.select(list(served.c)[0]))))
        else:
            # No requirement at all: any provider of the tree.
            whole.append(_roots_near(sharing, lambda p: sa.true()))
    if len(ordered) > 1:
        steps.append(Step(None, 'every request group in one tree',
                          _count(context, whole), TREES))
    for name in sorted(wide.root_required):
        whole.append(_with_traits([trait_ids[name]]))
        steps.append(Step(None, 'root_required %s' % name,
                          _count(context, whole), TREES))
    minus = []
    for name in sorted(wide.root_forbidden):
        minus.append(_with_traits([trait_ids[name]]))
        steps.append(Step(None, 'root_required !%s' % name,
                          _count(context, whole, minus), TREES))
    if candidates is None:
        found, _providers = ac_obj.get_candidates(context, groups, wide)
        candidates = len(found)
    steps.append(Step(None, _final_requirement(groups, wide), candidates,
                      CANDIDATES))
    limited = wide.limit is not None and candidates >= wide.limit
    return Explanation(steps, _summary(steps, limited))
