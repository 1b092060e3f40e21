"""Node locks: every change a conductor makes to a node happens in a task.

``acquire()`` takes the node's exclusive lock by writing the conductor's
host name into ``nodes.reservation`` with a conditional UPDATE (only when
it is NULL), so the lock works across processes and hosts on every
database. A busy node is retried ``[conductor]node_locked_retry_attempts``
times, ``[conductor]node_locked_retry_interval`` seconds apart, then
``NodeLocked`` is raised. The lock is released when the ``with`` block
ends, whatever happens in it. A shared task takes no lock and must not
change the node.

Usage::

    with task_manager.acquire(context, node_id, purpose='power') as task:
        task.driver.power.set_power_state(task, states.POWER_ON)
        task.node.save()
"""

import threading

from oslo_log import log

from alloc_framework.common import exception
from alloc_framework.objects import baremetal as objects

LOG = log.getLogger(__name__)


class TaskManager:
    """A node, its lock, and its driver for the duration of one task.

    Prefer :func:`acquire`. ``driver`` is None when the node's hardware
    type is not loaded by this conductor (or no factory was given), which
    is enough for work that needs no driver, such as allocations.
    ``stop_event`` is set when the conductor stops: drivers that must
    wait for the hardware within a call wait on it, never sleep.

    ``node``, when given, is a node whose lock ``host`` already holds,
    taken in the transaction that loaded it (the deferred action
    launcher locks the nodes of a batch of actions as it claims them,
    ``DeferredAction.claim_and_lock``): the task adopts that lock
    instead of taking it, and releases it as any other.
    """

    def __init__(self, context, node_id, host, shared=False, purpose='',
                 driver_factory=None, retry_attempts=3, retry_interval=0.2,
                 stop_event=None, on_release=None, node=None):
        self.context = context
        self._on_release = on_release
        self.host = host
        self.shared = shared
        self.purpose = purpose
        self.node = None
        self.driver = None
        self._locked = False
        self._released = False
        self.stop_event = stop_event or threading.Event()
        if node is not None and not shared:
            self._locked = True
            self.node_id = node_id
        else:
            self._lock(node_id, retry_attempts, retry_interval,
                       self.stop_event)
        try:
            self.node = node or objects.Node.get_by_id(context, node_id)
            if driver_factory is not None:
                try:
                    self.driver = driver_factory.build_driver(self.node)
                except (exception.DriverNotFound,
                        exception.InterfaceNotFoundInEntrypoint) as exc:
                    LOG.debug('No driver for node %(node)s here: %(exc)s',
                              {'node': self.node.uuid, 'exc': exc})
        except Exception:
            self.release_resources()
            raise

    def _lock(self, node_id, attempts, interval, stop_event):
        if self.shared:
            return
        holder = None
        for attempt in range(attempts + 1):
            locked, holder = objects.Node.reserve(self.context, node_id,
                                                  self.host)
            if locked:
                self._locked = True
                self.node_id = node_id
                LOG.debug('Node %(node)s locked by %(host)s for %(why)s',
                          {'node': node_id, 'host': self.host,
                           'why': self.purpose})
                return
            # Waiting on the event, not sleeping: a stopping conductor
            # cuts the wait short.
            if attempt < attempts and stop_event.wait(interval):
                break
        raise exception.NodeLocked(node=node_id, host=holder)

    def lock_released(self):
        """Say that the lock was released by a transaction of the task's
        own (the one of its last change, such as
        ``DeferredAction.transition(release=host)``): the end of the task
        does not release it again, and still runs ``on_release``.
        """
        if self._locked:
            self._locked = False
            self._released = True

    def release_resources(self):
        """Release the node lock (idempotent; tolerates a deleted node)."""
        if not self._locked:
            if self._released:
                self._released = False
                self._after_release()
            return
        self._locked = False
        try:
            objects.Node.release(self.context, self.node_id, self.host)
        except exception.NodeNotFound:
            # The task deleted the node.
            pass
        except exception.NodeNotLocked:
            LOG.error('Lock of node %(node)s held by %(host)s was broken '
                      'during %(why)s', {'node': self.node_id,
                                         'host': self.host,
                                         'why': self.purpose})
        self._after_release()

    def _after_release(self):
        if self._on_release is not None and self.node is not None:
            try:
                self._on_release(self.context, self.node.uuid)
            except Exception:
                LOG.exception('Error after releasing node %s',
                              self.node.uuid)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.release_resources()
        return False


def acquire(context, node_id, shared=False, purpose='', host=None,
            driver_factory=None, conf=None, stop_event=None,
            on_release=None):
    """Lock a node for a task and return the :class:`TaskManager`.

    :param node_id: the node's integer id.
    :param shared: take no lock (read-only work).
    :param purpose: what the task is for (logs).
    :param host: the lock holder's name; ``conf.host`` by default.
    :param driver_factory: builds ``task.driver`` when given.
    :param conf: the ``ConfigOpts`` with the ``[conductor]`` retry options;
        the process-wide one when None.
    :param stop_event: a ``threading.Event`` that cuts retries short.
    :param on_release: called as ``on_release(context, node_uuid)`` once
        the lock of an exclusive task is released (the node may be gone
        then); its errors are logged, never raised.
    :raises: NodeLocked when the lock is still busy after the retries.
    :raises: NodeNotFound
    """
    if conf is None:
        from alloc_framework import conf as af_conf
        conf = af_conf.CONF
    return TaskManager(
        context, node_id, host or conf.host, shared=shared,
        purpose=purpose, driver_factory=driver_factory,
        retry_attempts=conf.conductor.node_locked_retry_attempts,
        retry_interval=conf.conductor.node_locked_retry_interval,
        stop_event=stop_event, on_release=on_release)
