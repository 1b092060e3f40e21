"""Consumers: the owners of allocations.

A consumer row (uuid, project, user, generation, consumer type) is created
by the first write of allocations for its uuid and deleted when its last
allocation goes. Its generation increases on every write of its
allocations; from microversion 1.28 clients must present it.

The functions here run inside the caller's transaction (the allocation
writer); only :func:`get_by_uuid` is meant to be called on its own. Those
of the allocation write path run their statements on the facade's
connection (``@writer.connection``, see ``db_api``): a claim sends them
many times a second, and the ORM session adds nothing to Core statements.
"""

import sqlalchemy as sa

from alloc_framework.db import api as db_api
from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects.placement import consumer_type as ct_obj
from alloc_framework.objects.placement import exception
from alloc_framework.objects.placement import project as project_obj
from alloc_framework.objects.placement import user as user_obj

CONSUMER_TBL = models.Consumer.__table__
_ALLOC_TBL = models.Allocation.__table__
_PROJECT_TBL = models.Project.__table__
_USER_TBL = models.User.__table__
_TYPE_TBL = models.ConsumerType.__table__


class Consumer:
    """A consumer with its project, user, generation and type name."""

    def __init__(self, id=None, uuid=None, project=None, user=None,
                 generation=0, consumer_type_id=None, consumer_type=None):
        self.id = id
        self.uuid = uuid
        self.project = project
        self.user = user
        self.generation = generation
        self.consumer_type_id = consumer_type_id
        # The type's name, or None for a consumer without a type.
        self.consumer_type = consumer_type

    def __repr__(self):
        return 'Consumer(uuid=%r, generation=%r)' % (
            self.uuid, self.generation)


def _select():
    return sa.select(
        CONSUMER_TBL.c.id, CONSUMER_TBL.c.uuid, CONSUMER_TBL.c.generation,
        CONSUMER_TBL.c.consumer_type_id,
        _TYPE_TBL.c.name.label('type_name'),
        _PROJECT_TBL.c.id.label('project_id'),
        _PROJECT_TBL.c.external_id.label('project_external_id'),
        _USER_TBL.c.id.label('user_id'),
        _USER_TBL.c.external_id.label('user_external_id'),
    ).select_from(
        CONSUMER_TBL.join(
            _PROJECT_TBL, CONSUMER_TBL.c.project_id == _PROJECT_TBL.c.id
        ).join(
            _USER_TBL, CONSUMER_TBL.c.user_id == _USER_TBL.c.id
        ).outerjoin(
            _TYPE_TBL, CONSUMER_TBL.c.consumer_type_id == _TYPE_TBL.c.id))


def _from_row(row):
    return Consumer(
        id=row.id, uuid=row.uuid, generation=row.generation,
        consumer_type_id=row.consumer_type_id, consumer_type=row.type_name,
        project=project_obj.Project(id=row.project_id,
                                    external_id=row.project_external_id),
        user=user_obj.User(id=row.user_id, external_id=row.user_external_id))


@db_api.reader
def get_by_uuid(context, uuid):
    """Return the :class:`Consumer` or raise ``ConsumerNotFound``."""
    row = context.session.execute(
        _select().where(CONSUMER_TBL.c.uuid == uuid)).first()
    if row is None:
        raise exception.ConsumerNotFound(consumer=uuid)
    return _from_row(row)


# Statements of the allocation write path, built once: building a
# statement and its cache key costs more than running it.
_GET_BY_UUIDS = _select().where(CONSUMER_TBL.c.uuid.in_(
    sa.bindparam('uuids', expanding=True)))
# The ids of a project, a user and a consumer type (each None when
# missing) in one round trip. ``OWNER_IDS`` are those three columns, for
# the statements of other modules that read them along with their own
# (bound to :project, :user and :type); a row holding them is what
# :func:`create` takes as ``owner_ids``.
_PROJECT_ID = (sa.select(_PROJECT_TBL.c.id)
               .where(_PROJECT_TBL.c.external_id == sa.bindparam('project'))
               .scalar_subquery().label('owner_project_id'))
_USER_ID = (sa.select(_USER_TBL.c.id)
            .where(_USER_TBL.c.external_id == sa.bindparam('user'))
            .scalar_subquery().label('owner_user_id'))
_TYPE_ID = (sa.select(_TYPE_TBL.c.id)
            .where(_TYPE_TBL.c.name == sa.bindparam('type'))
            .scalar_subquery().label('owner_type_id'))
OWNER_IDS = (_PROJECT_ID, _USER_ID, _TYPE_ID)
_OWNER_IDS = sa.select(*OWNER_IDS)
# One consumer (its columns None when it does not exist) and the ids of
# the owner a write asks for, in one round trip: a row is always returned
# (one row left-joined to the consumer).
_ONE_CONSUMER = _select().where(
    CONSUMER_TBL.c.uuid == sa.bindparam('uuid')).subquery('consumer')
_CONSUMER_AND_OWNER = sa.select(
    _ONE_CONSUMER, *OWNER_IDS).select_from(
        sa.select(sa.literal(1).label('one')).subquery('one').outerjoin(
            _ONE_CONSUMER, sa.true()))
_INSERT = CONSUMER_TBL.insert()
_INCREMENT_GENERATION = (
    CONSUMER_TBL.update()
    .where(CONSUMER_TBL.c.id == sa.bindparam('b_id'),
           CONSUMER_TBL.c.generation == sa.bindparam('b_generation'))
    .values(generation=sa.bindparam('b_new_generation')))


@db_api.reader.connection
def get_by_uuids(context, uuids):
    """Return a dict, keyed by uuid, of the existing consumers in ``uuids``.
    """
    if not uuids:
        return {}
    rows = context.connection.execute(_GET_BY_UUIDS, {'uuids': sorted(uuids)})
    return {row.uuid: _from_row(row) for row in rows}


@db_api.reader.connection
def get_with_owner_ids(context, uuid, project_id, user_id,
                       consumer_type=None):
    """The consumer ``uuid`` (or None) and the ids of an owner.

    One statement for what :func:`get_by_uuids` and the first statement
    of :func:`create` read: the write of one consumer's allocations needs
    both.

    :returns: ``(Consumer or None, owner_ids)``; ``owner_ids`` is to be
        passed on to :func:`create`.
    """
    row = context.connection.execute(_CONSUMER_AND_OWNER, {
        'uuid': uuid, 'project': project_id, 'user': user_id,
        'type': consumer_type}).one()
    return (None if row.id is None else _from_row(row)), row


@db_api.writer.connection
def create(context, uuid, project_id, user_id, consumer_type=None,
           generation=0, owner_ids=None):
    """Create a consumer and return it.

    ``project_id`` and ``user_id`` are external ids; their rows (and the
    type's) are created when missing. ``consumer_type`` is a type name or
    None. A concurrent creation of the same uuid raises
    ``DBDuplicateEntry``.

    :param generation: the generation to write; an allocation write that
        creates the consumer writes its first generation, 1, at once.
    :param owner_ids: what :func:`get_with_owner_ids` returned for these
        project, user and type, read earlier in this transaction; read
        here when None.
    """
    ids = owner_ids
    if ids is None:
        ids = context.connection.execute(_OWNER_IDS, {
            'project': project_id, 'user': user_id,
            'type': consumer_type}).one()
    if ids.owner_project_id is None:
        project = project_obj.ensure(context, project_id)
    else:
        project = project_obj.Project(id=ids.owner_project_id,
                                      external_id=project_id)
    if ids.owner_user_id is None:
        user = user_obj.ensure(context, user_id)
    else:
        user = user_obj.User(id=ids.owner_user_id, external_id=user_id)
    type_id = ids.owner_type_id
    if consumer_type is not None and type_id is None:
        type_id = ct_obj.ensure(context, consumer_type).id
    result = context.connection.execute(_INSERT, {
        'uuid': uuid, 'project_id': project.id, 'user_id': user.id,
        'generation': generation, 'consumer_type_id': type_id})
    return Consumer(id=result.inserted_primary_key[0], uuid=uuid,
                    project=project, user=user, generation=generation,
                    consumer_type_id=type_id, consumer_type=consumer_type)


@db_api.writer.connection
def update_owner(context, consumer, project_id, user_id, consumer_type=None):
    """Move ``consumer`` to another project/user/type when they differ.

    ``consumer_type`` None leaves the type alone (requests older than 1.38
    do not send one). The generation is not touched here: the allocation
    write that calls this bumps it once.
    """
    values = {}
    if project_id != consumer.project.external_id:
        consumer.project = project_obj.ensure(context, project_id)
        values['project_id'] = consumer.project.id
    if user_id != consumer.user.external_id:
        consumer.user = user_obj.ensure(context, user_id)
        values['user_id'] = consumer.user.id
    if (consumer_type is not None and
            consumer_type != consumer.consumer_type):
        consumer.consumer_type_id = ct_obj.ensure(context, consumer_type).id
        consumer.consumer_type = consumer_type
        values['consumer_type_id'] = consumer.consumer_type_id
    if values:
        context.connection.execute(CONSUMER_TBL.update().where(
            CONSUMER_TBL.c.id == consumer.id).values(**values))


@db_api.writer.connection
def increment_generation(context, consumer):
    """Compare-and-swap the consumer's generation to the next value.

    :raises: ConsumerConcurrentUpdateDetected when another transaction
        changed the consumer since it was read.
    """
    new_generation = consumer.generation + 1
    result = context.connection.execute(_INCREMENT_GENERATION, {
        'b_id': consumer.id, 'b_generation': consumer.generation,
        'b_new_generation': new_generation})
    if result.rowcount != 1:
        raise exception.ConsumerConcurrentUpdateDetected(uuid=consumer.uuid)
    consumer.generation = new_generation


@db_api.writer.connection
def delete_if_no_allocations(context, consumers):
    """Delete those of ``consumers`` that have no allocation left.

    The delete is guarded by the generation read earlier in the
    transaction, so a consumer changed concurrently is detected rather than
    silently removed.
    """
    for consumer in consumers:
        has_allocs = context.connection.execute(
            sa.select(_ALLOC_TBL.c.id).where(
                _ALLOC_TBL.c.consumer_id == consumer.uuid).limit(1)).first()
        if has_allocs is not None:
            continue
        result = context.connection.execute(CONSUMER_TBL.delete().where(
            sa.and_(CONSUMER_TBL.c.id == consumer.id,
                    CONSUMER_TBL.c.generation == consumer.generation)))
        if result.rowcount != 1:
            raise exception.ConsumerConcurrentUpdateDetected(
                uuid=consumer.uuid)
