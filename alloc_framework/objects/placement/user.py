"""Users: the creators of consumers, known by their external id.

A user row is created the first time a consumer of that user writes
allocations; it is never deleted (other consumers may refer to it later).
"""

import sqlalchemy as sa

from alloc_framework.db import api as db_api
from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects.placement import exception

USER_TBL = models.User.__table__


class User:
    """A user as Placement knows it: internal id and external id."""

    def __init__(self, id=None, external_id=None):
        self.id = id
        self.external_id = external_id

    def __repr__(self):
        return 'User(id=%r, external_id=%r)' % (self.id, self.external_id)


@db_api.reader
def get_by_external_id(context, external_id):
    """Return the :class:`User` or raise ``UserNotFound``."""
    row = context.session.execute(
        sa.select(USER_TBL.c.id, USER_TBL.c.external_id).where(
            USER_TBL.c.external_id == external_id)).first()
    if row is None:
        raise exception.UserNotFound(external_id=external_id)
    return User(id=row.id, external_id=row.external_id)


@db_api.writer
def ensure(context, external_id):
    """Return the user with ``external_id``, creating it if needed.

    Two transactions creating the same user race on the unique key: the
    loser gets ``oslo_db.exception.DBDuplicateEntry`` and its caller retries
    the whole transaction (it then finds the row).
    """
    try:
        return get_by_external_id(context, external_id)
    except exception.UserNotFound:
        pass
    result = context.session.execute(
        USER_TBL.insert().values(external_id=external_id))
    return User(id=result.inserted_primary_key[0], external_id=external_id)
