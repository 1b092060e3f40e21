"""Traits of resource providers (the association, not the traits).

Trait names and ids are translated through ``attribute_cache``; the
traits themselves belong to the ``trait`` module.
"""

from oslo_db import exception as db_exc
import sqlalchemy as sa

from alloc_framework.db import api as db_api
from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects.placement import attribute_cache
from alloc_framework.objects.placement import exception
from alloc_framework.objects.placement import resource_provider as rp_obj

RP_TRAIT_TBL = models.ResourceProviderTrait.__table__


@db_api.reader
def get_traits_by_provider(context, rp):
    """The trait names of ``rp``, sorted."""
    rows = context.session.execute(
        sa.select(RP_TRAIT_TBL.c.trait_id).where(
            RP_TRAIT_TBL.c.resource_provider_id == rp.id)).all()
    return sorted(attribute_cache.trait_name(context, row.trait_id)
                  for row in rows)


def trait_ids(context, names):
    """``{name: id}`` for trait ``names``.

    :raises TraitNotFound: naming every unknown trait at once.
    """
    ids = {}
    missing = []
    for name in sorted(set(names)):
        try:
            ids[name] = attribute_cache.trait_id(context, name)
        except exception.TraitNotFound:
            missing.append(name)
    if missing:
        raise exception.TraitNotFound(names=', '.join(missing))
    return ids


@rp_obj.keep_generation_on_error
@db_api.writer
def set_traits(context, rp, names):
    """Make ``names`` the traits of ``rp``; bumps its generation.

    :raises TraitNotFound: an unknown trait (nothing is changed).
    :raises ResourceProviderConcurrentUpdateDetected: stale generation.
    """
    wanted = set(trait_ids(context, names).values())
    rp_obj.increment_generation(context, rp)
    current = {row.trait_id for row in context.session.execute(
        sa.select(RP_TRAIT_TBL.c.trait_id).where(
            RP_TRAIT_TBL.c.resource_provider_id == rp.id))}
    to_remove = current - wanted
    if to_remove:
        context.session.execute(RP_TRAIT_TBL.delete().where(
            RP_TRAIT_TBL.c.resource_provider_id == rp.id,
            RP_TRAIT_TBL.c.trait_id.in_(sorted(to_remove))))
    try:
        for trait_id in sorted(wanted - current):
            context.session.execute(RP_TRAIT_TBL.insert().values(
                resource_provider_id=rp.id, trait_id=trait_id))
    except db_exc.DBReferenceError:
        # A trait was deleted after we looked its id up.
        attribute_cache.invalidate()
        raise exception.TraitNotFound(names=', '.join(sorted(names)))
    return get_traits_by_provider(context, rp)


@rp_obj.keep_generation_on_error
@db_api.writer
def delete_traits(context, rp):
    """Remove every trait of ``rp``; bumps its generation.

    :raises ResourceProviderConcurrentUpdateDetected: ``rp`` changed since
        it was read.
    """
    rp_obj.increment_generation(context, rp)
    context.session.execute(RP_TRAIT_TBL.delete().where(
        RP_TRAIT_TBL.c.resource_provider_id == rp.id))
