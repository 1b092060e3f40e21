"""Why an allocation candidates request has the answer it has.

``explain_candidates`` answers ``GET /allocation_candidates?explain=true``:
how many providers (or provider trees) are left after each requirement of
an allocation candidates request, each count one ``COUNT`` query.
``search`` runs the candidates search and, when asked, its explanation in
one reader transaction, so that both read the same database.

Every requirement is counted with the predicate of
``candidate_predicates`` that the search uses for it: the two differ only
in how they combine the predicates (counts over every provider here, a
search tree by tree there).
"""

import collections

import sqlalchemy as sa

from alloc_framework.db import api as db_api
from alloc_framework.db import deadline as db_deadline
from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects.placement import allocation_candidate as ac_obj
from alloc_framework.objects.placement import attribute_cache
from alloc_framework.objects.placement import candidate_predicates as preds

RP_TBL = models.ResourceProvider.__table__
RP_AGG_TBL = models.ResourceProviderAggregate.__table__


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


def _serves(p, rc_id, amount):
    if amount is None:
        return p.c.id.in_(preds.with_inventory(rc_id))
    return p.c.id.in_(preds.with_capacity(rc_id, amount))


def _aggs_clause(uuids, forbidden):
    """Provider-level member_of: directly, or through the root of the
    provider's tree for the unsuffixed group (``via_root``)."""
    def clause(p, via_root):
        direct = p.c.id.in_(preds.in_aggregates(uuids))
        root = p.c.root_provider_id.in_(preds.in_aggregates(uuids))
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
                preds.with_traits([t]))))
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
            sides.append(preds.with_inventory(req.rc_id))
        elif req.kind == 'room':
            sides.append(preds.with_capacity(req.rc_id, req.amount))
        elif req.kind == 'traits':
            sides.append(preds.with_traits(req.ids))
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
                    allowed(p), p.c.id.in_(preds.with_traits(ids)),
                    sa.or_(sa.false(), *(_serves(p, rc, a)
                                         for rc, a in classes.items())))))
    if not sides:
        # Filters alone: the trees of the providers they allow.
        sides.append(_roots_near(sharing, allowed))
    return sides


def _set_of(sides, minus=()):
    """SELECT of the ids in every one of ``sides`` and in none of
    ``minus``, each id once.

    A side may name an id several times (the root of each provider of a
    tree that meets a requirement, a provider with two of the traits
    asked): INTERSECT and EXCEPT return each id once, and a lone side is
    made DISTINCT, so a count is one of trees (or providers), never of
    the rows that found them.
    """
    selects = [sa.select(list(side.subquery().c)[0]) for side in sides]
    query = (selects[0].distinct() if len(selects) == 1
             else sa.intersect(*selects))
    if minus:
        query = sa.except_(
            sa.select(list(query.subquery().c)[0]),
            *(sa.select(list(side.subquery().c)[0]) for side in minus))
    return query


def _count(context, sides, minus=()):
    return db_api.connection(context).execute(
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
    shares = preds.sharing_trait_id(context)
    if shares is None:
        return None
    sharing = preds.sharing_providers(shares)
    if db_api.connection(context).execute(sharing.limit(1)).first() is None:
        # No sharing provider: spare every count the join that looks
        # for them.
        return None
    return sharing


@db_api.reader.connection
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
    trait_ids = preds.trait_ids(context, groups, wide)
    sharing = _sharing(context)
    steps = []
    whole = []
    ordered = sorted(groups, key=lambda g: (g.use_same_provider, g.suffix))
    for group in ordered:
        in_tree_root = None
        if group.in_tree is not None:
            in_tree_root = preds.in_tree_root(context, group.in_tree)
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
        whole.append(preds.with_traits([trait_ids[name]]))
        steps.append(Step(None, 'root_required %s' % name,
                          _count(context, whole), TREES))
    minus = []
    for name in sorted(wide.root_forbidden):
        minus.append(preds.with_traits([trait_ids[name]]))
        steps.append(Step(None, 'root_required !%s' % name,
                          _count(context, whole, minus), TREES))
    if candidates is None:
        found, _providers = ac_obj.get_candidates(context, groups, wide)
        candidates = len(found)
    steps.append(Step(None, _final_requirement(groups, wide), candidates,
                      CANDIDATES))
    limited = wide.limit is not None and candidates >= wide.limit
    return Explanation(steps, _summary(steps, limited))


@db_api.reader.connection
def search(context, groups, wide, max_candidates=-1, randomize=False,
           explain=False, deadline=None):
    """The allocation candidates of a request and, with ``explain``, their
    explanation, both read in one reader transaction.

    The one call of ``GET /allocation_candidates``: the explanation
    counts the database the search read, through the same connection
    and the same transaction, after it. Both run their statements on
    the facade's connection (``@reader.connection``): the ORM session
    cost more than the driver for each of them.

    :param groups: a list of ``allocation_candidate.RequestGroup``.
    :param wide: an ``allocation_candidate.RequestWide``.
    :param max_candidates: the configured cap (-1: none); see
        ``allocation_candidate.get_candidates``.
    :param randomize: see ``allocation_candidate.get_candidates``.
    :param explain: also explain the answer (:func:`explain_candidates`).
    :param deadline: a ``common.deadline.Deadline`` the search must keep
        (see ``db.deadline.bounded``), or None.
    :returns: ``(candidates, providers, explanation)``: those of
        ``get_candidates``, and an :class:`Explanation` or None when
        ``explain`` is false.
    :raises ResourceClassNotFound: an unknown resource class.
    :raises TraitNotFound: an unknown trait (all named).
    :raises DeadlineExceeded, ClientGone: the search was stopped.
    """
    with db_deadline.bounded(context.connection, deadline):
        candidates, providers = ac_obj.get_candidates(
            context, groups, wide, max_candidates=max_candidates,
            randomize=randomize)
        explanation = None
        if explain:
            explanation = explain_candidates(context, groups, wide,
                                             candidates=len(candidates))
    return candidates, providers, explanation
