"""The deferred action clean-up: rescue, release, delete, purge.

A periodic of its own, apart from the launcher
(:mod:`alloc_framework.conductor.deferred_actions`). Each run:

* rescues actions RUNNING for more than
  ``[deferred_actions]running_timeout`` seconds (their conductor was
  killed, or their worker died): :meth:`DeferredAction.retry_or_fail`
  moves them to PENDING_RETRY, spending a retry, or to FAILED, which the
  launcher reports (:meth:`Launcher.failed_elsewhere`);
* releases the node locks that dead conductors left on nodes with
  launchable actions (such a lock protects nothing: the work under it
  died with its conductor);
* soft-deletes COMPLETED and FAILED actions ended more than
  ``[deferred_actions]retention`` seconds ago (never more than
  ``MAX_RETENTION``), and purges the deleted rows in batches of
  ``[deferred_actions]purge_batch_size`` until none is left or the
  conductor stops.

It runs every ``[deferred_actions]idle_cleanup_interval`` seconds while
the launcher's pool is idle, but only every
``[deferred_actions]cleanup_interval`` seconds while it is busy. At
start, :meth:`DeferredCleanup.rescue_interrupted` rescues at once what a
previous life of this host left RUNNING. Nothing here sleeps.
"""

import datetime
import time

from oslo_log import log

from alloc_framework.common import exception
from alloc_framework.common import metrics
from alloc_framework.conf import deferred_actions as conf_deferred
from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import base as obj_base
from alloc_framework.objects.baremetal import deferred_action as da

LOG = log.getLogger(__name__)


class DeferredCleanup:
    """The clean-up of one conductor's deferred actions.

    :param manager: the ``ConductorManager`` (``host``, ``conf``).
    :param launcher: the conductor's ``Launcher``: whether its pool is
        busy sets the cadence, and it reports the actions rescued into
        FAILED.
    :param stop_event: set when the conductor stops; cuts a long purge
        short.
    """

    def __init__(self, manager, launcher, stop_event):
        self.conf = manager.conf
        self.host = manager.host
        self.launcher = launcher
        self._stop_event = stop_event
        self._last_run = None
        self.metrics = metrics.get_emitter(self.conf)

    def rescue_interrupted(self, context):
        """Retry (or fail) what this host was running when it stopped.

        Those actions lost their worker: they go back to PENDING_RETRY
        (or FAILED) at once rather than after
        ``[deferred_actions]running_timeout``.

        :returns: how many were rescued.
        """
        return sum(self._try_rescue(context, action_id,
                                    'interrupted by a restart of %s'
                                    % self.host)
                   for action_id in objects.DeferredAction.running(
                       context, conductor=self.host))

    def run(self, context):
        """One clean-up run (see the module docstring).

        :returns: ``(rescued, deleted, purged)`` counts, or None when the
            run was skipped because the pool is busy.
        """
        with self.metrics.timer('DeferredActions.cleanup'):
            return self._run(context)

    def _run(self, context):
        conf = self.conf.deferred_actions
        now = time.monotonic()
        if (self.launcher.busy and self._last_run is not None
                and now - self._last_run < conf.cleanup_interval):
            return None
        self._last_run = now
        utcnow = obj_base.utcnow()
        rescued = 0
        before = utcnow - datetime.timedelta(seconds=conf.running_timeout)
        for action_id in objects.DeferredAction.running(context, before):
            rescued += self._try_rescue(
                context, action_id,
                'running for more than %d seconds' % conf.running_timeout)
        released = self._release_dead_locks(context)
        # The ceiling holds whatever the configuration says.
        retention = min(conf.retention, conf_deferred.MAX_RETENTION)
        deleted = objects.DeferredAction.soft_delete_terminal(
            context, utcnow - datetime.timedelta(seconds=retention))
        purged = 0
        while not self._stop_event.is_set():
            count = objects.DeferredAction.purge_deleted(
                context, conf.purge_batch_size)
            purged += count
            if count < conf.purge_batch_size:
                break
        LOG.debug('Deferred actions clean-up: %(r)d stuck actions rescued, '
                  '%(l)d locks of dead conductors released, %(d)d ended '
                  'actions deleted, %(p)d purged',
                  {'r': rescued, 'l': released, 'd': deleted, 'p': purged})
        return rescued, deleted, purged

    def _release_dead_locks(self, context):
        """Release node locks of dead conductors that block actions.

        A conductor killed while it ran an action leaves the node locked;
        the action, rescued, could never take the node again.

        :returns: how many locks were released.
        """
        blocked = objects.DeferredAction.locked_nodes(context)
        if not blocked:
            return 0
        alive = {c.hostname for c in objects.Conductor.list_alive(
            context, self.conf.conductor.heartbeat_timeout)}
        released = 0
        for node_id, holder in blocked.items():
            if holder in alive or holder == self.host:
                continue
            try:
                objects.Node.release(context, node_id, holder)
            except (exception.NodeNotLocked, exception.NodeNotFound):
                continue  # released meanwhile, or locked by someone else
            LOG.warning('Released the lock of node %(node)s left by dead '
                        'conductor %(host)s: deferred actions wait for it',
                        {'node': node_id, 'host': holder})
            released += 1
        return released

    def _try_rescue(self, context, action_id, why):
        """:meth:`_rescue`; returns 1 when done, 0 when not needed."""
        try:
            self._rescue(context, action_id, why)
            return 1
        except (exception.DeferredActionStateChanged,
                exception.DeferredActionNotFound):
            return 0  # it ended, or another conductor rescued it
        except Exception:
            LOG.exception('Could not rescue deferred action %s', action_id)
            return 0

    def _rescue(self, context, action_id, why):
        """A RUNNING action that lost its worker: retry or fail."""
        action = objects.DeferredAction.get_by_id(context, action_id)
        error = '%s on %s' % (why, action.conductor)
        LOG.warning('Deferred action %(uuid)s (%(call)s): %(error)s',
                    {'uuid': action.uuid, 'call': action.call,
                     'error': error})
        if action.retry_or_fail(error) == da.FAILED:
            self.launcher.failed_elsewhere(context, action, error)
