"""Allocation processing on a conductor.

The conductor manager calls these functions; they own the allocation's life
cycle (``allocating`` -> ``active`` | ``error``) while the backend
(:mod:`alloc_framework.drivers.allocation`) chooses and reserves the node.

* :func:`create_allocation` records the allocation with this conductor's
  affinity and hands it to the manager's bounded worker pool; a backfill
  (``node_id`` given) is done synchronously and is all-or-nothing.
* :func:`retry_allocation` moves an ``error`` allocation back to
  ``allocating`` with this conductor's affinity and processes it again.
* :func:`do_allocate` runs in the pool and never raises: a failure becomes
  ``error`` with a ``last_error`` naming the filter that left no node.
* :func:`resume_allocations` picks up this conductor's own ``allocating``
  allocations when it starts again (read by
  :func:`unfinished_allocations` before it serves RPC).
* :func:`take_over_dead_allocations` (a periodic) moves ``allocating``
  allocations of dead conductors to this one with a compare-and-swap and
  processes them; of several live conductors exactly one wins each.

Every write of an ``allocating`` allocation is guarded by its affinity, so
a conductor that lost an allocation to a take-over changes nothing.
"""

from oslo_log import log

from alloc_framework.common import exception
from alloc_framework.drivers.allocation import base as backend_base
from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import allocation as alloc_obj

LOG = log.getLogger(__name__)


def get_backend(manager):
    """The manager's allocation backend, loaded once.

    :raises: DriverLoadError when ``[allocation]backend`` is unknown or
        broken (the manager calls this from ``init_host`` to fail fast).
    """
    backend = getattr(manager, 'allocation_backend', None)
    if backend is None:
        backend = backend_base.load_backend(
            manager.conf, manager.stop_event,
            in_process_placement=manager.in_process_placement)
        # The hardware types describe the nodes' resource providers.
        backend.driver_factory = manager.driver_factory
        manager.allocation_backend = backend
    return backend


def _conductor_id(manager):
    return manager.conductor.id


def create_allocation(manager, context, allocation, generated_uuid=False):
    """Create an allocation and start processing it.

    :param manager: the ``ConductorManager``.
    :param allocation: a new ``Allocation``; with ``node_id`` set it is a
        backfill of that node.
    :param generated_uuid: the allocation's UUID was generated for this
        request (see ``Allocation.create``).
    :returns: the created ``Allocation`` (``allocating``, or ``active``
        for a backfill).
    :raises: AllocationAlreadyExists, AllocationDuplicateName,
        InstanceAssociated; for a backfill also InvalidParameterValue,
        NodeAssociated, NodeLocked, NodeNotFound (nothing is written);
        NoFreeConductorWorker when the pool is full (nothing is left).
    """
    backend = get_backend(manager)
    allocation.conductor_affinity = _conductor_id(manager)
    node_id = (allocation.node_id if allocation.obj_attr_is_set('node_id')
               else None)
    if node_id is not None:
        created = backend.backfill(context, allocation, node_id)
        LOG.info('Allocation %(alloc)s backfilled for node %(node)s',
                 {'alloc': created.uuid, 'node': node_id})
        return created

    backend.validate(context, allocation)
    allocation.state = alloc_obj.ALLOCATING
    allocation.create(context, generated_uuid=generated_uuid)
    try:
        manager.spawn_worker(do_allocate, manager, context, allocation)
    except exception.NoFreeConductorWorker:
        # Refuse the request as a whole rather than leave an allocation
        # nobody processes until this conductor restarts.
        with _ignore_gone(allocation):
            allocation.destroy(context)
        raise
    return allocation


class _ignore_gone:
    """Swallow errors meaning the allocation is no longer ours to touch."""

    def __init__(self, allocation):
        self.allocation = allocation

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None and issubclass(
                exc_type, (exception.AllocationNotFound,
                           exception.AllocationTakenOver)):
            LOG.info('Allocation %(alloc)s was deleted or taken over '
                     'meanwhile: %(exc)s',
                     {'alloc': self.allocation.uuid, 'exc': exc})
            return True
        return False


def _fail(context, allocation, reason):
    """Record a failure of an ``allocating`` allocation.

    Guarded by the affinity, so a lost allocation stays untouched, and by
    the state: an allocation that became ``active`` meanwhile (processed
    twice, the other processing reserved its node) keeps its node.
    """
    with _ignore_gone(allocation):
        if not allocation.fail(reason, context):
            LOG.warning('Allocation %(alloc)s is no longer allocating; '
                        'this failure of it is ignored: %(reason)s',
                        {'alloc': allocation.uuid, 'reason': reason})


def do_allocate(manager, context, allocation):
    """Find and reserve a node for an ``allocating`` allocation.

    Runs in the manager's worker pool. Never raises: failures end in the
    ``error`` state (when the allocation is still ours).
    """
    backend = get_backend(manager)
    try:
        with _ignore_gone(allocation):
            node_uuid = backend.allocate(context, allocation)
            LOG.info('Allocation %(alloc)s is active on node %(node)s',
                     {'alloc': allocation.uuid, 'node': node_uuid})
    except exception.AllocationFailed as exc:
        error = exc.kwargs.get('error', str(exc))
        LOG.warning('Allocation %(alloc)s failed: %(error)s',
                    {'alloc': allocation.uuid, 'error': error})
        _fail(context, allocation, error)
    except exception.InstanceAssociated as exc:
        LOG.warning('Allocation %(alloc)s: %(exc)s', {'alloc': allocation.uuid,
                                                      'exc': exc})
        _fail(context, allocation, exc)
    except Exception as exc:
        LOG.exception('Unexpected error while processing allocation %s',
                      allocation.uuid)
        _fail(context, allocation,
              'Unexpected exception during allocation: %s' % exc)


def retry_allocation(manager, context, allocation):
    """Process a failed allocation again, keeping its UUID and name.

    The state changes from ``error`` to ``allocating`` in one
    compare-and-swap (so concurrent retries process it once) that also
    gives the allocation this conductor's affinity; then it is handed to
    the worker pool like a new one.

    :param allocation: the ``error`` allocation (as the API read it).
    :returns: the Allocation, now ``allocating``.
    :raises: AllocationNotRetryable (409) when it is not ``error``,
        AllocationNotFound, InvalidParameterValue when the backend cannot
        serve it, NoFreeConductorWorker when the pool is full (the
        allocation is ``error`` again, with its previous reason).
    """
    backend = get_backend(manager)
    backend.validate(context, allocation)
    previous_error = allocation.last_error
    retried = objects.Allocation.retry(context, allocation.id,
                                       _conductor_id(manager))
    try:
        manager.spawn_worker(do_allocate, manager, context, retried)
    except exception.NoFreeConductorWorker:
        # Nobody would process it until this conductor restarts.
        _fail(context, retried, previous_error or 'Retry refused: no free '
              'conductor worker.')
        raise
    LOG.info('Allocation %s is retried', retried.uuid)
    return retried


def destroy_allocation(manager, context, allocation):
    """Release the allocation's node and delete the allocation.

    :raises: NodeIsAllocated (409) when the node is ``active`` or in a state
        that forbids updates and is not in maintenance; NodeLocked;
        AllocationNotFound.
    """
    get_backend(manager).deallocate(context, allocation)
    LOG.info('Allocation %s deleted', allocation.uuid)


def _process_all(manager, context, allocations):
    for allocation in allocations:
        do_allocate(manager, context, allocation)


def unfinished_allocations(manager, context):
    """This conductor's ``allocating`` allocations, to resume at start.

    Read before the conductor serves RPC: an allocation created through
    it afterwards is already being processed and must not be resumed
    too (it would be processed twice).
    """
    return objects.Allocation.list(
        context, filters={'state': alloc_obj.ALLOCATING,
                          'conductor_affinity': _conductor_id(manager)})


def resume_allocations(manager, context, unfinished):
    """Resume ``unfinished`` allocations (see :func:`unfinished_allocations`).

    They are processed one after the other in a single worker, so a long
    backlog does not fill the pool.

    :returns: how many allocations are resumed.
    """
    if unfinished:
        LOG.info('Resuming %(count)d unfinished allocations: %(uuids)s',
                 {'count': len(unfinished),
                  'uuids': ', '.join(a.uuid for a in unfinished)})
        try:
            manager.spawn_worker(_process_all, manager, context,
                                 unfinished)
        except exception.NoFreeConductorWorker:
            # Called at start with an idle pool, but never lose them.
            _process_all(manager, context, unfinished)
    return len(unfinished)


def take_over_dead_allocations(manager, context):
    """Take over and process ``allocating`` allocations of dead conductors.

    A conductor is dead when it is offline or its heartbeat is older than
    ``[conductor]heartbeat_timeout``. For each such allocation, the
    compare-and-swap ``conductor_affinity`` update decides which live
    conductor processes it. Runs in the periodic's own thread.

    :returns: how many allocations this conductor took over.
    """
    alive = objects.Conductor.list_alive(
        context, manager.conf.conductor.heartbeat_timeout)
    alive_ids = [c.id for c in alive]
    me = _conductor_id(manager)
    if me not in alive_ids:
        # Our own heartbeat is late: taking over others' work now could
        # race with whoever considers *us* dead.
        LOG.warning('Not taking over allocations: this conductor is not '
                    'among the live conductors')
        return 0
    orphans = objects.Allocation.list(
        context, filters={'state': alloc_obj.ALLOCATING,
                          'conductor_affinity_not_in': alive_ids})
    taken = 0
    for allocation in orphans:
        old = allocation.conductor_affinity
        if not objects.Allocation.take_over(context, allocation.id, old, me):
            LOG.debug('Allocation %s was taken over by another conductor',
                      allocation.uuid)
            continue
        taken += 1
        LOG.info('Took over allocation %(alloc)s from dead conductor '
                 '%(old)s', {'alloc': allocation.uuid, 'old': old})
        try:
            allocation.refresh(context)
        except exception.AllocationNotFound:
            continue
        if allocation.state == alloc_obj.ALLOCATING:
            do_allocate(manager, context, allocation)
    return taken
