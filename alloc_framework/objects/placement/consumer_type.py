"""Consumer types (microversion 1.38): a client-chosen kind of consumer.

A type is a name like ``INSTANCE`` or ``MIGRATION``; rows are created the
first time a name is used. Consumers written before 1.38 have no type and
are reported under :data:`NULL_CONSUMER_TYPE_ALIAS`.
"""

import sqlalchemy as sa

from alloc_framework.db import api as db_api
from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects.placement import exception

CONSUMER_TYPE_TBL = models.ConsumerType.__table__

# The key under which consumers without a type are reported.
NULL_CONSUMER_TYPE_ALIAS = 'unknown'
# The GET /usages?consumer_type= value that folds every type into one key.
ALL_CONSUMERS = 'all'


class ConsumerType:
    """A named consumer type."""

    def __init__(self, id=None, name=None):
        self.id = id
        self.name = name

    def __repr__(self):
        return 'ConsumerType(id=%r, name=%r)' % (self.id, self.name)


@db_api.reader
def get_by_name(context, name):
    """Return the :class:`ConsumerType` or raise ``ConsumerTypeNotFound``."""
    row = context.session.execute(
        sa.select(CONSUMER_TYPE_TBL.c.id, CONSUMER_TYPE_TBL.c.name).where(
            CONSUMER_TYPE_TBL.c.name == name)).first()
    if row is None:
        raise exception.ConsumerTypeNotFound(name=name)
    return ConsumerType(id=row.id, name=row.name)


@db_api.reader
def get_by_id(context, type_id):
    """Return the :class:`ConsumerType` or raise ``ConsumerTypeNotFound``."""
    row = context.session.execute(
        sa.select(CONSUMER_TYPE_TBL.c.id, CONSUMER_TYPE_TBL.c.name).where(
            CONSUMER_TYPE_TBL.c.id == type_id)).first()
    if row is None:
        raise exception.ConsumerTypeNotFound(name=type_id)
    return ConsumerType(id=row.id, name=row.name)


@db_api.writer
def ensure(context, name):
    """Return the type called ``name``, creating it if needed.

    A concurrent creation of the same name surfaces as
    ``oslo_db.exception.DBDuplicateEntry``; callers retry the transaction.
    """
    try:
        return get_by_name(context, name)
    except exception.ConsumerTypeNotFound:
        pass
    result = context.session.execute(
        CONSUMER_TYPE_TBL.insert().values(name=name))
    return ConsumerType(id=result.inserted_primary_key[0], name=name)
