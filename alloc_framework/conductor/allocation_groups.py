"""Allocation group processing on a conductor (an extension of ours).

As :mod:`alloc_framework.conductor.allocations` for single allocations:

* :func:`create_allocation_group` records the group (``allocating``,
  this conductor's affinity) and hands it to the bounded worker pool;
* :func:`do_allocate_group` runs in the pool and never raises: the
  backend reserves nodes for every member in one transaction, or none
  and the group becomes ``error`` with a reason naming the member and
  the filter that failed;
* :func:`unfinished_groups` / :func:`resume_groups` pick up this
  conductor's ``allocating`` groups when it starts again;
* :func:`take_over_dead_groups` (with the allocations' periodic) moves
  ``allocating`` groups of dead conductors to this one with a
  compare-and-swap. A conductor that died while processing a group left
  nothing reserved (its transaction never committed): processing it
  again finishes it.
"""

from oslo_log import log

from alloc_framework.common import exception
from alloc_framework.conductor import allocations
from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import allocation_group as group_obj

LOG = log.getLogger(__name__)


def create_allocation_group(manager, context, group):
    """Create an allocation group and start processing it.

    :returns: the created ``AllocationGroup`` (``allocating``).
    :raises: InvalidParameterValue (the backend serves no groups),
        AllocationGroupAlreadyExists, AllocationGroupDuplicateName,
        NoFreeConductorWorker (nothing is left).
    """
    backend = allocations.get_backend(manager)
    backend.validate_group(context, group)
    group.conductor_affinity = manager.conductor.id
    group.create(context)
    try:
        manager.spawn_worker(do_allocate_group, manager, context, group)
    except exception.NoFreeConductorWorker:
        try:
            backend.release_group(context, group)
        except exception.AllocationGroupNotFound:
            pass
        raise
    return group


def _fail(context, group, reason):
    try:
        if not group.fail(reason, context):
            LOG.warning('Allocation group %(group)s is no longer '
                        'allocating; this failure is ignored: %(reason)s',
                        {'group': group.uuid, 'reason': reason})
    except (exception.AllocationGroupNotFound,
            exception.AllocationTakenOver) as exc:
        LOG.info('Allocation group %(group)s was deleted or taken over '
                 'meanwhile: %(exc)s', {'group': group.uuid, 'exc': exc})


def do_allocate_group(manager, context, group):
    """Reserve the nodes of an ``allocating`` group, all or none.

    Runs in the worker pool; never raises.
    """
    backend = allocations.get_backend(manager)
    try:
        uuids = backend.allocate_group(context, group)
        LOG.info('Allocation group %(group)s is active with %(count)d '
                 'allocations', {'group': group.uuid, 'count': len(uuids)})
    except (exception.AllocationGroupNotFound,
            exception.AllocationTakenOver) as exc:
        LOG.info('Allocation group %(group)s was deleted or taken over '
                 'meanwhile: %(exc)s', {'group': group.uuid, 'exc': exc})
    except exception.AllocationFailed as exc:
        error = exc.kwargs.get('error', str(exc))
        LOG.warning('Allocation group %(group)s failed: %(error)s',
                    {'group': group.uuid, 'error': error})
        _fail(context, group, error)
    except Exception as exc:
        LOG.exception('Unexpected error while processing allocation group '
                      '%s', group.uuid)
        _fail(context, group,
              'Unexpected exception during allocation: %s' % exc)


def destroy_allocation_group(manager, context, group):
    """Delete the group and its allocations, releasing their nodes.

    :raises: NodeIsAllocated (409, nothing deleted), NodeLocked,
        AllocationGroupNotFound
    """
    allocations.get_backend(manager).release_group(context, group)
    LOG.info('Allocation group %s deleted', group.uuid)


def unfinished_groups(manager, context):
    """This conductor's ``allocating`` groups, read before serving RPC."""
    return objects.AllocationGroup.list(
        context, filters={'state': group_obj.ALLOCATING,
                          'conductor_affinity': manager.conductor.id})


def _process_all(manager, context, groups):
    for group in groups:
        do_allocate_group(manager, context, group)


def resume_groups(manager, context, unfinished):
    """Resume ``unfinished`` groups in one worker; returns how many."""
    if unfinished:
        LOG.info('Resuming %d unfinished allocation groups',
                 len(unfinished))
        try:
            manager.spawn_worker(_process_all, manager, context, unfinished)
        except exception.NoFreeConductorWorker:
            _process_all(manager, context, unfinished)
    return len(unfinished)


def take_over_dead_groups(manager, context):
    """Take over and process ``allocating`` groups of dead conductors.

    :returns: how many groups this conductor took over.
    """
    alive = objects.Conductor.list_alive(
        context, manager.conf.conductor.heartbeat_timeout)
    alive_ids = [c.id for c in alive]
    me = manager.conductor.id
    if me not in alive_ids:
        return 0
    orphans = objects.AllocationGroup.list(
        context, filters={'state': group_obj.ALLOCATING,
                          'conductor_affinity_not_in': alive_ids})
    taken = 0
    for group in orphans:
        old = group.conductor_affinity
        if not objects.AllocationGroup.take_over(context, group.id, old, me):
            continue
        taken += 1
        LOG.info('Took over allocation group %(group)s from dead '
                 'conductor %(old)s', {'group': group.uuid, 'old': old})
        try:
            group.refresh(context)
        except exception.AllocationGroupNotFound:
            continue
        if group.state == group_obj.ALLOCATING:
            do_allocate_group(manager, context, group)
    return taken
