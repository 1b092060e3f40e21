"""The deferred action launcher: fills a bounded pool with due actions.

Each run of the launcher periodic (``[deferred_actions]launcher_interval``)
reads launchable actions (CREATED, RESCHEDULE, PENDING_RETRY) of the
unlocked nodes this conductor manages on the hash ring (the ring filters
in the query: :meth:`HashRingManager.hash_ranges`), elapsed
``start_after`` first then lazy ones, keeps the first of each node, and
in one transaction locks their nodes and claims them (see
:meth:`DeferredAction.claim_and_lock`: exactly one conductor wins each),
loading the actions and nodes its workers run; then hands each to its
pool of ``[deferred_actions]pool_size`` threads. A run makes the same few
queries however many actions wait. The threads never exceed the pool;
up to a pool's worth of claimed actions more wait in its queue, so that
a thread that frees starts the next one at once, and the claims are
made in batches (a run claims only when no more actions than threads
are left, up to twice the pool). When a run found more due actions than
it claimed, the pool is refilled as soon as its queue is empty, not
only at the next periodic run: the worker that finished runs the next
launch itself (one at a time), from the actions the last periodic run
read and left, so a conductor's throughput is set by its pool, not by
the interval, and a refill costs one transaction. A periodic run also
launches from what is left while that fills its room, and reads the
candidates again only once it does not.

* a node locked by another task keeps its action where it is (no retry
  spent) until a later run finds the node free;
* the call (:func:`alloc_framework.drivers.deferred.resolve`) runs in a
  task that adopts the lock of the claim (``ConductorManager.lock_node``
  with ``node``); its answer moves the action to COMPLETED (with its
  result) or RESCHEDULE (new arguments and ``start_after``); an
  exception ends it with :meth:`DeferredAction.retry_or_fail`
  (PENDING_RETRY while it has retries left, otherwise FAILED);
* the last state change releases the node lock in its own transaction
  (``release=``), except where the lock is still needed after it: the
  report of a FAILED action and the flow of a COMPLETED one, which
  release it at the end of the task as before;
* an action past its deadline (``[deferred_actions]action_timeout`` after
  its creation unless it set its own) or rescheduled more than
  ``[deferred_actions]max_reschedules`` times FAILED;
* FAILED writes ``last_error`` and an error in the node history naming the
  action, the error, and the request id and user that asked for it;
* an action that a provisioning flow waits for (its ``flow``: a
  deferrable clean, service or deploy step, see :mod:`conductor.steps`)
  hands the node back to that flow when it ends, in the same task, under
  the lock it ran with (:data:`FLOW_HANDLERS`): COMPLETED goes on with the
  next step, FAILED fails the flow.

Rescuing actions that lost their worker, releasing the locks of dead
conductors and purging ended actions are the clean-up's, a periodic of
its own (:mod:`alloc_framework.conductor.deferred_cleanup`); an action it
fails ends through :meth:`Launcher.failed_elsewhere`, like one that failed
here.

Every run logs a launch line and, once the last action it launched ended,
a completion line, both with the run's iteration number; its duration
goes to the ``DeferredActions.launch`` timer, and the gauges
:data:`GAUGES` go through the ``[metrics]`` emitter (at most once a
second when the launcher runs more often). COMPLETED and FAILED
send a versioned notification (:mod:`objects.baremetal.notification`).
Nothing here sleeps: a worker runs one call and returns.
"""

import datetime
import threading
import time

import futurist
from oslo_log import log
import oslo_messaging
from oslo_serialization import jsonutils

from alloc_framework.common import exception
from alloc_framework.common import metrics
from alloc_framework.conductor import provisioning
from alloc_framework.drivers import deferred
from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import base as obj_base
from alloc_framework.objects.baremetal import deferred_action as da
from alloc_framework.objects.baremetal import node_history
from alloc_framework.objects.baremetal import notification

LOG = log.getLogger(__name__)

# Node history event type of deferred action failures.
EVENT_TYPE = node_history.DEFERRED_ACTION
# Outcomes of one launched action, as counted by the completion log.
REVERTED = 'reverted'
GONE = 'gone'
# Gauges sent by the launcher runs: name -> states counted (None: the
# actions launched since the last send). Runs more often than
# GAUGES_SPACING seconds send them once every GAUGES_SPACING seconds.
GAUGES_SPACING = 1.0
GAUGES = {
    'DeferredActionsLaunchedCount': None,
    'DeferredActionsPendingCount': (da.CREATED, da.RESCHEDULE),
    'DeferredActionsFailedCount': (da.FAILED,),
    'DeferredActionsRetryCount': (da.PENDING_RETRY,),
    'DeferredActionsCompletedCount': (da.COMPLETED,),
}


FLOW_HANDLERS = {
    'clean': provisioning.deferred_step_ended,
    'service': provisioning.deferred_step_ended,
    'deploy': provisioning.deferred_step_ended,
}
"""``flow`` of an action -> what goes on when the action ends, called as
``handler(conf, task, action, error, result)`` with the node's task:
``error`` is None for COMPLETED and the failure message for FAILED;
``result`` is what the call returned (None for FAILED). The one place
where the end of an action moves a provisioning flow (see
:func:`flow_ended`)."""


def failure_message(action, error):
    """The ``last_error`` and history event of a FAILED action."""
    return ('Deferred action %(uuid)s (%(call)s) failed: %(error)s '
            '(request %(request)s, user %(user)s)'
            % {'uuid': action.uuid, 'call': action.call, 'error': error,
               'request': action.request_id, 'user': action.user_id})


def _result_text(value):
    if value is None or isinstance(value, str):
        return value
    return jsonutils.dumps(value)


class _Iteration:
    """What one launcher run launched, and how it ended (for the logs)."""

    def __init__(self, number, launched, on_end):
        self.number = number
        self.launched = launched
        self.outcomes = {}
        self._left = launched
        self._lock = threading.Lock()
        self._on_end = on_end
        if not launched:
            on_end(self)

    def done(self, outcome):
        with self._lock:
            self.outcomes[outcome] = self.outcomes.get(outcome, 0) + 1
            self._left -= 1
            last = self._left == 0
        if last:
            self._on_end(self)


class Launcher:
    """Launches the deferred actions of one conductor.

    It uses the conductor through its public API: ``host``, ``conf``,
    ``ring`` and :meth:`ConductorManager.lock_node`.

    :param manager: the ``ConductorManager``.
    :param stop_event: set when the conductor stops; no refill starts
        then.
    """

    def __init__(self, manager, stop_event):
        self.manager = manager
        self._stop_event = stop_event
        self.conf = manager.conf
        self.host = manager.host
        self.pool_size = self.conf.deferred_actions.pool_size
        self.ring = manager.ring
        self.iteration = 0
        self._busy = 0
        self._lock = threading.Lock()
        # Whether the last run left due actions for want of threads, the
        # ids of those it read (the first of each node, in launch order),
        # and the one refill that may run at a time.
        self._backlog = False
        self._waiting = []
        self._refilling = threading.Lock()
        # A worker freed a thread while the refill was running: the
        # running refill launches once more before it ends.
        self._refill_wanted = False
        # Actions launched since the gauges were last sent, and when they
        # may be sent again (time.monotonic()).
        self._launched = 0
        self._gauges_after = 0.0
        self._executor = None
        self.metrics = metrics.get_emitter(self.conf)
        self._notifier = None

    # --- life cycle ---

    def start(self, context):
        """Start the pool.

        Actions a previous life of this host left RUNNING are the
        clean-up's (``DeferredCleanup.rescue_interrupted``).
        """
        self._executor = futurist.ThreadPoolExecutor(
            max_workers=self.pool_size)

    def stop(self):
        """Wait for the actions under way (each is one short call)."""
        if self._executor is not None:
            self._executor.shutdown(wait=True)
            self._executor = None

    @property
    def busy(self):
        """Workers running an action now."""
        return min(self._busy, self.pool_size)

    def utilization(self):
        """Percentage of the pool in use."""
        return 100.0 * self.busy / self.pool_size

    def _room(self):
        """How many actions a run may claim now (under ``_lock``).

        Up to a pool's worth of claimed actions wait in the pool's queue
        beyond those running, so that a thread that frees starts the
        next one at once; the claims are made in batches, when no more
        than the threads are left: then the queue is empty.
        """
        if self._busy > self.pool_size:
            return 0
        return 2 * self.pool_size - self._busy

    # --- the launcher periodic ---

    def _owned(self):
        """``{group: MD5 ranges}`` of the nodes the ring gives us."""
        return self.ring.hash_ranges(self.host)

    def launch(self, context, refill=False):
        """One launcher run; returns its :class:`_Iteration`.

        :param refill: a run from a worker that just freed a thread
            (:meth:`_refill`): it launches what the last periodic run
            read and left for want of threads, if any, without reading
            the candidates or sending the gauges again.
        """
        with self.metrics.timer('DeferredActions.launch'):
            return self._launch(context, refill)

    def _next(self, context, free, refill):
        """Ids of at most ``free`` actions to claim, the first of their
        node each.

        A refill takes them from what the last read left, if anything; so
        does a periodic run while that holds ``free`` or more (they were
        due first): the candidates are read again once it runs short.
        """
        with self._lock:
            if self._waiting and (refill or len(self._waiting) >= free):
                ids = self._waiting[:free]
                del self._waiting[:free]
                return ids
        limit = self.conf.deferred_actions.candidates_per_iteration
        rows = objects.DeferredAction.candidates(context, limit,
                                                 owned=self._owned())
        # A node runs one action at a time: the others would only be
        # claimed to be given back.
        firsts = {}
        for action_id, node_uuid, _group in rows:
            firsts.setdefault(node_uuid, action_id)
        mine = list(firsts.values())
        with self._lock:
            # Claims are conditional: an id another run or conductor
            # claimed meanwhile is only skipped.
            self._waiting = mine[free:]
            # A full read may hide more behind what it left.
            self._backlog = bool(self._waiting) or len(rows) >= limit
        return mine[:free]

    def _launch(self, context, refill=False):
        executor = self._executor
        with self._lock:
            self.iteration += 1
            number = self.iteration
            free = self._room()
        claimed = []
        if free > 0 and executor is not None:
            # The nodes are locked with the claim, in one transaction: a
            # node locked by another task keeps its action waiting.
            claimed = objects.DeferredAction.claim_and_lock(
                context, self._next(context, free, refill), self.host)
            with self._lock:
                self._busy += len(claimed)
        LOG.debug('Deferred actions iteration %(it)d: launching %(n)d '
                  'actions, worker pool %(pct).0f%% used',
                  {'it': number, 'n': len(claimed),
                   'pct': self.utilization()})
        report = _Iteration(number, len(claimed), self._ended)
        for action, previous, node in claimed:
            try:
                executor.submit(self._run, context, action, previous, node,
                                report)
            except RuntimeError:
                # The conductor is stopping: give the action back.
                self._give_back(action, previous)
                self._finished(report, REVERTED)
        with self._lock:
            self._launched += len(claimed)
        if not refill:
            self._send_gauges(context)
        return report

    def _send_gauges(self, context):
        """Send :data:`GAUGES`, unless they were sent less than
        ``GAUGES_SPACING`` seconds ago by the launcher periodic: a
        launcher run every 0.05 s would otherwise count the actions of
        every state 20 times a second. Without the periodic (runs only
        on demand) every run sends them."""
        spacing = (GAUGES_SPACING
                   if self.conf.deferred_actions.launcher_interval else 0)
        now = time.monotonic()
        with self._lock:
            if now < self._gauges_after:
                return
            self._gauges_after = now + spacing
            launched, self._launched = self._launched, 0
        counts = objects.DeferredAction.count_by_state(context)
        for name, counted in GAUGES.items():
            value = (launched if counted is None
                     else sum(counts.get(s, 0) for s in counted))
            self.metrics.send_gauge(name, value)

    def notify(self, context, action, node_uuid):
        """Send the notification of a COMPLETED or FAILED action."""
        try:
            if self._notifier is None:
                self._notifier = oslo_messaging.Notifier(
                    oslo_messaging.get_notification_transport(self.conf),
                    publisher_id=notification.PUBLISHER)
            objects.DeferredActionNotification.for_action(
                action, node_uuid, self.host).emit(
                    context, self._notifier,
                    self.conf.deferred_actions.notification_level)
        except Exception:
            # Operators' visibility must not change the action's fate.
            LOG.exception('Could not send the notification of deferred '
                          'action %s', action.uuid)

    def _ended(self, report):
        outcomes = report.outcomes
        LOG.debug('Deferred actions iteration %(it)d ended: %(c)d completed,'
                  ' %(f)d failed, %(r)d rescheduled, %(p)d pending retry, '
                  '%(v)d given back (node locked)',
                  {'it': report.number,
                   'c': outcomes.get(da.COMPLETED, 0),
                   'f': outcomes.get(da.FAILED, 0),
                   'r': outcomes.get(da.RESCHEDULE, 0),
                   'p': outcomes.get(da.PENDING_RETRY, 0),
                   'v': outcomes.get(REVERTED, 0)})

    def _finished(self, report, outcome):
        with self._lock:
            self._busy -= 1
        report.done(outcome)

    def _give_back(self, action, previous):
        """Undo the claim of an action not run, and its node's lock."""
        try:
            action.revert_claim(previous, release=self.host)
        except Exception:
            LOG.exception('Could not give back deferred action %s',
                          action.uuid)

    # --- on a worker ---

    def _run(self, context, action, previous, node, report):
        outcome = GONE
        try:
            outcome = self._execute(context, action, previous, node)
        except Exception:
            LOG.exception('Unexpected error running deferred action %s',
                          action.uuid)
        finally:
            self._finished(report, outcome)
        self._refill(context)

    def _refill(self, context):
        """Launch again from the worker that just freed a thread, when the
        last run left due actions waiting for one.

        Only with the launcher periodic enabled, never while stopping, and
        one refill at a time: the others leave it to the one running,
        which then launches again. Without that second launch, an action
        the refill launched could end (and ask for a refill) before the
        refill itself ended, and the backlog would wait for the next
        periodic run with every thread idle.
        """
        if not self.conf.deferred_actions.launcher_interval:
            return
        with self._lock:
            self._refill_wanted = True
        while self._refilling.acquire(blocking=False):
            try:
                while True:
                    with self._lock:
                        wanted, self._refill_wanted = (
                            self._refill_wanted, False)
                    if (not wanted or not self._backlog
                            or self._stop_event.is_set()):
                        break
                    with self._lock:
                        room = self._room()
                    if not room:
                        break
                    try:
                        self.launch(context, refill=True)
                    except Exception:
                        LOG.exception('Could not refill the deferred '
                                      'action pool')
                        break
            finally:
                self._refilling.release()
            # Asked for between the last look and the release: the
            # asker found the lock taken and left it to us.
            with self._lock:
                if not self._refill_wanted:
                    return

    def _execute(self, context, action, previous, node):
        """Run a claimed action under the lock its claim took.

        Its last state change releases the lock in the same transaction
        (``release=``), unless what follows still needs the lock: the
        report of a FAILED action, the flow of a COMPLETED one.
        """
        task = self.manager.lock_node(
            context, action.node_id, 'deferred action %s' % action.uuid,
            node=node)
        with task:
            now = obj_base.utcnow()
            if now > self._deadline(action):
                return self._fail(task, action, 'timed out (deadline %s)'
                                  % self._deadline(action).isoformat())
            try:
                method = deferred.resolve(task, action.call)
            except exception.DeferredCallNotAllowed as exc:
                return self._fail(task, action, exc)
            try:
                answer = method(task, **action.arguments)
            except Exception as exc:
                LOG.warning('Deferred action %(uuid)s (%(call)s) of node '
                            '%(node)s raised: %(exc)s',
                            {'uuid': action.uuid, 'call': action.call,
                             'node': task.node.uuid, 'exc': exc})
                if action.retry_or_fail(exc, release=self.host) == da.FAILED:
                    return self.failed(task, action, exc)
                task.lock_released()
                return da.PENDING_RETRY
            if isinstance(answer, deferred.Reschedule):
                return self._reschedule(task, action, answer, now)
            waited = action.flow in FLOW_HANDLERS
            action.transition(da.COMPLETED, result=_result_text(answer),
                              release=None if waited else self.host)
            if not waited:
                task.lock_released()
            self.notify(task.context, action, task.node.uuid)
            LOG.debug('Deferred action %(uuid)s (%(call)s) of node %(node)s'
                      ' completed', {'uuid': action.uuid,
                                     'call': action.call,
                                     'node': task.node.uuid})
            flow_ended(self.conf, task, action, result=answer)
            return da.COMPLETED

    def _deadline(self, action):
        if action.deadline is not None:
            return obj_base.to_db_value(action.deadline)
        return obj_base.to_db_value(action.created_at) + datetime.timedelta(
            seconds=self.conf.deferred_actions.action_timeout)

    def _reschedule(self, task, action, answer, now):
        count = action.reschedule_count + 1
        limit = self.conf.deferred_actions.max_reschedules
        if count > limit:
            return self._fail(task, action, 'rescheduled more than %d '
                                            'times' % limit)
        start_after = (None if answer.delay is None
                       else now + datetime.timedelta(seconds=answer.delay))
        retries = (action.retry_remaining if answer.retries is None
                   else answer.retries)
        action.transition(da.RESCHEDULE, arguments=answer.arguments,
                          start_after=start_after, reschedule_count=count,
                          retry_remaining=retries, conductor=None,
                          release=self.host)
        task.lock_released()
        return da.RESCHEDULE

    def _fail(self, task, action, error):
        """FAILED whatever the retries left, then :meth:`failed`."""
        action.fail(error)
        return self.failed(task, action, error)

    # --- what follows a FAILED action ---

    def failed(self, task, action, error):
        """Report an action that just moved to FAILED, under its node's
        lock (``task``): history, ``last_error``, notification, flow.

        :returns: FAILED.
        """
        message = failure_message(action, error)
        LOG.error('Node %(node)s: %(msg)s', {'node': task.node.uuid,
                                             'msg': message})
        record_failure(task.context, task.node, action, message, self.host)
        task.node.last_error = message
        task.node.save(task.context)
        self.notify(task.context, action, task.node.uuid)
        flow_ended(self.conf, task, action, error=message)
        return da.FAILED

    def failed_elsewhere(self, context, action, error):
        """Report an action moved to FAILED away from a worker (the
        clean-up rescued it with no retry left).

        The history and the notification never wait; ``last_error`` and
        the flow need the node lock, taken without waiting: a node locked
        by another task only gets the history entry.
        """
        message = failure_message(action, error)
        node = objects.Node.get_by_id(context, action.node_id)
        record_failure(context, node, action, message, self.host)
        self.notify(context, action, node.uuid)
        try:
            with self.manager.lock_node(
                    context, node.id,
                    'deferred action %s failure' % action.uuid,
                    wait=False) as task:
                task.node.last_error = message
                task.node.save(context)
                flow_ended(self.conf, task, action, error=message)
        except exception.NodeLocked:
            LOG.warning('Node %(node)s is locked: its last_error does not '
                        'show that %(msg)s', {'node': node.uuid,
                                              'msg': message})


def flow_ended(conf, task, action, error=None, result=None):
    """Hand the node back to the flow waiting for ``action``, if any
    (:data:`FLOW_HANDLERS`).

    :param error: the failure message of a FAILED action, None when it
        COMPLETED.
    :param result: what the call of a COMPLETED action returned.
    """
    handler = FLOW_HANDLERS.get(action.flow)
    if handler is None:
        return
    try:
        handler(conf, task, action, error, result)
    except Exception:
        # The action's own state is already final; the flow's failure to
        # go on must not be reported as the action's.
        LOG.exception('Node %(node)s: could not go on with the %(flow)s '
                      'flow after deferred action %(uuid)s',
                      {'node': task.node.uuid, 'flow': action.flow,
                       'uuid': action.uuid})


def record_failure(context, node, action, message, host):
    """Write a FAILED action to the node history, as its originator."""
    try:
        objects.NodeHistory(
            context, node_id=node.id, event=message, event_type=EVENT_TYPE,
            severity=node_history.ERROR, conductor=host,
            user=action.user_id,
            **node_history.node_state(node)).create(context)
    except Exception:
        # History is for operators; never let it mask the failure.
        LOG.exception('Could not record history of node %s', node.uuid)
