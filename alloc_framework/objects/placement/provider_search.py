"""The filtered listing of resource providers (``GET /resource_providers``).

``get_all_by_filters`` narrows the providers with one ``IN`` / ``NOT IN``
sub-select on the provider id per filter, so filters combine with a
plain AND. What each filter means (room for an amount, membership of
aggregates, traits, the tree of ``in_tree``) is the predicate of
``candidate_predicates`` the allocation candidates search uses too. The
statement is built once per combination of filters and kept, the values
of a request given as parameters.
"""

import functools

import sqlalchemy as sa

from alloc_framework.db import api as db_api
from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects.placement import attribute_cache
from alloc_framework.objects.placement import candidate_predicates as preds
from alloc_framework.objects.placement import resource_provider as rp_obj
from alloc_framework.objects.placement import resource_provider_trait

RP_TBL = models.ResourceProvider.__table__
AGG_TBL = models.PlacementAggregate.__table__


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
    params = {}
    if name is not None:
        params['name'] = name
    if uuid is not None:
        params['uuid'] = uuid
    if in_tree is not None:
        root_id = preds.in_tree_root(context, in_tree)
        if root_id is None:
            return []
        params['root_id'] = root_id
    member_of = member_of or ()
    for i, uuids in enumerate(member_of):
        params['member_of_%d' % i] = sorted(uuids)
    if forbidden_aggs:
        params['forbidden_aggs'] = sorted(forbidden_aggs)
    required_traits = required_traits or ()
    if required_traits or forbidden_traits:
        names = set(forbidden_traits or ())
        for any_of in required_traits:
            names |= set(any_of)
        ids = resource_provider_trait.trait_ids(context, names)
        for i, any_of in enumerate(required_traits):
            params['required_%d' % i] = sorted(ids[n] for n in any_of)
        if forbidden_traits:
            params['forbidden_traits'] = sorted(
                ids[n] for n in forbidden_traits)
    resources = sorted((resources or {}).items())
    for i, (rc_name, amount) in enumerate(resources):
        params['rc_%d' % i] = attribute_cache.rc_id(context, rc_name)
        params['amount_%d' % i] = amount
    shape = (name is not None, uuid is not None, in_tree is not None,
             len(member_of), bool(forbidden_aggs), len(required_traits),
             bool(forbidden_traits), len(resources))
    rows = context.session.execute(_filtered(shape), params).all()
    return [rp_obj.from_row(row) for row in rows]


@functools.lru_cache(maxsize=256)
def _filtered(shape):
    """The SELECT of :func:`get_all_by_filters` for a ``shape`` of its
    filters, built once; the values are named parameters."""
    (name, uuid, in_tree, member_of, forbidden_aggs, required,
     forbidden_traits, resources) = shape
    query = rp_obj.provider_select()
    if name:
        query = query.where(RP_TBL.c.name == sa.bindparam('name'))
    if uuid:
        query = query.where(RP_TBL.c.uuid == sa.bindparam('uuid'))
    if in_tree:
        query = query.where(
            RP_TBL.c.root_provider_id == preds.int_param('root_id'))
    for i in range(member_of):
        query = query.where(RP_TBL.c.id.in_(preds.in_aggregates(
            _uuids_param('member_of_%d' % i))))
    if forbidden_aggs:
        query = query.where(RP_TBL.c.id.not_in(preds.in_aggregates(
            _uuids_param('forbidden_aggs'))))
    for i in range(required):
        query = query.where(RP_TBL.c.id.in_(preds.with_traits(
            preds.ids_param('required_%d' % i))))
    if forbidden_traits:
        query = query.where(RP_TBL.c.id.not_in(preds.with_traits(
            preds.ids_param('forbidden_traits'))))
    for i in range(resources):
        query = query.where(RP_TBL.c.id.in_(preds.with_capacity(
            preds.int_param('rc_%d' % i), preds.int_param('amount_%d' % i))))
    return query.order_by(RP_TBL.c.id)


def _uuids_param(name):
    return sa.bindparam(name, type_=AGG_TBL.c.uuid.type, expanding=True)
