"""The client side of the conductor RPC API.

The API service calls conductors only through :class:`ConductorAPI`. Calls
about a node go to the conductor that the hash ring maps the node to
(within the node's conductor group); creations go to a random live
conductor that has the node's hardware type; allocations go to a random
live conductor. How a call travels is a plugin of the
``alloc_framework.rpc.transports`` namespace chosen by
``[DEFAULT]rpc_transport``: ``local`` (in-process) or ``oslo``
(oslo.messaging). Objects travel as versioned objects.

A conductor can die between two heartbeats: it stays in the hash ring
for up to ``[conductor]heartbeat_timeout`` seconds, and its calls get no
answer. A transport that can lose calls raises ``ConductorNotAnswering``
after ``[DEFAULT]rpc_failover_timeout`` seconds without a sign of life
(see :mod:`rpc_oslo`); :class:`ConductorAPI` then

* sends a new allocation to another live conductor, never creating it
  twice (:meth:`ConductorAPI.create_allocation`);
* remembers the conductor (:class:`UnansweredHosts`) and prefers the
  others for random choices until it must have left the ring;
* answers calls about its nodes with a quick 503 until the ring has moved
  them (:meth:`ConductorAPI._check_answering`).
"""

import abc
import random
import threading
import time

from oslo_log import log
from oslo_utils import uuidutils

from alloc_framework.common import context as af_context
from alloc_framework.common import exception
from alloc_framework.common import loader
from alloc_framework.conductor import hash_ring
from alloc_framework.objects import baremetal as objects

LOG = log.getLogger(__name__)

TRANSPORTS_NAMESPACE = 'alloc_framework.rpc.transports'
TOPIC = 'alloc_framework.conductor'
# 1.0: initial version
# 1.1: ping; create_allocation's generated_uuid
# 1.2: do_provisioning_action's service_steps; continue_node_service
# 1.3: set_boot_device, get_boot_device, get_supported_boot_devices
# 1.4: validate_driver_interfaces, get_driver_details,
#      get_driver_properties
# 1.5: retry_allocation
# 1.6: create_allocation_group, destroy_allocation_group
RPC_API_VERSION = '1.6'
# Conductors asked to create one allocation before giving up. Two silent
# conductors at once are rare; more point at the broker or at this
# service's own connection, which asking further conductors does not fix.
CREATE_ATTEMPTS = 3


class Transport(abc.ABC):
    """How RPC calls reach conductors.

    :param conf: the service's ``ConfigOpts``.
    """

    def __init__(self, conf):
        self.conf = conf

    @abc.abstractmethod
    def call(self, context, host, method, **kwargs):
        """Call ``method`` of the conductor ``host`` and return its result.

        Exceptions of ``alloc_framework.common.exception``
        raised by the conductor are raised again here.

        :raises: TemporaryFailure when the conductor cannot be reached.
        """

    def ping(self, context, host):
        """Check that the conductor ``host`` answers.

        Bounded by ``[DEFAULT]rpc_failover_timeout`` where calls can get
        lost; a transport that cannot lose calls just calls.

        :returns: the conductor's host name.
        :raises: ConductorNotAnswering, TemporaryFailure
        """
        return self.call(context, host, 'ping')

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
    return loader.load_one(TRANSPORTS_NAMESPACE, conf.rpc_transport, conf)


class UnansweredHosts:
    """Conductors that did not answer lately (in this process only).

    A conductor is remembered from its first missed answer until its nodes
    must have moved: ``[conductor]heartbeat_timeout`` (the others then
    hold it dead) plus ``[conductor]hash_ring_reset_interval`` (the ring
    of this process has then forgotten it). Each service finds out for
    itself; a conductor that answers again is forgotten at once.

    :param conf: the service's ``ConfigOpts``.
    :param clock: a monotonic clock in seconds.
    """

    def __init__(self, conf, clock=time.monotonic):
        self.conf = conf
        self.clock = clock
        self._lock = threading.Lock()
        # host -> [forgotten at, last missed answer at]
        self._hosts = {}

    def add(self, host):
        """Record a missed answer of ``host``."""
        now = self.clock()
        with self._lock:
            entry = self._hosts.get(host)
            if entry is None or entry[0] <= now:
                conductor = self.conf.conductor
                self._hosts[host] = [now + conductor.heartbeat_timeout
                                     + conductor.hash_ring_reset_interval,
                                     now]
            else:
                entry[1] = now

    def discard(self, host):
        """Forget ``host``: it answered."""
        if host in self._hosts:
            with self._lock:
                self._hosts.pop(host, None)

    def _entry(self, host):
        if host not in self._hosts:
            return None
        now = self.clock()
        with self._lock:
            entry = self._hosts.get(host)
            if entry is not None and entry[0] <= now:
                del self._hosts[host]
                return None
            return entry and (entry[0] - now, now - entry[1])

    def seconds_left(self, host):
        """Seconds until ``host`` is forgotten; None when not remembered."""
        entry = self._entry(host)
        return None if entry is None else entry[0]

    def seconds_since_missed(self, host):
        """Seconds since ``host`` last missed an answer; None: forgotten."""
        entry = self._entry(host)
        return None if entry is None else entry[1]

    def hosts(self):
        """The remembered hosts."""
        if not self._hosts:
            return frozenset()
        now = self.clock()
        with self._lock:
            for host in [h for h, e in self._hosts.items() if e[0] <= now]:
                del self._hosts[host]
            return frozenset(self._hosts)


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
        self.unanswered = UnansweredHosts(conf)

    # --- routing ---

    def _random_host(self, driver=None, tried=()):
        """A random live conductor, one that answered lately if possible.

        :param tried: hosts never to choose.
        :returns: a host name; None when every live conductor was tried.
        :raises: TemporaryFailure when no live conductor matches.
        """
        hosts = [h for h in self.ring.get_hosts(driver=driver)
                 if h not in tried]
        unanswered = self.unanswered.hosts()
        answering = [h for h in hosts if h not in unanswered]
        # A conductor that did not answer may be back: when no other is
        # left, it is tried rather than nothing.
        hosts = answering or hosts
        return random.choice(hosts) if hosts else None

    def _call(self, context, host, method, **kwargs):
        """Call ``host``; remember it when it does not answer."""
        try:
            result = self.transport.call(context, host, method, **kwargs)
        except exception.ConductorNotAnswering:
            self.unanswered.add(host)
            raise
        self.unanswered.discard(host)
        return result

    def _not_answering(self, host):
        seconds = max(1, int(self.unanswered.seconds_left(host) or 0) + 1)
        return exception.ConductorNotAnswering(
            'Conductor %s is not answering; its nodes move to another '
            'conductor within %d s, please retry.' % (host, seconds),
            host=host)

    def _check_answering(self, context, host):
        """Probe a conductor that did not answer lately before a node call.

        Only the conductor that the ring names may work on a node, until
        the ring moves the node. When that conductor did not answer
        lately, it is pinged first (``[DEFAULT]rpc_failover_timeout`` at
        most) rather than sent the call: a call waits at the broker for
        ``[DEFAULT]rpc_response_timeout`` and a conductor that comes back
        meanwhile would run it, after its client was told to retry. For
        the same time after a missed answer no new probe is made: the
        call fails at once. A conductor that answers is forgotten.

        Node calls are not bounded by the short timeout themselves (the
        transport's heartbeats tell a slow conductor from a dead one): a
        conductor that works longer than that on a call, holding the
        node's lock, must not have its client told to retry meanwhile.

        :raises: ConductorNotAnswering, telling when the ring moves the
            conductor's nodes.
        """
        since = self.unanswered.seconds_since_missed(host)
        if since is None:
            return
        if since < self.conf.rpc_failover_timeout:
            raise self._not_answering(host)
        try:
            self._call(context, host, 'ping')
        except exception.ConductorNotAnswering:
            raise self._not_answering(host)

    def _host_for_node(self, context, node_id, any_group=False):
        node = objects.Node.get_by_id(context, node_id)
        try:
            host = self.ring.get_host_for_node(node.uuid,
                                               node.conductor_group)
        except exception.TemporaryFailure:
            if not any_group:
                raise
            # Updating or deleting a node needs no hardware access, only
            # its lock: any live conductor can do it. Without this, a node
            # moved to a group without conductors could not be moved back.
            return self._random_host()
        self._check_answering(context, host)
        return host

    def _call_node_host(self, context, host, method, **kwargs):
        """Call the conductor of a node; see :meth:`_check_answering`."""
        try:
            return self._call(context, host, method, **kwargs)
        except exception.ConductorNotAnswering:
            raise self._not_answering(host)

    def _call_for_node(self, context, node_id, method, any_group=False,
                       **kwargs):
        host = self._host_for_node(context, node_id, any_group=any_group)
        return self._call_node_host(context, host, method, node_id=node_id,
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
            host = self._random_host(driver=driver)
        except exception.TemporaryFailure:
            # Conductors are alive but none has the hardware type: that
            # is the client's mistake, not a temporary condition. As
            # upstream, a bad driver in a creation is a 400, not a 404.
            self.ring.get_hosts()
            raise exception.DriverNotFound(driver_name=driver, code=400)
        return self._call(context, host, 'create_node', node_obj=node_obj)

    def update_node(self, context, node_obj):
        """Apply the changes carried by ``node_obj`` under the node lock.

        :returns: the updated Node.
        :raises: NodeLocked, NodeNotFound, NodeAssociated, NodeIsAllocated,
            InvalidStateRequested, DriverNotFound,
            InterfaceNotFoundInEntrypoint, DuplicateName,
            InstanceAssociated, TemporaryFailure
        """
        host = self._host_for_node(context, node_obj.id, any_group=True)
        return self._call_node_host(context, host, 'update_node',
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

    def set_boot_device(self, context, node_id, device, persistent=False):
        """Set a node's next boot device (synchronous).

        :raises: NodeLocked, NodeNotFound, InvalidParameterValue,
            DriverNotFound, TemporaryFailure, the driver's errors
        """
        return self._call_for_node(context, node_id, 'set_boot_device',
                                   device=device, persistent=persistent)

    def get_boot_device(self, context, node_id):
        """``{'boot_device', 'persistent'}`` of a node (synchronous).

        :raises: NodeNotFound, InvalidParameterValue, DriverNotFound,
            TemporaryFailure, the driver's errors
        """
        return self._call_for_node(context, node_id, 'get_boot_device')

    def get_supported_boot_devices(self, context, node_id):
        """The boot devices a node supports (synchronous).

        :raises: as :meth:`get_boot_device`
        """
        return self._call_for_node(context, node_id,
                                   'get_supported_boot_devices')

    def validate_driver_interfaces(self, context, node_id):
        """Each interface's ``{'result', 'reason'}`` on a node
        (synchronous, on the node's conductor).

        :raises: NodeNotFound, DriverNotFound, TemporaryFailure
        """
        return self._call_for_node(context, node_id,
                                   'validate_driver_interfaces')

    def _driver_host(self, driver_name):
        """A live conductor that has the hardware type.

        :raises: DriverNotFound when none has it.
        """
        try:
            host = self._random_host(driver=driver_name)
        except exception.TemporaryFailure:
            host = None
        if host is None:
            raise exception.DriverNotFound(driver_name=driver_name)
        return host

    def get_driver_details(self, context, driver_name):
        """A hardware type's enabled and default interfaces, as a live
        conductor that has it loaded them (see
        ``DriverFactory.interface_details``).

        :raises: DriverNotFound, ConductorNotAnswering
        """
        return self._call(context, self._driver_host(driver_name),
                          'get_driver_details', driver_name=driver_name)

    def get_driver_properties(self, context, driver_name):
        """The ``driver_info`` keys a hardware type takes,
        ``{key: description}``.

        :raises: DriverNotFound, ConductorNotAnswering
        """
        return self._call(context, self._driver_host(driver_name),
                          'get_driver_properties', driver_name=driver_name)

    def do_provisioning_action(self, context, node_id, action,
                               clean_steps=None, service_steps=None):
        """Run a provisioning action (``manage``, ``provide``, ``active``...).

        :param clean_steps: the steps of ``clean``.
        :param service_steps: the steps of ``service``.
        :raises: NodeLocked, NodeNotFound, InvalidStateRequested,
            InvalidParameterValue, NodeInMaintenance, NodeProtected,
            NoFreeConductorWorker, TemporaryFailure
        """
        kwargs = {'clean_steps': clean_steps}
        if service_steps is not None:
            # Only then: a 1.1 conductor takes calls without it.
            kwargs['service_steps'] = service_steps
        return self._call_for_node(context, node_id,
                                   'do_provisioning_action', action=action,
                                   **kwargs)

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

    def continue_node_service(self, context, node_id):
        """Resume servicing waiting in ``service wait``.

        :raises: InvalidStateRequested, NodeLocked, NodeNotFound,
            TemporaryFailure
        """
        return self._call_for_node(context, node_id,
                                   'continue_node_service')

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

    def create_allocation(self, context, allocation, generated_uuid=False):
        """Create an allocation on a random live conductor.

        A conductor that does not answer within
        ``[DEFAULT]rpc_failover_timeout`` (see :mod:`rpc_oslo`) may still
        have created the allocation, or create it later: its call waits
        at the broker. The allocation's UUID is therefore fixed here,
        before the first attempt; then

        * an allocation found under that UUID after the silence is the
          answer (the conductor created it and died, or is slow);
        * otherwise another live conductor is asked; if it finds the UUID
          taken (or the name: databases check unique keys in different
          orders; or, for a backfill, the node associated), and the
          allocation is found under the UUID now, the first conductor
          created it meanwhile: that one is the answer;
        * a late first conductor fails on the same UUID: the allocation
          exists once. A conductor that took the allocation and died
          leaves it ``allocating``; a live one takes it over.

        A UUID generated here (or by the caller, which says so with
        ``generated_uuid``) is new: the conductor skips the check that
        no node carries it as ``instance_uuid`` (one query). With a UUID
        from the client, an allocation found under it is the answer only
        if it matches the request (resource class, name, owner ...):
        else the UUID was taken before and the answer stays 409.

        :returns: the Allocation (``allocating``; ``active`` for a
            backfill).
        :raises: TemporaryFailure, ConductorNotAnswering (every conductor
            asked was silent), NoFreeConductorWorker and the errors of
            ``conductor.allocations.create_allocation``.
        """
        generated = generated_uuid
        if not allocation.obj_attr_is_set('uuid') or not allocation.uuid:
            allocation.uuid = uuidutils.generate_uuid()
            generated = True
        tried = []
        host = self._random_host()
        while True:
            try:
                return self._call(context, host, 'create_allocation',
                                  allocation=allocation,
                                  generated_uuid=generated)
            except exception.ConductorNotAnswering:
                tried.append(host)
                found = self._created_meanwhile(context, allocation,
                                                generated)
                if found is not None:
                    return found
                silent, host = host, None
                if len(tried) < CREATE_ATTEMPTS:
                    host = self._random_host(tried=tried)
                if host is None:
                    raise
                LOG.warning('Conductor %(silent)s did not answer; asking '
                            '%(host)s to create allocation %(alloc)s',
                            {'silent': silent, 'host': host,
                             'alloc': allocation.uuid})
            except (exception.AllocationAlreadyExists,
                    exception.AllocationDuplicateName,
                    exception.InstanceAssociated,
                    exception.NodeAssociated):
                if not tried:
                    raise
                found = self._created_meanwhile(context, allocation,
                                                generated)
                if found is None:
                    raise
                return found

    @staticmethod
    def _created_meanwhile(context, allocation, generated):
        """The allocation a silent conductor created, if any.

        :raises: AllocationAlreadyExists when an allocation has the UUID
            that the client gave but differs from the request.
        """
        try:
            found = objects.Allocation.get_by_uuid(context, allocation.uuid)
        except exception.AllocationNotFound:
            return None
        if generated or _same_request(found, allocation):
            LOG.info('Allocation %s was created by a conductor that did '
                     'not answer', allocation.uuid)
            return found
        raise exception.AllocationAlreadyExists(uuid=allocation.uuid)

    def retry_allocation(self, context, allocation):
        """Process a failed allocation again on a random live conductor.

        :returns: the Allocation, now ``allocating``.
        :raises: AllocationNotRetryable, AllocationNotFound,
            NoFreeConductorWorker, TemporaryFailure
        """
        return self._call(context, self._random_host(), 'retry_allocation',
                          allocation=allocation)

    def create_allocation_group(self, context, group):
        """Create an allocation group on a random live conductor.

        :returns: the AllocationGroup (``allocating``).
        :raises: InvalidParameterValue, AllocationGroupAlreadyExists,
            AllocationGroupDuplicateName, NoFreeConductorWorker,
            TemporaryFailure
        """
        return self._call(context, self._random_host(),
                          'create_allocation_group', group=group)

    def destroy_allocation_group(self, context, group):
        """Delete an allocation group and its allocations.

        :raises: NodeIsAllocated, NodeLocked, AllocationGroupNotFound,
            TemporaryFailure
        """
        return self._call(context, self._random_host(),
                          'destroy_allocation_group', group=group)

    def destroy_allocation(self, context, allocation):
        """Delete an allocation and release its node.

        :raises: NodeIsAllocated, NodeLocked, AllocationNotFound,
            TemporaryFailure
        """
        return self._call(context, self._random_host(),
                          'destroy_allocation', allocation=allocation)


# What a client may give when it creates an allocation.
_REQUEST_FIELDS = ('name', 'resource_class', 'owner', 'extra',
                   'candidate_nodes', 'node_id')


def _same_request(found, allocation):
    """Whether ``found`` is what creating ``allocation`` made."""
    for name in _REQUEST_FIELDS:
        if (allocation.obj_attr_is_set(name)
                and getattr(found, name) != getattr(allocation, name)):
            return False
    wanted = (allocation.traits if allocation.obj_attr_is_set('traits')
              else None)
    return sorted(set(found.traits or ())) == sorted(set(wanted or ()))
