"""Resource classes: the kinds of quantitative resources.

Standard classes come from os-resource-classes and have stable ids: their
index in ``os_resource_classes.STANDARDS`` (the library only appends).
Custom classes (``CUSTOM_*``) get ids from ``MIN_CUSTOM_ID`` upwards, so
that they never collide with a standard class added later.
"""

import os_resource_classes as orc
from oslo_db import exception as db_exc
from oslo_log import log as logging
from oslo_utils import timeutils
import sqlalchemy as sa

from alloc_framework.db import api as db_api
from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects.placement import attribute_cache
from alloc_framework.objects.placement import exception

LOG = logging.getLogger(__name__)
_RC_TBL = models.ResourceClass.__table__
_INV_TBL = models.Inventory.__table__
MIN_CUSTOM_ID = 10000
# Concurrent creators may pick the same next id; each retry re-reads it.
# Every round lets at least one creator through, so the bound is the
# number of creators that can race at once (API threads); no sleep is
# needed between rounds.
_MAX_CREATE_RETRIES = 31
STANDARDS = orc.STANDARDS


def is_standard(name):
    return name in STANDARDS


class ResourceClass:
    """One resource class: ``id``, ``name`` and timestamps."""

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
        sa.select(_RC_TBL.c.name)).scalars())
    now = timeutils.utcnow()
    missing = [{'id': index, 'name': name, 'created_at': now}
               for index, name in enumerate(STANDARDS)
               if name not in existing]
    if not missing:
        return 0
    mysql = context.session.bind.dialect.name == 'mysql'
    if mysql:
        # VCPU's id is 0, which MySQL otherwise reads as "next
        # auto-increment value".
        mode = context.session.execute(
            sa.text('SELECT @@SESSION.sql_mode')).scalar()
        context.session.execute(sa.text(
            "SET SESSION sql_mode = 'NO_AUTO_VALUE_ON_ZERO'"))
    try:
        context.session.execute(_RC_TBL.insert(), missing)
    finally:
        if mysql:
            context.session.execute(
                sa.text('SET SESSION sql_mode = :mode'), {'mode': mode})
    return len(missing)


def sync_standard(context):
    """Insert the standard classes the database lacks."""
    added = _sync_standard(context)
    if added:
        LOG.info('Added %d standard resource classes', added)


@db_api.reader
def get_by_name(context, name):
    """The class called ``name``.

    :raises exception.ResourceClassNotFound: no such class.
    """
    row = context.session.execute(
        sa.select(_RC_TBL).where(_RC_TBL.c.name == name)).first()
    if row is None:
        raise exception.ResourceClassNotFound(resource_class=name)
    return ResourceClass._from_row(row)


@db_api.reader
def get_all(context):
    """Every class, standard ones first (ordered by id)."""
    rows = context.session.execute(
        sa.select(_RC_TBL).order_by(_RC_TBL.c.id)).all()
    return [ResourceClass._from_row(r) for r in rows]


def _id_taken(exc):
    """A unique key other than the name was hit: read the next id again.

    That is the id a concurrent creator took, or a key the backend does
    not name (a name clash then shows on the next attempt's read).
    """
    return (isinstance(exc, db_exc.DBDuplicateEntry)
            and 'name' not in (exc.columns or []))


@db_api.retrying(max_retries=_MAX_CREATE_RETRIES,
                 exception_checker=_id_taken)
@db_api.writer
def _create(context, name):
    if context.session.execute(
            sa.select(_RC_TBL.c.id).where(_RC_TBL.c.name == name)).first():
        raise exception.ResourceClassExists(resource_class=name)
    max_id = context.session.execute(
        sa.select(sa.func.max(_RC_TBL.c.id)).where(
            _RC_TBL.c.id >= MIN_CUSTOM_ID)).scalar()
    new_id = MIN_CUSTOM_ID if max_id is None else max_id + 1
    now = timeutils.utcnow()
    context.session.execute(_RC_TBL.insert().values(
        id=new_id, name=name, created_at=now))
    return ResourceClass(id=new_id, name=name, created_at=now)


def create(context, name):
    """Create the custom class ``name``.

    :raises exception.ResourceClassExists: the name is taken.
    :raises exception.MaxDBRetriesExceeded: concurrent creators kept
        taking the next id.
    """
    try:
        return _create(context, name)
    except db_exc.DBDuplicateEntry as exc:
        if not _id_taken(exc):
            raise exception.ResourceClassExists(resource_class=name)
    except db_exc.DBDeadlock:
        # InnoDB picked this transaction as the deadlock victim of
        # concurrent inserts every time.
        pass
    # A name clash shows on the next read; report it as such.
    try:
        get_by_name(context, name)
    except exception.ResourceClassNotFound:
        raise exception.MaxDBRetriesExceeded(
            action='create resource class %s' % name)
    raise exception.ResourceClassExists(resource_class=name)


@db_api.writer
def _rename(context, old_name, new_name):
    row = context.session.execute(
        sa.select(_RC_TBL).where(_RC_TBL.c.name == old_name)).first()
    if row is None:
        raise exception.ResourceClassNotFound(resource_class=old_name)
    if is_standard(old_name):
        raise exception.ResourceClassCannotUpdateStandard(
            resource_class=old_name)
    if context.session.execute(
            sa.select(_RC_TBL.c.id).where(
                _RC_TBL.c.name == new_name)).first():
        raise exception.ResourceClassExists(resource_class=new_name)
    now = timeutils.utcnow()
    context.session.execute(
        _RC_TBL.update().where(_RC_TBL.c.id == row.id).values(
            name=new_name, updated_at=now))
    return ResourceClass(id=row.id, name=new_name,
                         created_at=row.created_at, updated_at=now)


def rename(context, old_name, new_name):
    """Rename a custom class (the API's pre-1.7 PUT).

    :raises exception.ResourceClassNotFound: no class ``old_name``.
    :raises exception.ResourceClassCannotUpdateStandard: a standard class.
    :raises exception.ResourceClassExists: ``new_name`` is taken.
    """
    try:
        rc = _rename(context, old_name, new_name)
    except db_exc.DBDuplicateEntry:
        raise exception.ResourceClassExists(resource_class=new_name)
    attribute_cache.invalidate()
    return rc


@db_api.writer
def _destroy(context, name):
    row = context.session.execute(
        sa.select(_RC_TBL.c.id).where(_RC_TBL.c.name == name)).first()
    if row is None:
        raise exception.ResourceClassNotFound(resource_class=name)
    if is_standard(name):
        raise exception.ResourceClassCannotDeleteStandard(
            resource_class=name)
    in_use = context.session.execute(
        sa.select(_INV_TBL.c.id).where(
            _INV_TBL.c.resource_class_id == row.id).limit(1)).first()
    if in_use:
        raise exception.ResourceClassInUse(resource_class=name)
    context.session.execute(_RC_TBL.delete().where(_RC_TBL.c.id == row.id))


def destroy(context, name):
    """Delete the custom class ``name``.

    :raises exception.ResourceClassNotFound: no such class.
    :raises exception.ResourceClassCannotDeleteStandard: a standard class.
    :raises exception.ResourceClassInUse: some provider has inventory of it.
    """
    _destroy(context, name)
    # The id may be handed to the next new class.
    attribute_cache.invalidate()
