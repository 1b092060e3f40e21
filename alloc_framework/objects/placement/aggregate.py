"""Provider aggregates: groups of resource providers named by a uuid.

An aggregate exists only through its members: setting a provider's
aggregates creates the unknown ones on the fly.
"""

from oslo_db import exception as db_exc
import sqlalchemy as sa

from alloc_framework.db import api as db_api
from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects.placement import exception
from alloc_framework.objects.placement import resource_provider as rp_obj

AGG_TBL = models.PlacementAggregate.__table__
RP_AGG_TBL = models.ResourceProviderAggregate.__table__


@db_api.reader
def get_aggregates_by_provider(context, rp):
    """The aggregate uuids ``rp`` belongs to, sorted."""
    rows = context.session.execute(
        sa.select(AGG_TBL.c.uuid).select_from(
            AGG_TBL.join(RP_AGG_TBL,
                         AGG_TBL.c.id == RP_AGG_TBL.c.aggregate_id))
        .where(RP_AGG_TBL.c.resource_provider_id == rp.id)).all()
    return sorted(row.uuid for row in rows)


def _ensure_aggregates(context, uuids):
    """``{uuid: id}`` for ``uuids``, creating the missing aggregates."""
    ids = _aggregate_ids(context, uuids)
    for uuid in sorted(set(uuids) - set(ids)):
        # Another request may create the same aggregate at the same time;
        # the savepoint keeps our transaction usable when it wins.
        try:
            with context.session.begin_nested():
                context.session.execute(AGG_TBL.insert().values(uuid=uuid))
        except db_exc.DBDuplicateEntry:
            pass
    return _aggregate_ids(context, uuids)


def _aggregate_ids(context, uuids):
    if not uuids:
        return {}
    rows = context.session.execute(
        sa.select(AGG_TBL.c.id, AGG_TBL.c.uuid)
        .where(AGG_TBL.c.uuid.in_(sorted(uuids)))).all()
    return {row.uuid: row.id for row in rows}


@rp_obj.keep_generation_on_error
@db_api.writer
def set_aggregates(context, rp, aggregate_uuids, increment_generation=True):
    """Make ``aggregate_uuids`` the aggregates of ``rp``.

    With ``increment_generation`` (microversion 1.19 and later, where the
    caller sends the generation it read) the provider generation is
    compared and bumped first; older callers know nothing of generations.

    :raises ResourceProviderConcurrentUpdateDetected: stale generation.
    :raises ResourceProviderNotFound: the provider was deleted meanwhile.
    """
    if increment_generation:
        rp_obj.increment_generation(context, rp)
    else:
        # No generation to compare: still lock the provider row so that a
        # concurrent delete cannot leave links to a provider that is gone.
        row = context.session.execute(
            sa.select(rp_obj.RP_TBL.c.id).where(rp_obj.RP_TBL.c.id == rp.id)
            .with_for_update()).first()
        if row is None:
            raise exception.ResourceProviderNotFound(uuid=rp.uuid)
    wanted = _ensure_aggregates(context, set(aggregate_uuids))
    current = {row.aggregate_id for row in context.session.execute(
        sa.select(RP_AGG_TBL.c.aggregate_id).where(
            RP_AGG_TBL.c.resource_provider_id == rp.id))}
    to_remove = current - set(wanted.values())
    to_add = set(wanted.values()) - current
    if to_remove:
        context.session.execute(RP_AGG_TBL.delete().where(
            RP_AGG_TBL.c.resource_provider_id == rp.id,
            RP_AGG_TBL.c.aggregate_id.in_(sorted(to_remove))))
    for agg_id in sorted(to_add):
        context.session.execute(RP_AGG_TBL.insert().values(
            resource_provider_id=rp.id, aggregate_id=agg_id))
    return get_aggregates_by_provider(context, rp)
