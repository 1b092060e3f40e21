"""Resource providers and provider trees.

A provider row carries ``parent_provider_id`` (its immediate parent) and
``root_provider_id`` (the top of its tree; itself for a root). Every write
that changes what a provider offers bumps its ``generation`` with a
compare-and-swap (:func:`increment_generation`) so that concurrent writers
see a conflict instead of silently overwriting each other.

Listing with filters lives in ``provider_search``; inventories, provider
aggregates and provider traits have their own modules.
"""

import functools

from oslo_db import exception as db_exc
from oslo_utils import uuidutils
import sqlalchemy as sa

from alloc_framework.db import api as db_api
from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects.placement import exception

RP_TBL = models.ResourceProvider.__table__
INV_TBL = models.Inventory.__table__
ALLOC_TBL = models.Allocation.__table__
RP_TRAIT_TBL = models.ResourceProviderTrait.__table__
RP_AGG_TBL = models.ResourceProviderAggregate.__table__
MARK_TBL = models.OverCapacityMark.__table__

# Marks "argument not given" where None is a meaningful value (un-parent).
_UNSET = object()


class ResourceProvider:
    """A resource provider as read from the database.

    Plain data; functions of this module read and write it. ``id``,
    ``parent_provider_id`` and ``root_provider_id`` are internal and never
    leave the service.
    """

    FIELDS = ('id', 'uuid', 'name', 'generation', 'parent_provider_id',
              'parent_provider_uuid', 'root_provider_id',
              'root_provider_uuid', 'created_at', 'updated_at')

    def __init__(self, **kwargs):
        for field in self.FIELDS:
            setattr(self, field, kwargs.get(field))
        if self.generation is None:
            self.generation = 0

    def __repr__(self):
        return '<ResourceProvider %s (%s) gen %s>' % (
            self.uuid, self.name, self.generation)

    @classmethod
    def get_by_uuid(cls, context, uuid):
        """The provider ``uuid``; raises ``ResourceProviderNotFound``."""
        return get_by_uuid(context, uuid)


def provider_select():
    """A SELECT of provider rows with their parent and root uuids.

    Shared with ``provider_search`` so that every listing serialises the
    same columns.
    """
    parent = RP_TBL.alias('parent')
    root = RP_TBL.alias('root')
    return sa.select(
        RP_TBL.c.id, RP_TBL.c.uuid, RP_TBL.c.name, RP_TBL.c.generation,
        RP_TBL.c.parent_provider_id, RP_TBL.c.root_provider_id,
        RP_TBL.c.created_at, RP_TBL.c.updated_at,
        parent.c.uuid.label('parent_provider_uuid'),
        root.c.uuid.label('root_provider_uuid'),
    ).select_from(
        RP_TBL.outerjoin(parent, RP_TBL.c.parent_provider_id == parent.c.id)
        .outerjoin(root, RP_TBL.c.root_provider_id == root.c.id))


def from_row(row):
    return ResourceProvider(**{f: row._mapping[f]
                               for f in ResourceProvider.FIELDS})


@db_api.reader
def get_by_uuid(context, uuid):
    """The provider ``uuid``; raises ``ResourceProviderNotFound``."""
    row = context.session.execute(
        provider_select().where(RP_TBL.c.uuid == uuid)).first()
    if row is None:
        raise exception.ResourceProviderNotFound(uuid=uuid)
    return from_row(row)


@db_api.reader
def get_by_id(context, rp_id):
    row = context.session.execute(
        provider_select().where(RP_TBL.c.id == rp_id)).first()
    if row is None:
        raise exception.ResourceProviderNotFound(uuid=rp_id)
    return from_row(row)


@db_api.reader
def get_by_uuids(context, uuids):
    """``{uuid: ResourceProvider}`` for those of ``uuids`` that exist."""
    if not uuids:
        return {}
    rows = context.session.execute(
        provider_select().where(RP_TBL.c.uuid.in_(list(uuids)))).all()
    return {row.uuid: from_row(row) for row in rows}


# Built once: every write of a provider's inventories, traits, aggregates
# or allocations runs it.
_INCREMENT_GENERATION = (
    RP_TBL.update()
    .where(RP_TBL.c.id == sa.bindparam('b_id'),
           RP_TBL.c.generation == sa.bindparam('b_generation'))
    .values(generation=sa.bindparam('b_new_generation')))


@db_api.writer.connection
def increment_generation(context, rp):
    """Compare-and-swap ``rp``'s generation to ``rp.generation + 1``.

    Also serialises writers of one provider: the UPDATE holds the row lock
    until the transaction ends, so checks made after it (usage against
    capacity, ...) cannot be invalidated by another writer that also bumps
    the generation.

    :raises ResourceProviderConcurrentUpdateDetected: the generation in the
        database is not ``rp.generation`` (or the provider is gone).
    """
    new_generation = rp.generation + 1
    result = context.connection.execute(_INCREMENT_GENERATION, {
        'b_id': rp.id, 'b_generation': rp.generation,
        'b_new_generation': new_generation})
    if result.rowcount != 1:
        raise exception.ResourceProviderConcurrentUpdateDetected()
    rp.generation = new_generation


def keep_generation_on_error(fn):
    """Decorator for ``fn(context, rp, ...)`` writers of one provider.

    When ``fn`` fails its transaction is rolled back, so the generation
    that :func:`increment_generation` set on ``rp`` must be undone too;
    otherwise the caller's next write with ``rp`` would look stale.

    A deadlock the database broke by rolling us back (InnoDB gap locks of
    writers of neighbouring providers) is a concurrent update like any
    other: the client re-reads and retries, without a server-side sleep.
    """
    @functools.wraps(fn)
    def wrapper(context, rp, *args, **kwargs):
        generation = rp.generation
        try:
            return fn(context, rp, *args, **kwargs)
        except db_exc.DBDeadlock:
            rp.generation = generation
            raise exception.ResourceProviderConcurrentUpdateDetected()
        except Exception:
            rp.generation = generation
            raise
    return wrapper


def _duplicate(exc, uuid, name):
    """The domain exception for a unique constraint hit on create/update."""
    columns = ' '.join(exc.columns or [])
    if 'uuid' in columns:
        return exception.ResourceProviderExists(
            'Conflicting resource provider uuid: %s already exists.' % uuid)
    return exception.ResourceProviderExists(
        'Conflicting resource provider name: %s already exists.' % name)


@db_api.writer
def create(context, name, uuid=None, parent_provider_uuid=None):
    """Create a provider and return it (generation 0).

    A provider without parent is the root of a new tree; a child joins the
    tree of its parent.

    :raises ResourceProviderExists: the name or the uuid is taken.
    :raises InvalidResourceProviderParent: the parent does not exist or is
        the provider itself.
    """
    uuid = uuid or uuidutils.generate_uuid()
    parent_id = root_id = None
    if parent_provider_uuid is not None:
        if parent_provider_uuid == uuid:
            raise exception.InvalidResourceProviderParent(
                'parent provider UUID cannot be same as UUID. Please set '
                'parent provider UUID to None if there is no parent.')
        parent = _ids_by_uuid(context, parent_provider_uuid)
        if parent is None:
            raise exception.InvalidResourceProviderParent(
                'parent provider UUID does not exist.')
        parent_id, root_id = parent.id, parent.root_provider_id
    try:
        result = context.session.execute(RP_TBL.insert().values(
            uuid=uuid, name=name, generation=0,
            parent_provider_id=parent_id, root_provider_id=root_id))
    except db_exc.DBDuplicateEntry as exc:
        raise _duplicate(exc, uuid, name)
    except db_exc.DBReferenceError:
        # The parent was deleted between our read and the insert.
        raise exception.InvalidResourceProviderParent(
            'parent provider UUID does not exist.')
    rp_id = result.inserted_primary_key[0]
    if root_id is None:
        context.session.execute(RP_TBL.update().where(
            RP_TBL.c.id == rp_id).values(root_provider_id=rp_id))
    return get_by_id(context, rp_id)


def _ids_by_uuid(context, uuid, lock=False):
    query = sa.select(RP_TBL.c.id, RP_TBL.c.parent_provider_id,
                      RP_TBL.c.root_provider_id, RP_TBL.c.generation).where(
        RP_TBL.c.uuid == uuid)
    if lock:
        # A locking read also sees the latest committed row where a plain
        # read would see the transaction's snapshot (REPEATABLE READ).
        query = query.with_for_update()
    return context.session.execute(query).first()


def _subtree_ids(context, rp_id, root_id):
    """Ids of ``rp_id`` and all its descendants (walks its tree once)."""
    rows = context.session.execute(
        sa.select(RP_TBL.c.id, RP_TBL.c.parent_provider_id)
        .where(RP_TBL.c.root_provider_id == root_id)
        .with_for_update()).all()
    children = {}
    for row in rows:
        children.setdefault(row.parent_provider_id, []).append(row.id)
    found = []
    todo = [rp_id]
    while todo:
        current = todo.pop()
        if current in found:
            continue
        found.append(current)
        todo.extend(children.get(current, ()))
    return found


def _lock_trees(context, rp_uuid, mine, parent_uuid):
    """Lock the root rows of the trees a move touches, in id order.

    Two moves that could together build a loop (A under B, B under A)
    touch the same trees, so they run one after the other and the second
    sees the first's result. Returns the provider and parent rows re-read
    after the lock.

    :raises ResourceProviderConcurrentUpdateDetected: a tree changed
        between the first read and the lock.
    """
    parent = None
    roots = {mine.root_provider_id}
    if parent_uuid is not None:
        parent = _ids_by_uuid(context, parent_uuid)
        if parent is not None:
            roots.add(parent.root_provider_id)
    context.session.execute(
        sa.select(RP_TBL.c.id).where(RP_TBL.c.id.in_(sorted(roots)))
        .order_by(RP_TBL.c.id).with_for_update()).all()
    mine = _ids_by_uuid(context, rp_uuid, lock=True)
    if parent_uuid is not None:
        parent = _ids_by_uuid(context, parent_uuid, lock=True)
    current = {row.root_provider_id for row in (mine, parent) if row}
    if mine is None or not current <= roots:
        raise exception.ResourceProviderConcurrentUpdateDetected()
    return mine, parent


@db_api.writer
def update(context, rp, name=_UNSET, parent_provider_uuid=_UNSET,
           allow_reparenting=False):
    """Rename and/or re-parent ``rp``; returns the provider as stored.

    ``parent_provider_uuid`` left out keeps the parent. Without
    ``allow_reparenting`` (before microversion 1.37) a parent may only be
    given to a root provider, never changed or removed. Moving a provider
    moves its whole subtree to the new root. The generation is left alone
    (as upstream Placement does): it counts changes to what the provider
    offers (inventory, traits, aggregates, allocations), not its name or
    place in the tree.

    :raises ResourceProviderNotFound: ``rp`` was deleted meanwhile.
    :raises ResourceProviderExists: the new name is taken.
    :raises InvalidResourceProviderParent: unknown parent, forbidden
        re-parenting or a loop in the tree.
    :raises ResourceProviderConcurrentUpdateDetected: ``rp`` changed
        meanwhile (only checked when the parent changes).
    """
    mine = _ids_by_uuid(context, rp.uuid)
    if mine is None:
        raise exception.ResourceProviderNotFound(uuid=rp.uuid)
    values = {}
    if name is not _UNSET:
        values['name'] = name
    if parent_provider_uuid is not _UNSET:
        mine, parent = _lock_trees(context, rp.uuid, mine,
                                   parent_provider_uuid)
        if _check_new_parent(context, mine, parent, parent_provider_uuid,
                             allow_reparenting):
            values['root_provider_id'] = _apply_new_parent(context, mine,
                                                           parent)
    if values:
        try:
            context.session.execute(RP_TBL.update().where(
                RP_TBL.c.id == mine.id).values(**values))
        except db_exc.DBDuplicateEntry as exc:
            raise _duplicate(exc, rp.uuid, name)
    return get_by_id(context, mine.id)


def _check_new_parent(context, mine, parent, parent_uuid,
                      allow_reparenting):
    """Validate a parent change; True when the parent actually changes."""
    if parent_uuid is None:
        if mine.parent_provider_id is None:
            return False
        if not allow_reparenting:
            raise exception.InvalidResourceProviderParent(
                'un-parenting a provider is not currently allowed.')
        return True
    if parent is None:
        raise exception.InvalidResourceProviderParent(
            'parent provider UUID does not exist.')
    if parent.id == mine.parent_provider_id:
        return False
    if mine.parent_provider_id is not None and not allow_reparenting:
        raise exception.InvalidResourceProviderParent(
            're-parenting a provider is not currently allowed.')
    if parent.id in _subtree_ids(context, mine.id, mine.root_provider_id):
        raise exception.InvalidResourceProviderParent(
            'creating loop in the provider tree is not allowed.')
    return True


def _apply_new_parent(context, mine, parent):
    """Point ``mine`` at ``parent``; move its subtree; the new root id."""
    if parent is None:
        parent_id, new_root = None, mine.id
    else:
        parent_id, new_root = parent.id, parent.root_provider_id
    subtree = _subtree_ids(context, mine.id, mine.root_provider_id)
    context.session.execute(RP_TBL.update().where(
        RP_TBL.c.id == mine.id).values(parent_provider_id=parent_id))
    context.session.execute(RP_TBL.update().where(
        RP_TBL.c.id.in_(subtree)).values(root_provider_id=new_root))
    return new_root


@db_api.writer
def destroy(context, rp):
    """Delete ``rp`` with its inventories, traits, aggregate links and
    over-capacity marks.

    :raises ResourceProviderNotFound: no such provider.
    :raises CannotDeleteParentResourceProvider: it has children.
    :raises ResourceProviderInUse: it has allocations.
    """
    # Lock the row first: writers of allocations or children of this
    # provider touch it too, so they wait for us and then find it gone.
    row = context.session.execute(
        sa.select(RP_TBL.c.id).where(RP_TBL.c.uuid == rp.uuid)
        .with_for_update()).first()
    if row is None:
        raise exception.ResourceProviderNotFound(uuid=rp.uuid)
    rp_id = row.id
    child = context.session.execute(
        sa.select(RP_TBL.c.id).where(RP_TBL.c.parent_provider_id == rp_id)
        .limit(1)).first()
    if child is not None:
        raise exception.CannotDeleteParentResourceProvider()
    if has_allocations(context, rp_id):
        raise exception.ResourceProviderInUse()
    for table in (INV_TBL, RP_TRAIT_TBL, RP_AGG_TBL, MARK_TBL):
        context.session.execute(table.delete().where(
            table.c.resource_provider_id == rp_id))
    # A root points at itself; clear that before deleting the row so that
    # databases checking the foreign key per statement accept it.
    context.session.execute(RP_TBL.update().where(
        RP_TBL.c.id == rp_id).values(root_provider_id=None))
    context.session.execute(RP_TBL.delete().where(RP_TBL.c.id == rp_id))


def has_allocations(context, rp_id, rc_id=None):
    """Whether any allocation uses provider ``rp_id`` (of class rc_id)."""
    query = sa.select(ALLOC_TBL.c.id).where(
        ALLOC_TBL.c.resource_provider_id == rp_id)
    if rc_id is not None:
        query = query.where(ALLOC_TBL.c.resource_class_id == rc_id)
    return context.session.execute(query.limit(1)).first() is not None


def usages_by_class(context, rp_id):
    """``{resource_class_id: used}`` of provider ``rp_id``."""
    rows = context.session.execute(
        sa.select(ALLOC_TBL.c.resource_class_id,
                  sa.func.sum(ALLOC_TBL.c.used).label('used'))
        .where(ALLOC_TBL.c.resource_provider_id == rp_id)
        .group_by(ALLOC_TBL.c.resource_class_id)).all()
    return {row.resource_class_id: int(row.used) for row in rows}
