"""Projects: the owners of consumers, known by their external id.

A project row is created the first time a consumer of that project writes
allocations; it is never deleted (other consumers may refer to it later).
"""

import sqlalchemy as sa

from alloc_framework.db import api as db_api
from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects.placement import exception

PROJECT_TBL = models.Project.__table__


class Project:
    """A project as Placement knows it: internal id and external id."""

    def __init__(self, id=None, external_id=None):
        self.id = id
        self.external_id = external_id

    def __repr__(self):
        return 'Project(id=%r, external_id=%r)' % (self.id, self.external_id)


@db_api.reader
def get_by_external_id(context, external_id):
    """Return the :class:`Project` or raise ``ProjectNotFound``."""
    row = context.session.execute(
        sa.select(PROJECT_TBL.c.id, PROJECT_TBL.c.external_id).where(
            PROJECT_TBL.c.external_id == external_id)).first()
    if row is None:
        raise exception.ProjectNotFound(external_id=external_id)
    return Project(id=row.id, external_id=row.external_id)


@db_api.writer
def ensure(context, external_id):
    """Return the project with ``external_id``, creating it if needed.

    Two transactions creating the same project race on the unique key: the
    loser gets ``oslo_db.exception.DBDuplicateEntry`` and its caller retries
    the whole transaction (it then finds the row).
    """
    try:
        return get_by_external_id(context, external_id)
    except exception.ProjectNotFound:
        pass
    result = context.session.execute(
        PROJECT_TBL.insert().values(external_id=external_id))
    return Project(id=result.inserted_primary_key[0],
                   external_id=external_id)
