"""The client side of the conductor RPC API.

The API service calls conductors only through :class:`ConductorAPI`. Calls
about a node go to the conductor that the hash ring maps the node to
(within the node's conductor group); creations go to a random live
conductor that has the node's hardware type; allocations go to a random
live conductor. How a call travels is a plugin of the
``alloc_framework.rpc.transports`` namespace chosen by
``[DEFAULT]rpc_transport``: ``local`` (in-process) or ``oslo``
(oslo.messaging). Objects travel as versioned objects.
"""

import abc

from oslo_log import log
from stevedore import driver as stevedore_driver

from alloc_framework.common import context as af_context
from alloc_framework.objects.baremetal import exception
from alloc_framework.conductor import hash_ring
from alloc_framework.objects import baremetal as objects

LOG = log.getLogger(__name__)

TRANSPORTS_NAMESPACE = 'alloc_framework.rpc.transports'
TOPIC = 'alloc_framework.conductor'
# 1.0: initial version
# 1.1: create_allocation's generated_uuid
RPC_API_VERSION = '1.1'


class Transport(abc.ABC):
    """How RPC calls reach conductors.

    :param conf: the service's ``ConfigOpts``.
    """

    def __init__(self, conf):
        self.conf = conf

    @abc.abstractmethod
    def call(self, context, host, method, **kwargs):
        """Call ``method`` of the conductor ``host`` and return its result.

        Exceptions of ``alloc_framework.objects.baremetal.exception``
        raised by the conductor are raised again here.

        :raises: TemporaryFailure when the conductor cannot be reached.
        """

    @abc.abstractmethod
    def start_server(self, manager):
        """Start serving calls for ``manager`` (a ConductorManager)."""

    @abc.abstractmethod
    def stop_server(self, manager):
        """Stop serving calls for ``manager``."""

    def cleanup(self):
        """Release connections (after the servers are stopped)."""


def load_transport(conf):
    """Load the transport named by ``[DEFAULT]rpc_transport``.

    :raises: DriverLoadError
    """
    name = conf.rpc_transport

    def _failed(manager, entrypoint, exc):
        raise exception.DriverLoadError(name=name,
                                        namespace=TRANSPORTS_NAMESPACE,
                                        reason=exc)
    try:
        manager = stevedore_driver.DriverManager(
            TRANSPORTS_NAMESPACE, name, invoke_on_load=True,
            invoke_args=(conf,), on_load_failure_callback=_failed)
    except exception.DriverLoadError:
        raise
    except Exception as exc:
        raise exception.DriverLoadError(name=name,
                                        namespace=TRANSPORTS_NAMESPACE,
                                        reason=exc)
    return manager.driver


class ConductorAPI:
    """Client of the conductors.

    :param conf: the service's ``ConfigOpts`` (the process-wide one when
        None).
    :param transport: a :class:`Transport` to use instead of loading one.
    """

    def __init__(self, conf=None, transport=None):
        if conf is None:
            from alloc_framework import conf as af_conf
            conf = af_conf.CONF
        self.conf = conf
        self.transport = transport or load_transport(conf)
        self.ring = hash_ring.HashRingManager(
            conf, af_context.get_admin_context())

    # --- routing ---

    def _host_for_node(self, context, node_id, any_group=False):
        node = objects.Node.get_by_id(context, node_id)
        try:
            return self.ring.get_host_for_node(node.uuid,
                                               node.conductor_group)
        except exception.TemporaryFailure:
            if not any_group:
                raise
            # Updating or deleting a node needs no hardware access, only
            # its lock: any live conductor can do it. Without this, a node
            # moved to a group without conductors could not be moved back.
            return self.ring.get_random_host()

    def _call_for_node(self, context, node_id, method, any_group=False,
                       **kwargs):
        host = self._host_for_node(context, node_id, any_group=any_group)
        return self.transport.call(context, host, method, node_id=node_id,
                                   **kwargs)

    # --- nodes ---

    def create_node(self, context, node_obj):
        """Validate the driver and interfaces of a node and create it.

        :returns: the created Node.
        :raises: DriverNotFound when no live conductor has the node's
            hardware type; InterfaceNotFoundInEntrypoint,
            IncompatibleInterface, NodeAlreadyExists, DuplicateName,
            InstanceAssociated; TemporaryFailure when no conductor is
            alive.
        """
        driver = node_obj.driver if node_obj.obj_attr_is_set('driver') \
            else None
        try:
            host = self.ring.get_random_host(driver=driver)
        except exception.TemporaryFailure:
            # Conductors are alive but none has the hardware type: that
            # is the client's mistake, not a temporary condition. As
            # upstream, a bad driver in a creation is a 400, not a 404.
            self.ring.get_random_host()
            raise exception.DriverNotFound(driver_name=driver, code=400)
        return self.transport.call(context, host, 'create_node',
                                   node_obj=node_obj)

    def update_node(self, context, node_obj):
        """Apply the changes carried by ``node_obj`` under the node lock.

        :returns: the updated Node.
        :raises: NodeLocked, NodeNotFound, NodeAssociated, NodeIsAllocated,
            InvalidStateRequested, DriverNotFound,
            InterfaceNotFoundInEntrypoint, DuplicateName,
            InstanceAssociated, TemporaryFailure
        """
        host = self._host_for_node(context, node_obj.id, any_group=True)
        return self.transport.call(context, host, 'update_node',
                                   node_obj=node_obj)

    def destroy_node(self, context, node_id):
        """Delete a node (and its allocation, if any).

        :raises: NodeLocked, NodeNotFound, NodeAssociated, NodeProtected,
            InvalidStateRequested, TemporaryFailure
        """
        return self._call_for_node(context, node_id, 'destroy_node',
                                   any_group=True)

    def change_node_power_state(self, context, node_id, new_state):
        """Power a node on, off or reboot it.

        :raises: NodeLocked, NodeNotFound, InvalidParameterValue,
            NoFreeConductorWorker, TemporaryFailure
        """
        return self._call_for_node(context, node_id,
                                   'change_node_power_state',
                                   new_state=new_state)

    def do_provisioning_action(self, context, node_id, action,
                               clean_steps=None):
        """Run a provisioning action (``manage``, ``provide``, ``active``...).

        :raises: NodeLocked, NodeNotFound, InvalidStateRequested,
            InvalidParameterValue, NodeInMaintenance, NodeProtected,
            NoFreeConductorWorker, TemporaryFailure
        """
        return self._call_for_node(context, node_id,
                                   'do_provisioning_action', action=action,
                                   clean_steps=clean_steps)

    def continue_node_deploy(self, context, node_id):
        """Resume a deployment waiting in ``wait call-back``.

        :raises: InvalidStateRequested, NodeLocked, NodeNotFound,
            TemporaryFailure
        """
        return self._call_for_node(context, node_id, 'continue_node_deploy')

    def continue_node_clean(self, context, node_id):
        """Resume cleaning waiting in ``clean wait``.

        :raises: InvalidStateRequested, NodeLocked, NodeNotFound,
            TemporaryFailure
        """
        return self._call_for_node(context, node_id, 'continue_node_clean')

    def add_node_traits(self, context, node_id, traits, replace=False):
        """Add traits to a node, or replace all of them.

        :raises: NodeLocked, NodeNotFound, InvalidTrait, TooManyTraits
        """
        return self._call_for_node(context, node_id, 'add_node_traits',
                                   traits=traits, replace=replace)

    def remove_node_traits(self, context, node_id, traits=None):
        """Remove traits from a node (all of them when ``traits`` is None).

        :raises: NodeLocked, NodeNotFound, NodeTraitNotFound
        """
        return self._call_for_node(context, node_id, 'remove_node_traits',
                                   traits=traits)

    # --- allocations ---

    def create_allocation(self, context, allocation):
        """Create an allocation on a random live conductor.

        :returns: the Allocation (``allocating``; ``active`` for a
            backfill).
        :raises: TemporaryFailure, NoFreeConductorWorker and the errors of
            ``conductor.allocations.create_allocation``.
        """
        host = self.ring.get_random_host()
        return self.transport.call(context, host, 'create_allocation',
                                   allocation=allocation)

    def destroy_allocation(self, context, allocation):
        """Delete an allocation and release its node.

        :raises: NodeIsAllocated, NodeLocked, AllocationNotFound,
            TemporaryFailure
        """
        host = self.ring.get_random_host()
        return self.transport.call(context, host, 'destroy_allocation',
                                   allocation=allocation)
