"""Traits: qualitative characteristics of resource providers.

Standard traits come from os-traits and are read-only through the API;
custom traits (``CUSTOM_*``) are created and deleted by operators.
"""

import os_traits
from oslo_db import exception as db_exc
from oslo_log import log as logging
from oslo_utils import timeutils
import sqlalchemy as sa

from alloc_framework.db import api as db_api
from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects.placement import attribute_cache
from alloc_framework.objects.placement import exception

LOG = logging.getLogger(__name__)
_TRAIT_TBL = models.Trait.__table__
_RP_TRAIT_TBL = models.ResourceProviderTrait.__table__
CUSTOM_NAMESPACE = os_traits.CUSTOM_NAMESPACE


_STANDARD = None


def is_standard(name):
    return name in _standard_names()


def _standard_names():
    global _STANDARD
    if _STANDARD is None:
        _STANDARD = frozenset(os_traits.get_traits())
    return _STANDARD


class Trait:
    """One trait: ``id``, ``name`` and timestamps."""

    def __init__(self, id=None, name=None, created_at=None,
                 updated_at=None):
        self.id = id
        self.name = name
        self.created_at = created_at
        self.updated_at = updated_at

    @classmethod
    def _from_row(cls, row):
        return cls(id=row.id, name=row.name, created_at=row.created_at,
                   updated_at=row.updated_at)


def _is_duplicate(exc):
    return isinstance(exc, db_exc.DBDuplicateEntry)


# Several API processes may start together: the loser of the race to
# insert runs again once and then finds nothing missing.
@db_api.retrying(max_retries=1, exception_checker=_is_duplicate)
@db_api.writer
def _sync_standard(context):
    existing = set(context.session.execute(
        sa.select(_TRAIT_TBL.c.name)).scalars())
    now = timeutils.utcnow()
    missing = [{'name': name, 'created_at': now}
               for name in sorted(_standard_names())
               if name not in existing]
    if missing:
        context.session.execute(_TRAIT_TBL.insert(), missing)
    return len(missing)


def sync_standard(context):
    """Insert the standard traits the database lacks (retries a race)."""
    added = _sync_standard(context)
    if added:
        LOG.info('Added %d standard traits', added)


@db_api.reader
def get_by_name(context, name):
    """The trait called ``name``.

    :raises exception.TraitNotFound: no such trait.
    """
    row = context.session.execute(
        sa.select(_TRAIT_TBL).where(_TRAIT_TBL.c.name == name)).first()
    if row is None:
        raise exception.TraitNotFound(names=name)
    return Trait._from_row(row)


@db_api.reader
def get_all(context, name_in=None, prefix=None, associated=None):
    """Traits matching every filter given, ordered by name.

    :param name_in: only these names.
    :param prefix: only names starting with it.
    :param associated: True: only traits of at least one provider;
        False: only traits of none.
    """
    query = sa.select(_TRAIT_TBL)
    if name_in is not None:
        query = query.where(_TRAIT_TBL.c.name.in_(list(name_in)))
    if prefix is not None:
        # Escape LIKE wildcards: the prefix is matched literally.
        query = query.where(_TRAIT_TBL.c.name.startswith(prefix,
                                                         autoescape=True))
    if associated is not None:
        used = sa.select(_RP_TRAIT_TBL.c.trait_id).distinct()
        if associated:
            query = query.where(_TRAIT_TBL.c.id.in_(used))
        else:
            query = query.where(_TRAIT_TBL.c.id.not_in(used))
    rows = context.session.execute(query.order_by(_TRAIT_TBL.c.name)).all()
    return [Trait._from_row(r) for r in rows]


@db_api.retry_on_deadlock
@db_api.writer
def _create(context, name):
    now = timeutils.utcnow()
    result = context.session.execute(_TRAIT_TBL.insert().values(
        name=name, created_at=now))
    return Trait(id=result.inserted_primary_key[0], name=name,
                 created_at=now)


def create(context, name):
    """Create the trait ``name``.

    :raises exception.TraitExists: it exists already.
    """
    try:
        return _create(context, name)
    except db_exc.DBDuplicateEntry:
        raise exception.TraitExists(name=name)
    except db_exc.DBDeadlock:
        raise exception.MaxDBRetriesExceeded(
            action='create trait %s' % name)


@db_api.writer
def _destroy(context, name):
    row = context.session.execute(
        sa.select(_TRAIT_TBL.c.id).where(_TRAIT_TBL.c.name == name)).first()
    if row is None:
        raise exception.TraitNotFound(names=name)
    if not name.startswith(CUSTOM_NAMESPACE):
        raise exception.TraitCannotDeleteStandard(name=name)
    in_use = context.session.execute(
        sa.select(_RP_TRAIT_TBL.c.trait_id).where(
            _RP_TRAIT_TBL.c.trait_id == row.id).limit(1)).first()
    if in_use:
        raise exception.TraitInUse(name=name)
    context.session.execute(
        _TRAIT_TBL.delete().where(_TRAIT_TBL.c.id == row.id))


def destroy(context, name):
    """Delete the custom trait ``name``.

    :raises exception.TraitNotFound: no such trait.
    :raises exception.TraitCannotDeleteStandard: not a custom trait.
    :raises exception.TraitInUse: some provider has it.
    """
    _destroy(context, name)
    attribute_cache.invalidate()
