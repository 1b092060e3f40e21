"""The filtered listing of resource providers (``GET /resource_providers``).

``get_all_by_filters`` narrows the providers with one ``IN`` / ``NOT IN``
sub-select on the provider id per filter, so filters combine with a
plain AND. What each filter means (room for an amount, membership of
aggregates, traits, the tree of ``in_tree``) is the predicate of
``candidate_predicates`` the allocation candidates search uses too.
"""

from alloc_framework.db import api as db_api
from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects.placement import attribute_cache
from alloc_framework.objects.placement import candidate_predicates as preds
from alloc_framework.objects.placement import resource_provider as rp_obj
from alloc_framework.objects.placement import resource_provider_trait

RP_TBL = models.ResourceProvider.__table__


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
        root_id = preds.in_tree_root(context, in_tree)
        if root_id is None:
            return []
        query = query.where(RP_TBL.c.root_provider_id == root_id)
    for uuids in member_of or ():
        query = query.where(RP_TBL.c.id.in_(preds.in_aggregates(uuids)))
    if forbidden_aggs:
        query = query.where(RP_TBL.c.id.not_in(
            preds.in_aggregates(forbidden_aggs)))
    if required_traits or forbidden_traits:
        names = set(forbidden_traits or ())
        for any_of in required_traits or ():
            names |= set(any_of)
        ids = resource_provider_trait.trait_ids(context, names)
        for any_of in required_traits or ():
            query = query.where(RP_TBL.c.id.in_(
                preds.with_traits(ids[n] for n in any_of)))
        if forbidden_traits:
            query = query.where(RP_TBL.c.id.not_in(
                preds.with_traits(ids[n] for n in forbidden_traits)))
    for rc_name, amount in sorted((resources or {}).items()):
        rc_id = attribute_cache.rc_id(context, rc_name)
        query = query.where(RP_TBL.c.id.in_(
            preds.with_capacity(rc_id, amount)))
    rows = context.session.execute(query.order_by(RP_TBL.c.id)).all()
    return [rp_obj.from_row(row) for row in rows]
