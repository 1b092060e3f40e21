"""The interface of node allocation backends, and how one is loaded.

Exactly one backend is active in a conductor: the entry point of the
``alloc_framework.allocation.backends`` namespace named by
``[allocation]backend``. It is loaded once, when the conductor starts, and
a backend that is unknown or fails to load stops the start.

The conductor (:mod:`alloc_framework.conductor.allocations`) owns the
allocation's life cycle: it creates the allocation in ``allocating`` with
its own ``conductor_affinity``, runs :meth:`AllocationBackend.allocate` in
its worker pool, records failures as ``error`` with the backend's message,
and takes allocations of dead conductors over. A backend only decides
*which* node serves an allocation and performs the reservation; it never
changes an allocation's affinity.

Invariants every backend keeps, because API clients rely on them:

* an allocation is ``active`` exactly when it has a ``node_id``, and that
  node's ``instance_uuid`` is the allocation's UUID and its
  ``allocation_id`` the allocation's id; both sides change in one database
  transaction (:mod:`alloc_framework.objects.baremetal.node_reservation`
  offers the transactions);
* a node is reserved for at most one allocation;
* updates of an ``allocating`` allocation are guarded by its
  ``conductor_affinity`` (:class:`~alloc_framework.common.exception.
  AllocationTakenOver` tells that another conductor took it over).

A backend may declare periodic tasks with
:func:`alloc_framework.periodics.periodic`, as hardware interfaces do:
the conductor runs them with ``(manager, context)``.

A backend backed by an external service (a ``placement`` backend, for
example) claims the node there first, then reserves it in the database
with :func:`~alloc_framework.objects.baremetal.node_reservation.reserve_node`
restricted to the claimed node, and undoes its claim when that fails.
"""

import abc
import random
import threading

from oslo_log import log

from alloc_framework.common import exception
from alloc_framework.common import loader

LOG = log.getLogger(__name__)

NAMESPACE = 'alloc_framework.allocation.backends'


class AllocationBackend(abc.ABC):
    """A way of choosing and reserving nodes for allocations.

    :param conf: the ``oslo_config.cfg.ConfigOpts`` of the service.

    ``stop_event`` is a ``threading.Event`` set when the conductor stops
    (:func:`load_backend` gives the conductor's). A method that must
    pause between tries waits on it (``self.stop_event.wait(seconds)``,
    or :meth:`pause_busy`) instead of sleeping, so that stopping is never
    held up.

    ``in_process_placement`` is the Placement this process serves, or
    None: a callable taking headers and returning a keystoneauth1
    ``Adapter`` (see ``api/placement/direct.py``), given by the command
    that starts the service through :func:`load_backend`. A backend that
    talks to Placement uses it when no remote Placement is configured.
    """

    # The base of :meth:`pause_busy`, in seconds.
    busy_pause = 0.01

    def __init__(self, conf):
        self.conf = conf
        self.stop_event = threading.Event()
        self.in_process_placement = None

    def pause_busy(self, attempt):
        """Pause before trying again nodes that concurrent requests hold.

        ``busy_pause`` times the tries made so far (``attempt`` counts
        from 0), give or take half, so that competing requests spread
        out; a wait on :attr:`stop_event`, so a stopping conductor goes
        on at once.
        """
        self.stop_event.wait(random.uniform(0.5, 1.5) * self.busy_pause
                             * (attempt + 1))

    def start(self, context, owns):
        """A conductor is starting; nothing by default.

        Called after the conductor registered and before it serves (by
        the command that starts it, in the launching process, so that a
        failure stops the command). An exception stops the conductor:
        raise only for what must not go on (the ``placement`` backend's
        reshape failing, for one).

        :param owns: ``owns(node_uuid, conductor_group)``: whether the
            starting conductor (or one of the conductors the command
            starts) manages that node.
        """

    def validate(self, context, allocation):
        """Check that this backend can serve ``allocation`` at all.

        Called by the conductor before the allocation is created, so that
        a request the backend can never serve is refused with a 4xx and
        leaves nothing behind. The default accepts everything.

        :param context: a request context.
        :param allocation: the ``Allocation`` about to be created.
        :raises: InvalidParameterValue when the request cannot be served.
        """

    def validate_group(self, context, group):
        """Check that this backend can serve allocation group ``group``.

        Called by the conductor before the group is created. The default
        refuses: a backend serves groups only when it implements
        :meth:`allocate_group` and :meth:`release_group`.

        :raises: InvalidParameterValue
        """
        raise exception.InvalidParameterValue(
            err='The %s allocation backend does not serve allocation '
                'groups ([allocation]backend)' % self.conf.allocation.backend)

    def allocate_group(self, context, group):
        """Reserve nodes for every member of an ``allocating`` group, or none.

        Runs in a conductor worker thread; it must not sleep. On success
        the group is ``active`` with one ``active`` allocation per node;
        on failure nothing is reserved.

        :returns: the UUIDs of the member allocations.
        :raises: AllocationFailed (its ``error`` keyword argument names
            the member and the filter that left too few nodes).
        :raises: AllocationTakenOver or AllocationGroupNotFound when the
            group was taken over or deleted meanwhile.
        """
        raise NotImplementedError()

    def release_group(self, context, group):
        """Delete the group and its allocations, releasing their nodes.

        All or nothing: refused as a whole when any node may not lose its
        allocation now.

        :raises: NodeIsAllocated, NodeLocked, AllocationGroupNotFound
        """
        raise NotImplementedError()

    def node_changed(self, context, node_uuid):
        """Tell the backend that a node was created, changed or deleted.

        The conductor calls it after its change of the node is committed
        (node creation, and the end of every task holding the node's
        lock), so that a backend mirroring nodes elsewhere (``placement``)
        keeps its mirror current. It must be cheap, and must not raise:
        the node's change stands whatever the mirror does. The default
        does nothing.

        :param context: an admin context.
        :param node_uuid: the node's UUID (the node may be gone).
        """

    @abc.abstractmethod
    def allocate(self, context, allocation):
        """Find a node for an ``allocating`` allocation and reserve it.

        Runs in a conductor worker thread; it must not sleep. On success
        the allocation is ``active`` in the database and the object is
        updated (``node_id``, ``state``).

        :param context: an admin context.
        :param allocation: an ``Allocation`` in state ``allocating`` whose
            ``conductor_affinity`` is the calling conductor.
        :returns: the UUID of the reserved node.
        :raises: AllocationFailed (its ``error`` keyword argument becomes
            the allocation's ``last_error``; it says which filter left no
            node) when no node can serve the allocation now.
        :raises: AllocationTakenOver or AllocationNotFound when the
            allocation was taken over or deleted meanwhile; nothing is
            reserved then.
        """

    @abc.abstractmethod
    def backfill(self, context, allocation, node_id):
        """Record ``allocation`` for a node deployed without one.

        Creates the allocation directly ``active`` on the node. All checks
        happen before anything is written; on error nothing is left.

        :param context: a request context.
        :param allocation: a new ``Allocation`` (not created yet); a
            missing ``uuid`` defaults to the node's ``instance_uuid`` and a
            missing ``resource_class`` to the node's.
        :param node_id: the database id of the node.
        :returns: the created ``Allocation``.
        :raises: InvalidParameterValue when the node is not ``active`` or
            does not match the resource class, traits or candidate nodes.
        :raises: NodeAssociated when the node belongs to another instance
            or allocation; NodeLocked when another task holds its lock;
            NodeNotFound; InstanceAssociated, AllocationAlreadyExists,
            AllocationDuplicateName as :meth:`Allocation.create`.
        """

    @abc.abstractmethod
    def deallocate(self, context, allocation):
        """Release the allocation's node and delete the allocation.

        :param context: a request context.
        :param allocation: an existing ``Allocation`` (any state).
        :raises: NodeIsAllocated when the node is ``active`` or in a state
            that forbids updates and is not in maintenance.
        :raises: NodeLocked when another task holds the node's lock.
        :raises: AllocationNotFound when it is already gone.
        """


def load_backend(conf, stop_event=None, in_process_placement=None):
    """Load the backend named by ``[allocation]backend``.

    :param stop_event: the conductor's stop event, given to the backend
        as its ``stop_event``.
    :param in_process_placement: the in-process Placement client factory
        of the service, given to the backend as its
        ``in_process_placement``.
    :returns: an :class:`AllocationBackend` instance.
    :raises: DriverLoadError when the backend is unknown, fails to import
        or is not an :class:`AllocationBackend`.
    """
    name = conf.allocation.backend
    backend = loader.load_one(NAMESPACE, name, conf)
    if not isinstance(backend, AllocationBackend):
        raise exception.DriverLoadError(
            name=name, namespace=NAMESPACE,
            reason='%r is not an AllocationBackend' % type(backend))
    if stop_event is not None:
        backend.stop_event = stop_event
    backend.in_process_placement = in_process_placement
    LOG.info('Using the "%s" node allocation backend', name)
    return backend
