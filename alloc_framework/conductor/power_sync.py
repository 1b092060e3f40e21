"""Power state sync: the recorded power state follows the BMC.

A periodic of the conductor (every ``[conductor]sync_power_state_interval``
seconds) reads the power state of the nodes the hash ring gives this
conductor from their BMCs, through each node's power interface, as
upstream ironic's power sync does:

* Nodes are selected in SQL by the conductor's hash ranges; nodes that
  are locked, in maintenance, in the middle of a power action
  (``target_power_state``), in ``enroll`` or ``adopt failed``, or waiting
  for a call-back (``wait call-back``, ``clean wait``, ``service wait``)
  are skipped. The BMC is read without the node lock; the lock is taken
  (without waiting: a locked node is skipped) only to change the node,
  after checking that nothing changed it meanwhile.
* A node without a recorded state gets the one read. When the BMC
  reports another state than the recorded one, the node is powered back
  to the recorded state when ``[conductor]force_power_state_during_sync``
  is True (upstream's default), or the record takes the BMC's state when
  it is False. Either way the change goes to the node history.
* A failure (a BMC that cannot be read, or a node still not in its
  recorded state after being forced) counts against the node; after
  ``[conductor]power_state_sync_max_retries`` further failures in a row
  the node goes to maintenance with the fault ``power failure`` and the
  state read (if any) is recorded. The counts live in the conductor's
  memory, as upstream's: a restart starts them again.
* With ``[conductor]enable_health_monitoring`` (the default) the same
  read takes the node's health (``OK``, ``Warning``, ``Critical`` or
  None when the hardware does not report one) from its power interface
  and records it in ``health`` (bare metal API 1.109); a health that
  cannot be read leaves the recorded one.
* The same run reads the BMC of the conductor's nodes in maintenance
  with that fault, and takes them out of maintenance once it answers
  (upstream has a separate periodic for this). Maintenance set by an
  operator, or for another fault, is left alone.

At most ``[conductor]sync_power_state_workers`` nodes are handled at the
same time, in threads of the run's own (never the workers of API
requests); each BMC call is bounded by the power interface's own
timeouts, and a stopping conductor ends the run after the nodes in hand.
The nodes are read from the database a few at a time as the threads need
them (twice as many as the threads: one read per batch instead of one
per node, which cost a run over 1,000 nodes about 3.4 ms of CPU per
node on MariaDB, against 0.5), so a node's record is never older than
the BMC calls of the batch before it; whatever changed since is caught
when the node is locked to be changed, and a read that failed is counted
only if the node, read again, is still one to sync.
"""

import collections
import threading

import futurist
from futurist import waiters as futurist_waiters
from oslo_log import log

from alloc_framework.common import exception
from alloc_framework.common import states
from alloc_framework.conductor import task_manager
from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import node_history

LOG = log.getLogger(__name__)

POWER_FAILURE = 'power failure'
"""The ``fault`` of a node put in maintenance by the power state sync."""

# As upstream: a lock taken on a node waiting for a call-back could make
# the call-back fail, and an enrolled node may have no usable BMC yet.
SYNC_EXCLUDED_STATES = (states.DEPLOYWAIT, states.CLEANWAIT,
                        states.SERVICEWAIT, states.ENROLL, states.ADOPTFAIL)

_PURPOSE = 'power state sync'

# What must not have changed between the read of the BMC and the lock.
_WATCHED = ('power_state', 'target_power_state', 'provision_state',
            'maintenance', 'fault', 'driver', 'power_interface',
            'driver_info', 'health')
# The health when it was not read (monitoring off, or a failed read).
_NOT_READ = object()


def _snapshot(node):
    return tuple(getattr(node, field) for field in _WATCHED)


def _syncable(node):
    return (node.provision_state not in SYNC_EXCLUDED_STATES
            and not node.maintenance and not node.target_power_state)


def _recoverable(node):
    return (node.maintenance and node.fault == POWER_FAILURE
            and node.provision_state != states.ENROLL
            and not node.target_power_state)


class PowerSync:
    """The power state sync of one conductor.

    :param manager: the ``ConductorManager`` (``host``, ``conf``, ring,
        driver factory, stop event, ``lock_node``).
    """

    def __init__(self, manager):
        self.manager = manager
        self.conf = manager.conf
        # {node id: failures in a row}; only failing nodes are kept.
        self._failures = {}
        self._failures_lock = threading.Lock()

    def failures(self, node_id):
        """How many syncs of a node failed in a row (0 when in sync)."""
        with self._failures_lock:
            return self._failures.get(node_id, 0)

    def _count_failure(self, node_id):
        with self._failures_lock:
            count = self._failures.get(node_id, 0) + 1
            self._failures[node_id] = count
            return count

    def _forget(self, node_id):
        with self._failures_lock:
            self._failures.pop(node_id, None)

    # --- the run ---

    def run(self, context):
        """One sync of this conductor's nodes.

        :returns: how many nodes were looked at.
        """
        owned = self.manager.ring.hash_ranges(self.manager.host)
        if not owned:
            return 0
        # Locked nodes are skipped when read, not here: a failing node
        # that happens to be locked keeps its count, and so does one
        # passing through a state the sync leaves alone. Nodes in those
        # states are left out here, without being loaded (an enrolment
        # of thousands of nodes would cost a read of each per run).
        syncable = set(objects.Node.owned_ids(context, owned,
                                              {'maintenance': False}))
        to_sync = objects.Node.owned_ids(
            context, owned, {'maintenance': False,
                             'provision_state_not_in': SYNC_EXCLUDED_STATES})
        to_recover = objects.Node.owned_ids(
            context, owned, {'maintenance': True, 'fault': POWER_FAILURE})
        with self._failures_lock:
            # Nodes gone, or no longer syncable, keep no count.
            self._failures = {node_id: count for node_id, count
                              in self._failures.items()
                              if node_id in syncable}
            # As upstream, failing nodes first: they reach maintenance
            # sooner when the run is cut short.
            to_sync.sort(key=lambda n: -self._failures.get(n, 0))
        total = len(to_sync) + len(to_recover)
        workers = min(self.conf.conductor.sync_power_state_workers, total)
        work = _Nodes(context,
                      [(self._sync_node, node_id) for node_id in to_sync] +
                      [(self._recover_node, node_id)
                       for node_id in to_recover],
                      batch=2 * workers)
        if workers:
            pool = futurist.ThreadPoolExecutor(max_workers=workers)
            try:
                futurist_waiters.wait_for_all(
                    [pool.submit(self._drain, context, work)
                     for _ in range(workers)])
            finally:
                # The work is done; idle threads notice the shutdown at
                # their next poll, which this run need not wait for.
                pool.shutdown(wait=False)
        LOG.debug('Power state sync of %(host)s: %(n)d nodes looked at',
                  {'host': self.manager.host, 'n': total})
        return total

    def _drain(self, context, work):
        stop = self.manager.stop_event
        while not stop.is_set():
            try:
                item = work.next()
            except Exception:
                # The database failed: the next run tries again.
                LOG.exception('Power state sync could not read its nodes')
                return
            if item is None:
                return
            handle, node_id, node = item
            if node is None:
                LOG.debug('Power state sync skips node %s: deleted',
                          node_id)
                continue
            try:
                handle(context, node)
            except (exception.NodeLocked, exception.NodeNotFound) as exc:
                LOG.debug('Power state sync skips node %(node)s: %(exc)s',
                          {'node': node_id, 'exc': exc})
            except Exception:
                LOG.exception('Power state sync of node %s failed', node_id)

    def _read(self, context, node, eligible):
        """Read the BMC of ``node`` (as read from the database) without
        locking it.

        :returns: ``(snapshot, power state, error, health)``, or None
            when the node is not to be looked at now; ``health`` is
            ``_NOT_READ`` unless ``[conductor]enable_health_monitoring``
            and the BMC answered.
        """
        with task_manager.TaskManager(
                context, node.id, self.manager.host, shared=True,
                purpose=_PURPOSE, driver_factory=self.manager.driver_factory,
                stop_event=self.manager.stop_event, node=node) as task:
            if (not eligible(node) or node.reservation
                    or task.driver is None):
                return None
            power = task.driver.power
            try:
                power.validate(task)
            except exception.InvalidParameterValue as exc:
                if node.power_state is None:
                    # Nothing to defend yet: a node whose BMC is not
                    # configured yet is not failing.
                    return None
                return _snapshot(node), None, exc, _NOT_READ
            try:
                actual = power.get_power_state(task)
                if actual not in states.POWER_STATES:
                    raise exception.PowerStateFailure(
                        'The BMC reported the power state %s.' % actual)
            except Exception as exc:
                return _snapshot(node), None, exc, _NOT_READ
            return _snapshot(node), actual, None, self._read_health(task)

    def _read_health(self, task):
        """The node's health from its BMC (API 1.109), or _NOT_READ.

        A failure to read it is logged and changes nothing: the power
        state, read already, is what the sync is for.
        """
        if not self.conf.conductor.enable_health_monitoring:
            return _NOT_READ
        try:
            health = task.driver.power.get_health(task)
        except Exception as exc:
            LOG.warning('Power state sync could not read the health of '
                        'node %(node)s: %(err)s',
                        {'node': task.node.uuid, 'err': exc})
            return _NOT_READ
        if health is not None and health not in states.HEALTH_STATES:
            LOG.warning('Node %(node)s: the BMC reports the health %(h)r, '
                        'recorded as unknown', {'node': task.node.uuid,
                                                'h': health})
            health = None
        return health

    @staticmethod
    def _take_health(node, health):
        """Set the health read (not saved); True when it changed."""
        if health is _NOT_READ or health == node.health:
            return False
        LOG.info('Node %(node)s: health %(old)s -> %(new)s',
                 {'node': node.uuid, 'old': node.health, 'new': health})
        node.health = health
        return True

    def _lock(self, context, node_id, seen, eligible):
        """The node's task, locked, or None when it changed since read."""
        task = self.manager.lock_node(context, node_id, _PURPOSE,
                                      wait=False)
        if (_snapshot(task.node) != seen or not eligible(task.node)
                or task.driver is None):
            task.release_resources()
            return None
        return task

    # --- nodes not in maintenance ---

    def _still(self, context, node_id, seen, eligible):
        """Whether the node, read again, is as ``seen`` and unlocked."""
        try:
            node = objects.Node.get_by_id(context, node_id)
        except exception.NodeNotFound:
            return False
        return (_snapshot(node) == seen and eligible(node)
                and not node.reservation)

    def _sync_node(self, context, node):
        node_id = node.id
        read = self._read(context, node, _syncable)
        if read is None:
            return
        seen, actual, error, health = read
        max_retries = self.conf.conductor.power_state_sync_max_retries
        if error is not None:
            if not self._still(context, node_id, seen, _syncable):
                # Its record moved on while the BMC was read (a power
                # action, a lock): the failure may be that work's.
                LOG.debug('Power state sync: node %s changed while its '
                          'BMC was read; not counted', node_id)
                return
            count = self._count_failure(node_id)
            if count <= max_retries:
                LOG.warning('Power state sync could not read the power '
                            'state of node %(node)s (failure %(count)d of '
                            '%(max)d before maintenance): %(err)s',
                            {'node': node_id, 'count': count,
                             'max': max_retries + 1, 'err': error})
                return
        elif actual == seen[0]:
            self._forget(node_id)
            if health is _NOT_READ or health == seen[-1]:
                return
            task = self._lock(context, node_id, seen, _syncable)
            if task is None:
                return
            with task:
                if self._take_health(task.node, health):
                    task.node.save(task.context)
            return
        task = self._lock(context, node_id, seen, _syncable)
        if task is None:
            return
        with task:
            # Saved with the power state below.
            self._take_health(task.node, health)
            if error is not None:
                self._to_maintenance(
                    task, None, 'the power state could not be read %d '
                    'times in a row: %s' % (max_retries + 1, error))
            elif task.node.power_state is None:
                self._record(task, actual, node_history.INFO,
                             'no power state was recorded; recording '
                             '"%s" as read from the BMC' % actual)
            elif (self.conf.conductor.force_power_state_during_sync
                  and not (task.node.disable_power_off
                           and task.node.power_state == states.POWER_OFF)):
                # A node with disable_power_off is never powered off, so
                # a recorded "power off" is not forced onto it.
                self._force(task, actual)
            else:
                self._record(
                    task, actual, node_history.WARNING,
                    'the BMC reports "%s" while "%s" was recorded; '
                    'recording "%s"' % (actual, task.node.power_state,
                                        actual))

    def _record(self, task, actual, severity, why):
        node = task.node
        node.power_state = actual
        node.save(task.context)
        self._forget(node.id)
        self._history(task, severity, why)

    def _force(self, task, actual):
        """Power the node back to its recorded state."""
        node = task.node
        recorded = node.power_state
        count = self._count_failure(node.id)
        max_retries = self.conf.conductor.power_state_sync_max_retries
        if count > max_retries:
            self._to_maintenance(
                task, actual, 'the node was powered back to "%s" %d times '
                'but its BMC still reports "%s"' % (recorded, max_retries,
                                                    actual))
            return
        self._history(task, node_history.WARNING,
                      'the BMC reports "%s" while "%s" was recorded; '
                      'powering the node back to "%s"'
                      % (actual, recorded, recorded))
        try:
            task.driver.power.set_power_state(task, recorded)
        except Exception as exc:
            self._history(task, node_history.ERROR,
                          'could not power the node back to "%s" (failure '
                          '%d of %d before maintenance): %s'
                          % (recorded, count, max_retries + 1, exc))
        # The interface may have recorded what it did (and must not
        # change the recorded state: the next run checks the BMC again).
        node.power_state = recorded
        node.save(task.context)

    def _to_maintenance(self, task, actual, why):
        node = task.node
        message = ('Power state sync: %s. The node is put in maintenance; '
                   'it comes out by itself when its BMC answers again.'
                   % why)
        LOG.error('Node %(node)s: %(msg)s', {'node': node.uuid,
                                             'msg': message})
        if actual is not None:
            node.power_state = actual
        node.maintenance = True
        node.maintenance_reason = message
        node.fault = POWER_FAILURE
        node.last_error = message
        node.save(task.context)
        self._forget(node.id)
        self._history(task, node_history.ERROR, why, full=message)

    # --- nodes in maintenance for a power failure ---

    def _recover_node(self, context, node):
        node_id = node.id
        read = self._read(context, node, _recoverable)
        if read is None:
            return
        seen, actual, error, health = read
        if error is not None:
            LOG.debug('Node %(node)s in maintenance for a power failure '
                      'still does not answer: %(err)s',
                      {'node': node_id, 'err': error})
            return
        task = self._lock(context, node_id, seen, _recoverable)
        if task is None:
            return
        with task:
            node = task.node
            self._take_health(node, health)
            node.power_state = actual
            node.maintenance = False
            node.maintenance_reason = None
            node.fault = None
            node.save(task.context)
            self._history(task, node_history.INFO,
                          'the BMC answers again (power state "%s"); the '
                          'node is taken out of maintenance' % actual)

    def _history(self, task, severity, why, full=None):
        message = full or 'Power state sync: %s.' % why
        if severity != node_history.ERROR:
            LOG.info('Node %(node)s: %(msg)s', {'node': task.node.uuid,
                                                'msg': message})
        try:
            objects.NodeHistory.record(
                task.context, task.node, message,
                event_type=node_history.MONITORING, severity=severity,
                conductor=task.host)
        except Exception:
            # History is for operators; it must not undo the sync.
            LOG.exception('Could not record history of node %s',
                          task.node.uuid)


class _Nodes:
    """The work of a run, its nodes read from the database in batches.

    ``next()`` hands out ``(handle, node id, node)`` in order, ``node``
    None when it was deleted since its id was listed. The next ``batch``
    nodes are read in one go (one transaction, two statements) when the
    ones read are all handed out.
    """

    def __init__(self, context, work, batch):
        self._context = context
        self._pending = collections.deque(work)
        self._ready = collections.deque()
        self._batch = max(1, batch)
        self._lock = threading.Lock()

    def next(self):
        with self._lock:
            if not self._ready:
                count = min(self._batch, len(self._pending))
                if not count:
                    return None
                items = [self._pending.popleft() for _ in range(count)]
                found = {node.id: node for node in objects.Node.list(
                    self._context,
                    {'id_in': [node_id for _handle, node_id in items]})}
                self._ready.extend((handle, node_id, found.get(node_id))
                                   for handle, node_id in items)
            return self._ready.popleft()
