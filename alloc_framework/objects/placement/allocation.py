"""Allocations: a consumer's use of inventory of resource providers.

Writing is always "replace all allocations of these consumers" and happens
in one ``@db_api.writer`` transaction (:func:`replace_all`), whether one
consumer is written (``PUT /allocations/{uuid}``) or many (``POST
/allocations``, the reshaper).

Concurrency. Capacity is checked against the usage read inside the
transaction, and every provider whose allocations change gets its
generation bumped with a compare-and-swap against the generation read
*before* that usage. A writer that committed in between bumped the
generation, so the swap fails and the whole write is retried (up to
``[placement]allocation_conflict_retry_count`` times). This holds on
PostgreSQL and MySQL/MariaDB, both in READ COMMITTED (the generation is
read by an earlier statement than the usage; see ``db_api._mysql_setup``),
and on SQLite (writers are serialized). The providers that
receive allocations are also locked first (``SELECT ... FOR UPDATE``) so
that concurrent writers queue instead of retrying in a loop; the swap, not
the lock, is what guarantees the capacity. That locking statement also
reads their generations (so they are read before the usage); the
generations of providers that only lose allocations are read after the
delete that finds them, still before the usage.

Where an UPDATE returns the rows it changed (PostgreSQL, SQLite), the
lock of the providers that receive allocations is their generation bump
itself (``UPDATE ... WHERE id IN (SELECT ... FOR UPDATE) RETURNING``):
the generation is read and changed in one statement, before the usage,
and nobody else can change it before the transaction ends, which is
what the later swap made sure of. A writer that read the generation
earlier (an inventory update) still fails its own swap.

Cost. A claim (a new consumer on one provider) takes six statements on
PostgreSQL and SQLite: the consumer (if it exists) with the ids of the
owner's project, user and type in one select, then the lock with the
generation bump, the delete of the consumer's old allocations (which
returns their providers where the database can), the capacity check,
the consumer insert (at generation 1: nobody else can have seen it)
and the allocation insert. Only the last five run while the provider
is locked, so the writers of one provider queue for less time. MySQL
and MariaDB lock with a ``SELECT ... FOR UPDATE`` and swap the
generation at the end (seven statements; eight on MySQL, which reads
the old allocations' providers before deleting them). The statements
of this path are built once, at import: building a statement and its
cache key costs more than running it; they run on the facade's
connection (``@writer.connection``), not through the ORM session, whose
``execute`` cost more than the driver's for each of them.
"""

import collections

from oslo_config import cfg
from oslo_db import exception as db_exc
from oslo_log import log as logging
import sqlalchemy as sa

from alloc_framework.db import api as db_api
from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects.placement import attribute_cache
from alloc_framework.objects.placement import consumer as consumer_obj
from alloc_framework.objects.placement import exception
from alloc_framework.objects.placement import resource_provider as rp_obj

LOG = logging.getLogger(__name__)

ALLOC_TBL = models.Allocation.__table__
_RP_TBL = models.ResourceProvider.__table__
_INV_TBL = models.Inventory.__table__
_CONSUMER_TBL = models.Consumer.__table__

# Failures that mean "another transaction got there first": the write is
# tried again from scratch, with fresh reads.
_RETRYABLE = (exception.ResourceProviderConcurrentUpdateDetected,
              exception.ConsumerConcurrentUpdateDetected,
              db_exc.DBDuplicateEntry,
              db_exc.DBDeadlock)


def _lost_race(exc):
    return isinstance(exc, _RETRYABLE)


class ResourceProviderRef:
    """The provider side of an allocation: id, uuid and generation."""

    def __init__(self, id=None, uuid=None, generation=None):
        self.id = id
        self.uuid = uuid
        self.generation = generation


class Allocation:
    """One row: ``used`` units of ``resource_class`` on a provider."""

    def __init__(self, id=None, resource_provider=None, consumer=None,
                 resource_class=None, used=0, created_at=None,
                 updated_at=None):
        self.id = id
        self.resource_provider = resource_provider
        self.consumer = consumer
        self.resource_class = resource_class
        self.used = used
        self.created_at = created_at
        self.updated_at = updated_at


class ConsumerAllocations:
    """The full desired allocations of one consumer, as a request.

    :param consumer_uuid: the consumer.
    :param allocations: dict ``{provider uuid: {resource class: amount}}``;
        empty removes every allocation of the consumer (and the consumer).
    :param project_id: external project id (never None when
        ``allocations`` is not empty: callers substitute the configured
        incomplete-consumer project for old microversions).
    :param user_id: external user id (same).
    :param consumer_generation: the generation the client last saw, None
        for "the consumer must not exist yet".
    :param check_generation: whether ``consumer_generation`` is checked
        (microversion 1.28 and later).
    :param consumer_type: a type name, or None to keep the current one
        (new consumers then have no type).
    """

    def __init__(self, consumer_uuid, allocations, project_id, user_id,
                 consumer_generation=None, check_generation=False,
                 consumer_type=None):
        self.consumer_uuid = consumer_uuid
        self.allocations = allocations
        self.project_id = project_id
        self.user_id = user_id
        self.consumer_generation = consumer_generation
        self.check_generation = check_generation
        self.consumer_type = consumer_type


def resolve_resource_classes(context, requests):
    """Map every resource class name used in ``requests`` to its id.

    Done before the write transaction starts, so that cache refreshes do
    not happen inside it.

    :raises: ResourceClassNotFound
    """
    names = {rc for req in requests
             for resources in req.allocations.values()
             for rc in resources}
    return {name: attribute_cache.rc_id(context, name)
            for name in sorted(names)}


def _retry_count(retries):
    if retries is not None:
        return retries
    return cfg.CONF.placement.allocation_conflict_retry_count


def _retrying(retries):
    """Re-run the decorated write up to ``retries`` times if it lost a race.

    Built per call: the count is a per-request option.
    """
    return db_api.retrying(max_retries=retries,
                           exception_checker=_lost_race)


def replace_all(context, requests, retries=None):
    """Replace all allocations of the consumers in ``requests`` atomically.

    :param requests: a list of :class:`ConsumerAllocations`.
    :param retries: how often a write that lost a race is tried again;
        defaults to ``[placement]allocation_conflict_retry_count``.
    :raises: ResourceProviderNotFound, ResourceClassNotFound,
        InvalidInventory (and its capacity/constraint subclasses),
        ConsumerGenerationConflict, ConcurrentUpdateDetected (retries
        exhausted).
    """
    rc_ids = resolve_resource_classes(context, requests)
    retries = _retry_count(retries)
    try:
        return _retrying(retries)(_replace_all)(context, requests, rc_ids)
    except _RETRYABLE as exc:
        LOG.warning('Giving up writing allocations after %d retries: %s',
                    retries, exc)
        raise exception.ResourceProviderConcurrentUpdateDetected()


@db_api.writer.connection
def _replace_all(context, requests, rc_ids):
    write_allocations(context, requests, rc_ids)


# The statements of the write path, built once (see the module docstring).
_LOCK_PROVIDERS = (
    sa.select(_RP_TBL.c.id, _RP_TBL.c.uuid, _RP_TBL.c.generation)
    .where(_RP_TBL.c.uuid.in_(sa.bindparam('uuids', expanding=True)))
    .order_by(_RP_TBL.c.id)
    .with_for_update())
# Where UPDATE ... RETURNING exists (PostgreSQL, SQLite), the lock is
# the generation bump itself: the rows are locked in the order of their
# ids by the sub-select, then bumped, and the new generations returned.
_LOCK_AND_BUMP = (
    _RP_TBL.update()
    .where(_RP_TBL.c.id.in_(
        sa.select(_RP_TBL.c.id)
        .where(_RP_TBL.c.uuid.in_(sa.bindparam('uuids', expanding=True)))
        .order_by(_RP_TBL.c.id)
        .with_for_update()))
    .values(generation=_RP_TBL.c.generation + 1)
    .returning(_RP_TBL.c.id, _RP_TBL.c.uuid, _RP_TBL.c.generation))
_GENERATIONS = (
    sa.select(_RP_TBL.c.id, _RP_TBL.c.uuid, _RP_TBL.c.generation)
    .where(_RP_TBL.c.id.in_(sa.bindparam('ids', expanding=True))))
_OLD_PROVIDERS = (
    sa.select(ALLOC_TBL.c.resource_provider_id).distinct()
    .where(ALLOC_TBL.c.consumer_id.in_(
        sa.bindparam('consumers', expanding=True))))
_DELETE = ALLOC_TBL.delete().where(ALLOC_TBL.c.consumer_id.in_(
    sa.bindparam('consumers', expanding=True)))
_DELETE_RETURNING = _DELETE.returning(ALLOC_TBL.c.resource_provider_id)
_INSERT = ALLOC_TBL.insert()
_USED = (sa.select(sa.func.coalesce(sa.func.sum(ALLOC_TBL.c.used), 0))
         .where(sa.and_(
             ALLOC_TBL.c.resource_provider_id ==
             _INV_TBL.c.resource_provider_id,
             ALLOC_TBL.c.resource_class_id ==
             _INV_TBL.c.resource_class_id))
         .scalar_subquery())
_CAPACITY = (
    sa.select(_INV_TBL.c.resource_provider_id,
              _INV_TBL.c.resource_class_id, _INV_TBL.c.total,
              _INV_TBL.c.reserved, _INV_TBL.c.min_unit,
              _INV_TBL.c.max_unit, _INV_TBL.c.step_size,
              _INV_TBL.c.allocation_ratio, _USED.label('used'))
    .where(sa.and_(
        _INV_TBL.c.resource_provider_id.in_(
            sa.bindparam('rp_ids', expanding=True)),
        _INV_TBL.c.resource_class_id.in_(
            sa.bindparam('rc_ids', expanding=True)))))


def _lock_providers(context, uuids):
    """Lock the providers' rows and read their ids and generations.

    Where the database returns the rows an UPDATE changed, the lock bumps
    the generations at once: the ``bumped`` providers need no swap later
    (nobody can change them before the transaction ends).

    :returns: ``({uuid: ResourceProviderRef}, bumped)``.
    :raises: ResourceProviderNotFound naming the missing providers.
    """
    if not uuids:
        return {}, False
    bumped = context.connection.dialect.update_returning
    rows = context.connection.execute(
        _LOCK_AND_BUMP if bumped else _LOCK_PROVIDERS,
        {'uuids': sorted(uuids)})
    found = {row.uuid: ResourceProviderRef(row.id, row.uuid, row.generation)
             for row in rows}
    missing = set(uuids) - set(found)
    if missing:
        raise exception.ResourceProviderNotFound(
            'No such resource provider(s): %s.' % ', '.join(sorted(missing)),
            uuids=sorted(missing))
    return found, bumped


def _generations(context, rp_ids):
    """``{id: ResourceProviderRef}`` of providers that are not locked."""
    if not rp_ids:
        return {}
    rows = context.connection.execute(_GENERATIONS, {'ids': sorted(rp_ids)})
    return {row.id: ResourceProviderRef(row.id, row.uuid, row.generation)
            for row in rows}


def _delete_allocations(context, consumer_uuids):
    """Delete the consumers' allocations; the ids of their providers."""
    params = {'consumers': sorted(consumer_uuids)}
    if context.connection.dialect.delete_returning:
        return {row.resource_provider_id for row in
                context.connection.execute(_DELETE_RETURNING, params)}
    # MySQL has no DELETE ... RETURNING.
    old_rp_ids = {row.resource_provider_id for row in
                  context.connection.execute(_OLD_PROVIDERS, params)}
    context.connection.execute(_DELETE, params)
    return old_rp_ids


@db_api.writer.connection
def increment_generations(context, providers):
    """Compare-and-swap each provider's generation to the next value.

    :param providers: iterable of :class:`ResourceProviderRef` holding the
        generation read earlier in this transaction; updated in place.
    :raises: ResourceProviderConcurrentUpdateDetected
    """
    # A fixed order keeps two writers of the same providers from locking
    # them in opposite orders.
    for rp in sorted(providers, key=lambda p: p.id):
        rp_obj.increment_generation(context, rp)


def _check_capacity(context, wanted, rp_by_id, rc_names):
    """Check the new allocations against inventory and current usage.

    :param wanted: list of ``(rp_id, rc_id, amount)`` to be inserted.
    """
    rows = context.connection.execute(_CAPACITY, {
        'rp_ids': sorted({w[0] for w in wanted}),
        'rc_ids': sorted({w[1] for w in wanted})})
    inventory = {(row.resource_provider_id, row.resource_class_id): row
                 for row in rows}
    totals = collections.Counter()
    for rp_id, rc_id, amount in wanted:
        rp_uuid = rp_by_id[rp_id]
        rc_name = rc_names[rc_id]
        inv = inventory.get((rp_id, rc_id))
        if inv is None:
            raise exception.InvalidInventory(resource_class=rc_name,
                                             resource_provider=rp_uuid)
        if (amount < inv.min_unit or amount > inv.max_unit or
                amount % inv.step_size != 0):
            LOG.info('Allocation of %(amount)s %(rc)s on provider %(rp)s '
                     'violates min_unit %(min)s, max_unit %(max)s or '
                     'step_size %(step)s',
                     {'amount': amount, 'rc': rc_name, 'rp': rp_uuid,
                      'min': inv.min_unit, 'max': inv.max_unit,
                      'step': inv.step_size})
            raise exception.InvalidAllocationConstraintsViolated(
                resource_class=rc_name, resource_provider=rp_uuid)
        totals[(rp_id, rc_id)] += amount
    for (rp_id, rc_id), amount in sorted(totals.items()):
        inv = inventory[(rp_id, rc_id)]
        capacity = (inv.total - inv.reserved) * inv.allocation_ratio
        if inv.used + amount > capacity:
            LOG.info('Over capacity for %(rc)s on provider %(rp)s: '
                     'needed %(needed)s, used %(used)s, capacity %(cap)s',
                     {'rc': rc_names[rc_id], 'rp': rp_by_id[rp_id],
                      'needed': amount, 'used': inv.used, 'cap': capacity})
            raise exception.InvalidAllocationCapacityExceeded(
                resource_class=rc_names[rc_id],
                resource_provider=rp_by_id[rp_id])


def _check_consumer_generation(req, consumer):
    if not req.check_generation:
        return
    actual = consumer.generation if consumer is not None else None
    if req.consumer_generation != actual:
        raise exception.ConsumerGenerationConflict(
            uuid=req.consumer_uuid,
            expected='null' if actual is None else actual,
            got=('null' if req.consumer_generation is None
                 else req.consumer_generation))


@db_api.writer.connection
def write_allocations(context, requests, rc_ids, bump_released=True):
    """Replace the consumers' allocations inside the current transaction.

    This is the body of :func:`replace_all` without the retries, for
    callers (the reshaper) that need it inside a larger transaction. A
    retryable conflict raised here must abort that whole transaction.

    :param bump_released: also bump the generation of providers that only
        lose allocations. ``DELETE /allocations/{uuid}`` passes False, as
        upstream Placement leaves generations alone there; freeing usage
        cannot push any provider over capacity, so no swap is needed.
    """
    rc_names = {rc_id: name for name, rc_id in rc_ids.items()}
    new_rp_uuids = {rp_uuid for req in requests for rp_uuid in
                    req.allocations}
    consumer_uuids = [req.consumer_uuid for req in requests]
    # The consumers are read before the providers are locked, so that
    # fewer statements run while the lock is held. A writer of the same
    # consumer that commits after this read is still caught: it bumped
    # the consumer's generation (our swap fails), deleted it (the swap
    # or the guarded delete fails) or created it (our insert is a
    # duplicate), and the write is retried with fresh reads.
    owner_ids = None
    if len(requests) == 1:
        # A single consumer (PUT /allocations/{uuid}): with its owner's
        # ids, which creating it needs, in the same statement.
        req = requests[0]
        consumer, owner_ids = consumer_obj.get_with_owner_ids(
            context, req.consumer_uuid, req.project_id, req.user_id,
            req.consumer_type)
        consumers = {} if consumer is None else {req.consumer_uuid: consumer}
    else:
        consumers = consumer_obj.get_by_uuids(context, consumer_uuids)
    for req in requests:
        _check_consumer_generation(req, consumers.get(req.consumer_uuid))

    # The lock comes before the other reads so that they see the work of
    # the writer we may have waited for; it reads the generations of the
    # locked providers before the usage (see the module docstring).
    locked, bumped = _lock_providers(context, new_rp_uuids)
    rp_ids = {rp_uuid: rp.id for rp_uuid, rp in locked.items()}

    # Allocations are only ever written with their consumer's row, in
    # the same transaction, and a consumer's row only goes with its last
    # allocation: a consumer that has no row has nothing to delete. (One
    # created since the read above makes our insert of it a duplicate.)
    existing = [uuid for uuid in consumer_uuids if uuid in consumers]
    old_rp_ids = (_delete_allocations(context, existing) if existing
                  else set())
    # The providers whose generation is still to be swapped.
    providers = {} if bumped else {rp.id: rp for rp in locked.values()}
    if bump_released:
        # Providers that only lose allocations: not locked, their
        # generations are read here, still before the usage.
        providers.update(_generations(
            context, old_rp_ids - set(rp_ids.values())))

    wanted = []
    for req in requests:
        for rp_uuid, resources in sorted(req.allocations.items()):
            for rc_name, amount in sorted(resources.items()):
                wanted.append((rp_ids[rp_uuid], rc_ids[rc_name], amount))
    if wanted:
        rp_by_id = {rp_id: rp_uuid for rp_uuid, rp_id in rp_ids.items()}
        _check_capacity(context, wanted, rp_by_id, rc_names)

    emptied = []
    for req in requests:
        consumer = consumers.get(req.consumer_uuid)
        if not req.allocations:
            if consumer is not None:
                emptied.append(consumer)
            continue
        created = consumer is None
        if created:
            # Written at generation 1 at once: its first write.
            consumer = consumer_obj.create(
                context, req.consumer_uuid, req.project_id, req.user_id,
                req.consumer_type, generation=1, owner_ids=owner_ids)
        else:
            consumer_obj.update_owner(context, consumer, req.project_id,
                                      req.user_id, req.consumer_type)
        consumers[req.consumer_uuid] = consumer
        rows = [{'resource_provider_id': rp_ids[rp_uuid],
                 'resource_class_id': rc_ids[rc_name],
                 'consumer_id': req.consumer_uuid,
                 'used': amount}
                for rp_uuid, resources in sorted(req.allocations.items())
                for rc_name, amount in sorted(resources.items())]
        context.connection.execute(_INSERT, rows)
        if not created:
            consumer_obj.increment_generation(context, consumer)

    increment_generations(context, providers.values())
    consumer_obj.delete_if_no_allocations(context, emptied)


def delete_all(context, consumer_uuid, retries=None):
    """Remove every allocation of ``consumer_uuid`` and the consumer.

    :raises: ConsumerNotFound when the consumer has no allocations.
    """
    try:
        return _retrying(_retry_count(retries))(_delete_all)(
            context, consumer_uuid)
    except _RETRYABLE:
        raise exception.ResourceProviderConcurrentUpdateDetected()


@db_api.writer
def _delete_all(context, consumer_uuid):
    exists = context.session.execute(
        sa.select(ALLOC_TBL.c.id)
        .where(ALLOC_TBL.c.consumer_id == consumer_uuid).limit(1)).first()
    if exists is None:
        raise exception.ConsumerNotFound(consumer=consumer_uuid)
    remove_consumer(context, consumer_uuid)


@db_api.writer.connection
def remove_consumer(context, consumer_uuid):
    """Delete the consumer's allocations and the consumer, if any.

    In the current transaction, as ``DELETE /allocations/{uuid}`` does:
    the providers' generations are left alone. A consumer without
    allocations is not an error here.

    :raises: the errors of :func:`write_allocations`.
    """
    # No owner: a request without allocations neither creates the
    # consumer nor changes its owner, so write_allocations' own read of
    # the consumer is the only one needed.
    request = ConsumerAllocations(consumer_uuid, {}, None, None)
    write_allocations(context, [request], {}, bump_released=False)


def _allocation_select():
    return sa.select(
        ALLOC_TBL.c.id, ALLOC_TBL.c.resource_provider_id,
        ALLOC_TBL.c.resource_class_id, ALLOC_TBL.c.consumer_id,
        ALLOC_TBL.c.used, ALLOC_TBL.c.created_at, ALLOC_TBL.c.updated_at,
        _RP_TBL.c.uuid.label('rp_uuid'),
        _RP_TBL.c.generation.label('rp_generation'),
    ).select_from(ALLOC_TBL.join(
        _RP_TBL, ALLOC_TBL.c.resource_provider_id == _RP_TBL.c.id))


def _to_allocation(context, row, consumer):
    return Allocation(
        id=row.id,
        resource_provider=ResourceProviderRef(
            row.resource_provider_id, row.rp_uuid, row.rp_generation),
        consumer=consumer,
        resource_class=attribute_cache.rc_name(context,
                                               row.resource_class_id),
        used=row.used, created_at=row.created_at,
        updated_at=row.updated_at)


@db_api.reader
def get_all_by_consumer_id(context, consumer_uuid):
    """Return ``(consumer or None, [Allocation])`` for one consumer."""
    rows = context.session.execute(
        _allocation_select()
        .where(ALLOC_TBL.c.consumer_id == consumer_uuid)
        .order_by(ALLOC_TBL.c.id)).all()
    if not rows:
        return None, []
    consumer = consumer_obj.get_by_uuids(context, [consumer_uuid]).get(
        consumer_uuid)
    return consumer, [_to_allocation(context, row, consumer)
                      for row in rows]


@db_api.reader
def get_all_by_resource_provider(context, rp_uuid):
    """Return ``(provider, [Allocation])`` for one provider.

    :raises: ResourceProviderNotFound
    """
    row = context.session.execute(
        sa.select(_RP_TBL.c.id, _RP_TBL.c.uuid, _RP_TBL.c.generation)
        .where(_RP_TBL.c.uuid == rp_uuid)).first()
    if row is None:
        raise exception.ResourceProviderNotFound(
            'No such resource provider %s.' % rp_uuid, uuids=[rp_uuid])
    provider = ResourceProviderRef(row.id, row.uuid, row.generation)
    rows = context.session.execute(
        _allocation_select()
        .where(ALLOC_TBL.c.resource_provider_id == provider.id)
        .order_by(ALLOC_TBL.c.id)).all()
    consumers = consumer_obj.get_by_uuids(
        context, {r.consumer_id for r in rows})
    allocations = []
    for alloc_row in rows:
        consumer = consumers.get(alloc_row.consumer_id) or \
            consumer_obj.Consumer(uuid=alloc_row.consumer_id,
                                  generation=None)
        allocations.append(_to_allocation(context, alloc_row, consumer))
    return provider, allocations


@db_api.reader
def get_all_by_provider_tree(context, rp_uuid):
    """The whole allocations of every consumer of a provider tree.

    The consumers are those with an allocation on any provider of the
    tree that holds ``rp_uuid``; all their allocations are returned, on
    providers outside the tree (sharing providers) too. Two statements in
    one reader transaction whatever the size of the tree or the number of
    consumers: the allocations (with their providers' uuids and
    generations), then the consumers (with project and user). A
    resource class name is looked up in the context's attribute cache.

    :returns: ``{consumer uuid: (Consumer or None, [Allocation])}``;
        empty for an unknown provider.
    """
    target = _RP_TBL.alias('target')
    tree_rp = _RP_TBL.alias('tree_rp')
    root_id = (sa.select(target.c.root_provider_id)
               .where(target.c.uuid == rp_uuid).scalar_subquery())
    consumers_of_tree = (
        sa.select(ALLOC_TBL.c.consumer_id)
        .select_from(ALLOC_TBL.join(
            tree_rp, ALLOC_TBL.c.resource_provider_id == tree_rp.c.id))
        .where(tree_rp.c.root_provider_id == root_id))
    rows = context.session.execute(
        _allocation_select()
        .where(ALLOC_TBL.c.consumer_id.in_(consumers_of_tree))
        .order_by(ALLOC_TBL.c.id)).all()
    consumers = consumer_obj.get_by_uuids(
        context, {row.consumer_id for row in rows})
    found = collections.OrderedDict()
    for row in rows:
        consumer = consumers.get(row.consumer_id)
        found.setdefault(row.consumer_id, (consumer, []))[1].append(
            _to_allocation(context, row, consumer))
    return found
