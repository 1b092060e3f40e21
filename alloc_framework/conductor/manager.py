"""The conductor manager: the server side of the conductor RPC API.

The API checks and forwards; the manager does the work. Node work runs
under the node lock (:mod:`task_manager`); long work runs in a bounded
futurist thread pool of ``[conductor]workers_pool_size`` threads, and a
full pool answers ``NoFreeConductorWorker`` (503) instead of queueing
without bound. Power and provisioning calls return once their checks
passed and their work was handed to a worker, which then owns the node
lock and releases it when the work ends; the caller polls the node for
the result. Periodic work (heartbeat, take-over of allocations of dead
conductors, time-out of nodes left waiting, the power state
sync (:mod:`power_sync`), the launcher of deferred
actions (:mod:`deferred_actions`) and their clean-up
(:mod:`deferred_cleanup`), and the periodic tasks of loaded drivers)
is declared with :func:`alloc_framework.periodics.periodic` and run by a
:class:`~alloc_framework.periodics.PeriodicRunner`, which stops at once.

Allocation processing lives in :mod:`alloc_framework.conductor.allocations`.
"""

import datetime
import threading

import futurist
from futurist import rejection
from oslo_log import log
from oslo_utils import timeutils

from alloc_framework.common import context as af_context
from alloc_framework.common import exception
from alloc_framework.common import states
from alloc_framework.conductor import allocation_groups
from alloc_framework.conductor import allocations
from alloc_framework.conductor import deferred_actions
from alloc_framework.conductor import deferred_cleanup
from alloc_framework.conductor import hash_ring
from alloc_framework.conductor import power_sync
from alloc_framework.conductor import provisioning
from alloc_framework.conductor import rpcapi
from alloc_framework.conductor import steps
from alloc_framework.conductor import task_manager
from alloc_framework.drivers import base as drivers_base
from alloc_framework.drivers import driver_factory as df
from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import node_reservation
from alloc_framework.objects.baremetal import trait as trait_obj
from alloc_framework import periodics

LOG = log.getLogger(__name__)

# Fields the API may never change through update_node: they belong to the
# conductor (locks, allocations, provisioning) or to the database.
_INTERNAL_FIELDS = frozenset([
    'id', 'uuid', 'reservation', 'allocation_id', 'conductor_affinity',
    'created_at', 'updated_at', 'provision_updated_at', 'traits',
    'provision_state', 'target_provision_state', 'target_power_state',
    'clean_step', 'deploy_step', 'service_step', 'driver_internal_info'])
_INTERFACE_FIELDS = tuple('%s_interface' % t
                          for t in drivers_base.INTERFACE_TYPES)
# States in which a node's driver and interfaces may change (or any state
# in maintenance): nothing is running on the node.
_DRIVER_CHANGE_STATES = (states.ENROLL, states.MANAGEABLE,
                         states.AVAILABLE)


class ConductorManager:
    """One conductor.

    :param host: this conductor's unique name (``[DEFAULT]host``).
    :param conf: the service's ``ConfigOpts``.
    :param transport: the RPC transport to serve on; loaded from
        ``[DEFAULT]rpc_transport`` when None.
    :param driver_factory: a ``DriverFactory`` to use instead of loading
        the enabled plugins (tests).
    :param in_process_placement: the in-process Placement client factory
        the command that starts the conductor builds
        (``api.placement.direct.InProcessPlacement(conf)``),
        handed to the node allocation backend; None where this process
        serves no Placement.
    """

    def __init__(self, host, conf, transport=None, driver_factory=None,
                 in_process_placement=None):
        self.host = host
        self.conf = conf
        self.in_process_placement = in_process_placement
        self.context = af_context.get_admin_context()
        self.driver_factory = driver_factory
        self.allocation_backend = None
        self.conductor = None
        self.transport = transport
        self._own_transport = transport is None
        self._executor = None
        self._stop = threading.Event()
        self._periodics = None
        self._started = False
        # Which nodes are this conductor's: one ring for every periodic.
        self.ring = hash_ring.HashRingManager(conf, self.context)
        # {host: token} of the registrations this process holds.
        self.registrations = {}
        self.deferred_actions = None
        self.deferred_cleanup = None
        self.power_sync = power_sync.PowerSync(self)
        # Whether the allocation backend's start ran (start_backend).
        self.backend_started = False

    @property
    def stop_event(self):
        """A ``threading.Event`` set while the conductor stops: waits in
        its threads use it instead of sleeping."""
        return self._stop

    # --- life cycle ---

    def init_host(self):
        """Start: load plugins, register, serve RPC, start periodics.

        :raises: DriverLoadError when an enabled plugin cannot be loaded;
            nothing is left running then.
        """
        if self._started:
            return
        if self.driver_factory is None:
            self.driver_factory = df.DriverFactory(self.conf)
        allocations.get_backend(self)
        # Registration first: it refuses to start while another process
        # of this host is alive, and nothing below may touch that one's
        # locks.
        self.conductor = self.register(drivers=self.driver_factory.names)
        self._stop.clear()
        size = self.conf.conductor.workers_pool_size
        self._executor = futurist.ThreadPoolExecutor(
            max_workers=size,
            check_and_reject=rejection.reject_when_reached(size))
        # The registration proved any previous life of this host dead
        # (gone, offline, heartbeat timed out, or a process of this
        # launcher that died): the locks it left protect nothing, the
        # work they protected died with it.
        interrupted = [n.id for n in objects.Node.list(
            self.context, filters={'reservation': self.host})]
        released = objects.Node.clear_reservations(self.context, self.host)
        if released:
            LOG.warning('Released %d stale node locks of %s', released,
                        self.host)
        self._fail_interrupted(interrupted)
        self._started = True
        try:
            # Before serving: the backend brings what it mirrors up to
            # date (the placement backend reshapes provider trees),
            # unless the command that started it did (start_backend).
            if not self.backend_started:
                self.start_backend()
            if self.transport is None:
                self.transport = rpcapi.load_transport(self.conf)
            # Read before serving: what is created through this conductor
            # from now on is processed as it is created.
            unfinished = allocations.unfinished_allocations(
                self, self.context)
            unfinished_groups = allocation_groups.unfinished_groups(
                self, self.context)
            self.transport.start_server(self)
            self.deferred_actions = deferred_actions.Launcher(self, self._stop)
            self.deferred_cleanup = deferred_cleanup.DeferredCleanup(
                self, self.deferred_actions, self._stop)
            self.deferred_cleanup.rescue_interrupted(self.context)
            self.deferred_actions.start(self.context)
            self._periodics = periodics.PeriodicRunner(
                periodics.collect_for_conductor(self, self.context),
                name='periodics-%s' % self.host)
            self._periodics.start()
            allocations.resume_allocations(self, self.context, unfinished)
            allocation_groups.resume_groups(self, self.context,
                                            unfinished_groups)
        except Exception:
            self.del_host()
            raise
        LOG.info('Conductor %(host)s started (id %(id)s, group "%(group)s",'
                 ' hardware types %(types)s)',
                 {'host': self.host, 'id': self.conductor.id,
                  'group': self.conductor.conductor_group,
                  'types': ', '.join(self.driver_factory.names)})

    def start_backend(self, hosts=None):
        """Run the allocation backend's start for the nodes of ``hosts``.

        ``init_host`` does it for this conductor unless it was done
        before: the commands that start conductors do it in the launching
        process, for every conductor they start, so that a failure (a
        reshape that cannot be done) stops the command instead of a child
        process that the launcher would start again and again.

        :param hosts: the conductors whose nodes are synced (default:
            this one). They must be registered.
        :raises: what the backend raises (``ReshapeAtStartFailed``).
        """
        hosts = set(hosts or [self.host])

        def owns(node_uuid, conductor_group=''):
            try:
                return self.ring.get_host_for_node(
                    node_uuid, conductor_group) in hosts
            except exception.TemporaryFailure:
                return False

        backend = allocations.get_backend(self)
        if self.driver_factory is None:
            self.driver_factory = df.DriverFactory(self.conf)
            backend.driver_factory = self.driver_factory
        self.ring.reset()
        backend.start(self.context, owns)
        self.backend_started = True

    def register(self, host=None, drivers=()):
        """Register conductor ``host`` (default: this one's name).

        The launching process calls it before it starts the processes
        that serve: of two commands started with the same host name the
        loser stops there, with the error. Its processes then register
        with the same token, as restarts of that registration.

        :returns: the Conductor.
        :raises: ConductorAlreadyRegistered while another process's
            registration of the host is alive.
        """
        host = host or self.host
        previous_token = self.registrations.get(host)
        conductor = objects.Conductor.register(
            self.context, host, self.conf.conductor.conductor_group,
            drivers=drivers,
            timeout=self.conf.conductor.heartbeat_timeout,
            registration=previous_token)
        self.registrations[host] = conductor.registration
        previous = conductor.previous
        if (previous is not None and previous.online
                and previous.registration != previous_token):
            LOG.warning('Conductor %(host)s: taking over the registration '
                        'of a previous process, silent since %(since)s',
                        {'host': host, 'since': previous.updated_at})
        return conductor

    def release_registrations(self):
        """Unregister what ``register()`` registered and nothing started.

        For the launching process when it stops before serving.
        """
        for host, token in list(self.registrations.items()):
            conductor = objects.Conductor(hostname=host)
            conductor.registration = token
            try:
                conductor.unregister(self.context)
            except exception.ConductorNotFound:
                pass
            del self.registrations[host]

    def _fail_interrupted(self, node_ids):
        """End the work a previous life of this host left half done.

        Nothing resumes a flow whose worker died: the node would stay in
        ``deploying`` (or ``cleaning`` ...) with a target forever. As
        upstream, such a node moves to its failure state with
        ``last_error``, and a power change loses its target.
        """
        for node_id in node_ids:
            try:
                with self._acquire(self.context, node_id,
                                   'failing interrupted work') as task:
                    provisioning.fail_interrupted(task)
            except (exception.NodeLocked, exception.NodeNotFound):
                # Someone else took it over since: not ours any more.
                pass
            except Exception:
                LOG.exception('Could not fail the interrupted work of node '
                              '%s', node_id)

    def del_host(self):
        """Stop: periodics, RPC server, workers; then unregister."""
        if not self._started:
            return
        self._started = False
        self._stop.set()
        if self._periodics is not None:
            self._periodics.stop()
            self._periodics = None
        if self.deferred_actions is not None:
            self.deferred_actions.stop()
            self.deferred_actions = None
            self.deferred_cleanup = None
        if self.transport is not None:
            self.transport.stop_server(self)
            if self._own_transport and hasattr(self.transport, 'cleanup'):
                self.transport.cleanup()
                self.transport = None
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None
        try:
            self.conductor.unregister(self.context)
        except exception.ConductorNotFound:
            # Another process took the host over: its registration now.
            LOG.warning('Conductor %s: the registration is no longer this '
                        'process\'s, left as it is', self.host)
        LOG.info('Conductor %s stopped', self.host)

    # Periodic tasks: private, so that RPC transports never expose them.

    @periodics.periodic(
        spacing=lambda conf: conf.conductor.heartbeat_interval)
    def _heartbeat(self, context):
        try:
            self.conductor.touch(context)
        except exception.ConductorNotFound:
            LOG.warning('Conductor %s was unregistered behind our back; '
                        'registering again', self.host)
            try:
                self.conductor = self.register(
                    drivers=self.driver_factory.names)
            except exception.ConductorAlreadyRegistered:
                # Silent for longer than the timeout, this process was
                # taken for dead and another one took the host over.
                LOG.error('Conductor %s was taken over by another process '
                          'while this one did not heartbeat: stop this '
                          'one', self.host)

    @periodics.periodic(
        spacing=lambda conf: conf.conductor.check_allocations_interval)
    def _take_over_allocations(self, context):
        allocations.take_over_dead_allocations(self, context)
        allocation_groups.take_over_dead_groups(self, context)

    @periodics.periodic(
        spacing=lambda conf: conf.conductor.check_provision_state_interval)
    def _check_wait_timeouts(self, context):
        """Fail this conductor's nodes left waiting for too long.

        A wait state ends when something resumes the node
        (``continue_node_deploy``, ``continue_node_clean``, the end of the
        deferred action it waits for); when nothing does within the
        configured time, the node moves to the failure state of its flow.
        Nodes in maintenance are left alone, and so are nodes waiting for
        a deferred action that can still run.
        """
        timeouts = (
            (states.DEPLOYWAIT, self.conf.conductor.deploy_callback_timeout),
            (states.CLEANWAIT, self.conf.conductor.clean_callback_timeout),
            (states.SERVICEWAIT,
             self.conf.conductor.service_callback_timeout))
        for wait_state, timeout in timeouts:
            if timeout:
                self._fail_timed_out(context, wait_state, timeout)

    def _fail_timed_out(self, context, wait_state, timeout):
        limit = timeutils.utcnow() - datetime.timedelta(seconds=timeout)
        nodes = objects.Node.list(
            context, filters={'provision_state': wait_state,
                              'provisioned_before': limit,
                              'maintenance': False, 'reserved': False})
        for node in nodes:
            if not self.owns(node.uuid, node.conductor_group):
                continue
            try:
                with self._acquire(context, node.id,
                                   'time out %s' % wait_state) as task:
                    node = task.node
                    # Resumed, or put in maintenance, meanwhile?
                    if (node.provision_state != wait_state
                            or node.maintenance
                            or timeutils.normalize_time(
                                node.provision_updated_at) >= limit):
                        continue
                    # A deferred action that can still run governs its
                    # own time (retries, deadline); its end moves the
                    # node on.
                    if steps.waits_on_live_action(context, node):
                        LOG.debug('Node %(node)s waits for deferred action '
                                  '%(action)s: not timed out',
                                  {'node': node.uuid,
                                   'action': steps.waiting_on(node)})
                        continue
                    provisioning.fail_wait_timeout(task, timeout)
            except (exception.NodeLocked, exception.NodeNotFound) as exc:
                LOG.debug('Not timing out node %(node)s now: %(exc)s',
                          {'node': node.uuid, 'exc': exc})

    @periodics.periodic(
        spacing=lambda conf: conf.conductor.sync_power_state_interval)
    def _sync_power_states(self, context):
        """Reconcile recorded power states with the BMCs (see
        :mod:`alloc_framework.conductor.power_sync`)."""
        self.power_sync.run(context)

    def owns(self, node_uuid, conductor_group=''):
        """Whether the hash ring maps the node to this conductor."""
        try:
            return self.ring.get_host_for_node(
                node_uuid, conductor_group) == self.host
        except exception.TemporaryFailure:
            return False

    @periodics.periodic(
        spacing=lambda conf: conf.deferred_actions.launcher_interval)
    def _launch_deferred_actions(self, context):
        self.deferred_actions.launch(context)

    @periodics.periodic(
        spacing=lambda conf: conf.deferred_actions.idle_cleanup_interval,
        enabled=lambda conf: conf.deferred_actions.cleanup_interval > 0)
    def _clean_up_deferred_actions(self, context):
        self.deferred_cleanup.run(context)

    def spawn_worker(self, func, *args, **kwargs):
        """Run ``func`` in the bounded pool; returns its future.

        :raises: NoFreeConductorWorker when the pool is full or the
            conductor is stopping.
        """
        executor = self._executor
        if executor is None:
            raise exception.NoFreeConductorWorker()
        try:
            return executor.submit(func, *args, **kwargs)
        except (futurist.RejectedSubmission, RuntimeError):
            # RuntimeError: the pool was shut down since the check above.
            raise exception.NoFreeConductorWorker()

    def _hand_over(self, task, func, *args):
        """Run ``func(*args)`` in a worker that now owns ``task``.

        ``func`` releases the task itself; releasing it again when the
        future ends covers work that never ran or died unexpectedly, so
        the node lock is never left behind (the release is idempotent).

        :raises: NoFreeConductorWorker; the task is still the caller's.
        """
        future = self.spawn_worker(func, *args)

        def _done(fut):
            if not fut.cancelled() and fut.exception() is not None:
                LOG.error('Unexpected error in %(why)s of node %(node)s: '
                          '%(exc)s', {'why': task.purpose,
                                      'node': task.node.uuid,
                                      'exc': fut.exception()})
            task.release_resources()
        future.add_done_callback(_done)

    def _acquire(self, context, node_id, purpose, shared=False):
        return task_manager.acquire(
            context, node_id, shared=shared, purpose=purpose, host=self.host,
            driver_factory=self.driver_factory, conf=self.conf,
            stop_event=self._stop,
            on_release=None if shared else self._node_changed)

    def lock_node(self, context, node_id, purpose, wait=True, node=None):
        """Lock a node for a task of this conductor (with its driver).

        For work that runs beside the RPC API (deferred actions): the
        task carries the conductor's stop event, and releasing it lets
        the allocation backend mirror the node's change.

        :param wait: retry a busy lock as ``[conductor]`` says; False
            raises NodeLocked at once.
        :param node: the node, when this conductor already holds its
            lock (see ``TaskManager``): the task adopts the lock.
        :returns: a ``TaskManager``, to use as a context manager.
        :raises: NodeLocked, NodeNotFound
        """
        if wait and node is None:
            return self._acquire(context, node_id, purpose)
        return task_manager.TaskManager(
            context, node_id, self.host, purpose=purpose,
            driver_factory=self.driver_factory, retry_attempts=0,
            retry_interval=0, stop_event=self._stop,
            on_release=self._node_changed, node=node)

    def _node_changed(self, context, node_uuid):
        """Let the allocation backend mirror a node's change (see
        ``AllocationBackend.node_changed``)."""
        if self.allocation_backend is not None:
            self.allocation_backend.node_changed(context, node_uuid)

    @staticmethod
    def _require_driver(task):
        if task.driver is None:
            raise exception.DriverNotFound(driver_name=task.node.driver)

    # --- nodes ---

    def create_node(self, context, node_obj):
        """Validate the driver and interfaces and create the node.

        :raises: DriverNotFound, InterfaceNotFoundInEntrypoint,
            IncompatibleInterface, NodeAlreadyExists, DuplicateName,
            InstanceAssociated, MissingParameterValue
        """
        if not node_obj.obj_attr_is_set('driver') or not node_obj.driver:
            raise exception.MissingParameterValue(
                err='Node driver is required.')
        self.driver_factory.check_and_update_node_interfaces(node_obj)
        node_obj.create(context)
        LOG.info('Node %s created', node_obj.uuid)
        self._node_changed(context, node_obj.uuid)
        return node_obj

    def update_node(self, context, node_obj):
        """Apply the changes ``node_obj`` carries, under the node lock.

        :raises: NodeLocked, NodeNotFound, NodeAssociated, NodeIsAllocated,
            InvalidStateRequested, InvalidParameterValue, DriverNotFound,
            InterfaceNotFoundInEntrypoint, IncompatibleInterface,
            DuplicateName, InstanceAssociated
        """
        changed = set(node_obj.obj_what_changed()) - _INTERNAL_FIELDS
        with self._acquire(context, node_obj.id, 'node update') as task:
            node = task.node
            if not changed:
                return node
            new = {f: getattr(node_obj, f) for f in changed}
            release = self._check_update(node, new)
            for field, value in new.items():
                setattr(node, field, value)
            if not node.maintenance:
                node.maintenance_reason = None
                node.fault = None
            if not node.protected:
                node.protected_reason = None
            if not node.retired:
                node.retired_reason = None
            # driver_info names the implementations of plugin interface
            # kinds (drivers.base.node_interface): check them too.
            if ({'driver', 'driver_info'} | set(_INTERFACE_FIELDS)) & changed:
                if 'driver' in changed:
                    # Interfaces not chosen explicitly follow the new
                    # hardware type's defaults.
                    for field in _INTERFACE_FIELDS:
                        if field not in changed:
                            setattr(node, field, None)
                self.driver_factory.check_and_update_node_interfaces(node)
            node.save(context, delete_allocation=release)
            return node

    def _check_update(self, node, new):
        """Upstream's rules for an update; True to release the allocation.

        :raises: NodeAssociated, NodeIsAllocated, InvalidStateRequested,
            InvalidParameterValue
        """
        if ({'driver'} | set(_INTERFACE_FIELDS)) & set(new):
            if (node.provision_state not in _DRIVER_CHANGE_STATES
                    and not new.get('maintenance', node.maintenance)):
                raise exception.InvalidStateRequested(
                    action='change driver or interfaces', node=node.uuid,
                    state=node.provision_state)
        if new.get('protected') and node.provision_state != states.ACTIVE:
            raise exception.InvalidStateRequested(
                action='protect', node=node.uuid,
                state=node.provision_state)
        if new.get('protected_reason') and not new.get('protected',
                                                       node.protected):
            raise exception.InvalidParameterValue(
                err='protected_reason can only be set on a protected node.')
        release = False
        if 'instance_uuid' in new:
            old, value = node.instance_uuid, new['instance_uuid']
            if old and value and old != value:
                raise exception.NodeAssociated(node=node.uuid, instance=old)
            if old and not value and node.allocation_id is not None:
                # Under the node lock: the task holds it.
                node_reservation.verify_node_for_deallocation(
                    node, node.allocation_id)
                release = True
        return release

    def destroy_node(self, context, node_id):
        """Delete a node, with its allocation, traits and history.

        Allowed in ``DELETE_ALLOWED_STATES`` or in maintenance.

        :raises: NodeLocked, NodeNotFound, NodeProtected, NodeAssociated,
            InvalidStateRequested
        """
        with self._acquire(context, node_id, 'node deletion') as task:
            node = task.node
            if node.protected:
                raise exception.NodeProtected(node=node.uuid)
            if node.instance_uuid and not node.maintenance:
                raise exception.NodeAssociated(node=node.uuid,
                                               instance=node.instance_uuid)
            if (node.provision_state not in states.DELETE_ALLOWED_STATES
                    and not node.maintenance):
                raise exception.InvalidStateRequested(
                    action='delete', node=node.uuid,
                    state=node.provision_state)
            node.destroy(context)
            LOG.info('Node %s deleted', node.uuid)

    def change_node_power_state(self, context, node_id, new_state):
        """Start powering a node on or off, or rebooting it.

        Returns once the node shows ``target_power_state`` and a worker
        has the change; the worker clears the target and releases the
        lock when done. A failure of the power interface is recorded in
        ``last_error`` and the node history, not raised.

        :raises: InvalidParameterValue (also for powering off a node with
            ``disable_power_off``), NodeLocked, NodeNotFound,
            DriverNotFound, NoFreeConductorWorker
        """
        if new_state not in states.POWER_TARGETS:
            raise exception.InvalidParameterValue(
                err='Invalid power state %s; valid states are %s.'
                    % (new_state, ', '.join(states.POWER_TARGETS)))
        task = self._acquire(context, node_id, 'power %s' % new_state)
        try:
            if (new_state == states.POWER_OFF
                    and task.node.disable_power_off):
                raise exception.InvalidParameterValue(
                    err='Node %s has disable_power_off set: it is never '
                        'powered off; reboot it instead.' % task.node.uuid)
            self._require_driver(task)
            task.driver.power.validate(task)
            provisioning.begin_power(task, new_state)
            try:
                self._hand_over(task, provisioning.change_power, task,
                                new_state)
            except exception.NoFreeConductorWorker:
                provisioning.undo_begin_power(task)
                raise
        except Exception:
            task.release_resources()
            raise

    def do_provisioning_action(self, context, node_id, action,
                               clean_steps=None, service_steps=None):
        """Start a provisioning action.

        Checks are made before anything changes and are raised. Then the
        first move of the action is saved (the node shows ``deploying``,
        target ``active``) and the rest is handed to a worker, which
        releases the node lock when it ends; the call returns then.
        Failures of the work itself end in a failure state with
        ``last_error``.

        :raises: InvalidParameterValue (unknown action, bad clean or
            service steps), InvalidStateRequested, NodeInMaintenance,
            NodeProtected, NodeLocked, NodeNotFound, DriverNotFound,
            NoFreeConductorWorker
        """
        event = states.event_for_verb(action)
        task = self._acquire(context, node_id, 'provisioning: %s' % action)
        try:
            node = task.node
            if not states.MACHINE.is_valid_event(node.provision_state,
                                                 event):
                raise exception.InvalidStateRequested(
                    action=action, node=node.uuid,
                    state=node.provision_state)
            if node.maintenance and event in (states.DEPLOY, states.REBUILD,
                                              states.PROVIDE, states.CLEAN,
                                              states.SERVICE):
                raise exception.NodeInMaintenance(op=action, node=node.uuid)
            if node.protected and event in (states.DELETE, states.REBUILD):
                raise exception.NodeProtected(node=node.uuid)
            self._require_driver(task)
            if event == states.CLEAN:
                clean_steps = provisioning.validate_manual_clean_steps(
                    task, clean_steps)
            elif clean_steps:
                raise exception.InvalidParameterValue(
                    err='clean_steps are only accepted with the clean '
                        'action.')
            if event == states.SERVICE:
                service_steps = provisioning.validate_service_steps(
                    task, service_steps)
            elif service_steps:
                raise exception.InvalidParameterValue(
                    err='service_steps are only accepted with the service '
                        'action.')
            if event in (states.DEPLOY, states.REBUILD):
                task.driver.power.validate(task)
                task.driver.boot.validate(task)
                task.driver.deploy.validate(task)
            node.last_error = None
            self._start_flow(task, event, clean_steps, service_steps)
        except Exception:
            task.release_resources()
            raise

    def _start_flow(self, task, event, clean_steps=None, service_steps=None):
        """Save the first move of ``event``; hand the rest to a worker.

        Releases the task when the move ended the request. When no worker
        is free the node goes back to where it was and
        NoFreeConductorWorker is raised (the task is the caller's then).
        """
        node = task.node
        before = node.provision_state, node.target_provision_state
        if not provisioning.begin(task, event):
            task.release_resources()
            return
        try:
            self._hand_over(task, provisioning.run, self.conf, task, event,
                            clean_steps, service_steps)
        except exception.NoFreeConductorWorker:
            provisioning.undo_begin(task, event, *before)
            raise

    def _continue(self, context, node_id, wait_state, what):
        task = self._acquire(context, node_id, 'continue %s' % what)
        try:
            node = task.node
            if node.provision_state != wait_state:
                raise exception.InvalidStateRequested(
                    action='continue %s' % what, node=node.uuid,
                    state=node.provision_state)
            if steps.waits_on_live_action(context, node):
                # The action's end resumes the node, not a call-back.
                raise exception.InvalidStateRequested(
                    action='continue %s (the node waits for deferred '
                           'action %s)' % (what, steps.waiting_on(node)),
                    node=node.uuid, state=node.provision_state)
            self._require_driver(task)
            self._start_flow(task, states.RESUME)
        except Exception:
            task.release_resources()
            raise

    def continue_node_deploy(self, context, node_id):
        """Resume a deployment waiting in ``wait call-back`` (in a worker).

        :raises: InvalidStateRequested, NodeLocked, NodeNotFound,
            DriverNotFound, NoFreeConductorWorker
        """
        self._continue(context, node_id, states.DEPLOYWAIT, 'deploy')

    def continue_node_clean(self, context, node_id):
        """Resume cleaning waiting in ``clean wait`` (in a worker).

        :raises: InvalidStateRequested, NodeLocked, NodeNotFound,
            DriverNotFound, NoFreeConductorWorker
        """
        self._continue(context, node_id, states.CLEANWAIT, 'cleaning')

    def continue_node_service(self, context, node_id):
        """Resume servicing waiting in ``service wait`` (in a worker).

        :raises: InvalidStateRequested, NodeLocked, NodeNotFound,
            DriverNotFound, NoFreeConductorWorker
        """
        self._continue(context, node_id, states.SERVICEWAIT, 'servicing')

    def add_node_traits(self, context, node_id, traits, replace=False):
        """Add traits to a node, or replace all of them.

        :raises: NodeLocked, NodeNotFound, InvalidTrait, TooManyTraits
        """
        with self._acquire(context, node_id, 'add traits'):
            if replace:
                trait_obj.set_traits(context, node_id, traits)
            else:
                trait_obj.add_traits(context, node_id, traits)

    def remove_node_traits(self, context, node_id, traits=None):
        """Remove traits of a node (all of them when ``traits`` is None).

        :raises: NodeLocked, NodeNotFound, NodeTraitNotFound
        """
        with self._acquire(context, node_id, 'remove traits'):
            if traits is None:
                trait_obj.remove_all_traits(context, node_id)
            else:
                for trait in traits:
                    trait_obj.remove_trait(context, node_id, trait)

    # --- management ---
    #
    # Answered in the RPC call, under the node lock (shared for reads):
    # one request to the hardware, bounded by the interface's timeouts.

    def set_boot_device(self, context, node_id, device, persistent=False):
        """Set a node's next boot device.

        :raises: NodeLocked, NodeNotFound, DriverNotFound,
            InvalidParameterValue (unsupported device, bad driver_info),
            and the driver's errors reaching the hardware.
        """
        with self._acquire(context, node_id, 'set boot device') as task:
            self._require_driver(task)
            task.driver.management.validate(task)
            task.driver.management.set_boot_device(
                task, device, persistent=bool(persistent))
            # Interfaces may record what they did on the node.
            task.node.save(context)

    def get_boot_device(self, context, node_id):
        """A node's next boot device: ``{'boot_device', 'persistent'}``.

        :raises: NodeNotFound, DriverNotFound, InvalidParameterValue, and
            the driver's errors reaching the hardware.
        """
        with self._acquire(context, node_id, 'get boot device',
                           shared=True) as task:
            self._require_driver(task)
            task.driver.management.validate(task)
            return task.driver.management.get_boot_device(task)

    def get_supported_boot_devices(self, context, node_id):
        """The boot devices a node supports (list of strings).

        :raises: as :meth:`get_boot_device`.
        """
        with self._acquire(context, node_id, 'get supported boot devices',
                           shared=True) as task:
            self._require_driver(task)
            task.driver.management.validate(task)
            return list(task.driver.management.get_supported_boot_devices(
                task))

    # --- validation and hardware types ---

    def validate_driver_interfaces(self, context, node_id):
        """Each interface's verdict on the node, from its ``validate``.

        Runs under a shared lock and never talks to the hardware (the
        interfaces' contract). An interface that finds the node's data
        wrong or incomplete answers ``result`` False with its message.

        :returns: ``{kind: {'result': bool or None, 'reason': str or
            None}}``; None with "not supported" for a kind the driver has
            no interface of.
        :raises: NodeNotFound, DriverNotFound
        """
        with self._acquire(context, node_id, 'validate driver interfaces',
                           shared=True) as task:
            self._require_driver(task)
            verdicts = {}
            for kind, iface in task.driver.all_interfaces().items():
                result, reason = None, 'not supported'
                if iface is not None:
                    try:
                        iface.validate(task)
                        result, reason = True, None
                    # InvalidParameterValue, MissingParameterValue,
                    # UnsupportedDriverExtension: the node's data.
                    except exception.Invalid as exc:
                        result, reason = False, str(exc)
                verdicts[kind] = {'result': result, 'reason': reason}
            return verdicts

    def get_driver_details(self, context, driver_name):
        """See ``DriverFactory.interface_details``.

        :raises: DriverNotFound when this conductor lacks the type.
        """
        return self.driver_factory.interface_details(driver_name)

    def get_driver_properties(self, context, driver_name):
        """The ``driver_info`` keys of a hardware type's default
        interfaces: ``{key: description}``.

        :raises: DriverNotFound when this conductor lacks the type.
        """
        return self.driver_factory.get_properties(driver_name)

    # --- allocations ---

    def create_allocation(self, context, allocation, generated_uuid=False):
        """See :func:`conductor.allocations.create_allocation`."""
        return allocations.create_allocation(
            self, context, allocation, generated_uuid=generated_uuid)

    def create_allocation_group(self, context, group):
        """See :func:`conductor.allocation_groups.create_allocation_group`."""
        return allocation_groups.create_allocation_group(self, context, group)

    def destroy_allocation_group(self, context, group):
        """See :func:`conductor.allocation_groups.destroy_allocation_group`.
        """
        return allocation_groups.destroy_allocation_group(self, context,
                                                          group)

    def retry_allocation(self, context, allocation):
        """See :func:`conductor.allocations.retry_allocation`."""
        return allocations.retry_allocation(self, context, allocation)

    def destroy_allocation(self, context, allocation):
        """See :func:`conductor.allocations.destroy_allocation`."""
        return allocations.destroy_allocation(self, context, allocation)

    # --- liveness ---

    def ping(self, context):
        """Answer at once, with this conductor's host name.

        The API asks a conductor that did not answer a call lately before
        it sends it more work (see ``ConductorAPI``): no lock, no database.
        """
        return self.host
