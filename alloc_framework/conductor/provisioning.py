"""Provisioning and power work on a locked node.

A request is in two parts. :func:`begin` runs in the RPC call: it makes
the request's first move (``available`` -> ``deploying``, target
``active``) and saves it, so that a client polling the node after the
202 sees where the node is heading. The rest (:func:`run`,
:func:`change_power`) runs in a conductor worker that owns the task and
releases the node lock when it ends, whatever happens.

Every move of ``provision_state`` goes through the state machine of
:mod:`alloc_framework.objects.baremetal.states`. A failure moves the node
to the failure state of its flow, sets ``last_error`` and records a node
history entry; it is never raised to the API, which already answered 202. An
interface that returns a wait state leaves the node waiting (lock
released) until the matching ``continue_*`` call.
"""

from oslo_log import log

from alloc_framework.objects.baremetal import exception
from alloc_framework.objects.baremetal import states
from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import node_history

LOG = log.getLogger(__name__)

CLEAN_FAILURE = 'clean failure'
"""The ``fault`` of a node put in maintenance by a cleaning failure."""


def _move(task, event):
    node = task.node
    node.provision_state, node.target_provision_state = (
        states.MACHINE.process_event(node.provision_state, event,
                                     node.target_provision_state,
                                     node=node.uuid))
    node.save(task.context)


def _record(task, message, event_type=node_history.PROVISIONING):
    try:
        objects.NodeHistory.record(task.context, task.node, message,
                                   event_type=event_type,
                                   conductor=task.host)
    except Exception:
        # History is for operators; never let it mask the real failure.
        LOG.exception('Could not record history of node %s',
                      task.node.uuid)


def _fail(task, message, fault=None):
    """Move a node to the failure state of its flow and explain why."""
    node = task.node
    LOG.error('Node %(node)s: %(msg)s', {'node': node.uuid, 'msg': message})
    node.last_error = message
    if fault:
        # Upstream puts a node whose cleaning failed in maintenance: it
        # must not be handed out before an operator has looked at it.
        node.maintenance = True
        node.maintenance_reason = message
        node.fault = fault
    node.clean_step = {}
    node.deploy_step = {}
    _move(task, states.FAIL)
    _record(task, message)


# --- cleaning ----------------------------------------------------------------

def automated_clean_enabled(conf, node):
    if node.automated_clean is not None:
        return node.automated_clean
    return conf.conductor.automated_clean


def _all_steps(task):
    steps = []
    for iface in task.driver.all_interfaces().values():
        steps.extend(iface.get_clean_steps(task))
    return steps


def validate_manual_clean_steps(task, clean_steps):
    """Check manual clean steps against the node's interfaces.

    :returns: the steps with ``args`` filled in.
    :raises: InvalidParameterValue naming the bad step.
    """
    if not isinstance(clean_steps, list) or not clean_steps:
        raise exception.InvalidParameterValue(
            err='clean_steps must be a non-empty list of steps.')
    known = {(s['interface'], s['step']): s for s in _all_steps(task)}
    result = []
    for step in clean_steps:
        if not isinstance(step, dict):
            raise exception.InvalidParameterValue(
                err='Each clean step must be an object, not %r.' % (step,))
        key = (step.get('interface'), step.get('step'))
        if key not in known:
            raise exception.InvalidParameterValue(
                err='Clean step %(step)s of interface %(iface)s is not '
                    'supported by node %(node)s. Supported steps: %(ok)s'
                    % {'step': key[1], 'iface': key[0],
                       'node': task.node.uuid,
                       'ok': ', '.join('%s.%s' % k for k in sorted(known))})
        args = step.get('args') or {}
        if not isinstance(args, dict):
            raise exception.InvalidParameterValue(
                err='The args of clean step %s must be an object.' % key[1])
        argsinfo = known[key]['argsinfo']
        unknown = set(args) - set(argsinfo)
        if unknown:
            raise exception.InvalidParameterValue(
                err='Clean step %s does not accept the argument(s) %s.'
                    % (key[1], ', '.join(sorted(unknown))))
        missing = [a for a, info in argsinfo.items()
                   if info.get('required') and a not in args]
        if missing:
            raise exception.InvalidParameterValue(
                err='Clean step %s requires the argument(s) %s.'
                    % (key[1], ', '.join(missing)))
        result.append({'interface': key[0], 'step': key[1], 'args': args})
    return result


# Keys of driver_internal_info that remember the cleaning in progress, so
# that a step that waits can be resumed with the steps after it.
_STEPS_KEY = 'clean_steps'
_INDEX_KEY = 'clean_step_index'


def _set_progress(node, steps=None, index=None):
    info = dict(node.driver_internal_info or {})
    if steps is None:
        info.pop(_STEPS_KEY, None)
        info.pop(_INDEX_KEY, None)
    else:
        info[_STEPS_KEY] = steps
        info[_INDEX_KEY] = index
    node.driver_internal_info = info


def _run_clean_steps(task, steps, start=0):
    """Run ``steps[start:]`` in order; True when all ran, False on a wait."""
    node = task.node
    for index in range(start, len(steps)):
        step = steps[index]
        node.clean_step = step
        _set_progress(node, steps, index)
        node.save(task.context)
        iface = getattr(task.driver, step['interface'])
        result = iface.execute_clean_step(task, step)
        if result == states.CLEANWAIT:
            _move(task, states.WAIT)
            return False
    node.clean_step = {}
    _set_progress(node)
    return True


def _finish_cleaning(task, steps, start=0):
    node = task.node
    try:
        if not _run_clean_steps(task, steps, start):
            return
    except Exception as exc:
        _set_progress(node)
        _fail(task, 'Cleaning failed: %s' % exc, fault=CLEAN_FAILURE)
        return
    # Manual cleaning returns to manageable, automated goes on to
    # available: the target set when cleaning started tells which.
    done = (states.MANAGE if node.target_provision_state
            == states.MANAGEABLE else states.DONE)
    _move(task, done)
    LOG.info('Node %(node)s cleaned, now %(state)s',
             {'node': node.uuid, 'state': node.provision_state})


def do_cleaning(conf, task, manual_steps=None):
    """Clean a node that is in ``cleaning`` and finish the flow.

    Automated cleaning runs the interfaces' steps with a priority above 0
    (highest first) unless disabled; manual cleaning runs
    ``manual_steps``.
    """
    node = task.node
    if manual_steps is not None:
        steps = manual_steps
    elif automated_clean_enabled(conf, node):
        try:
            steps = [s for s in _all_steps(task) if s['priority'] > 0]
        except Exception as exc:
            _fail(task, 'Cleaning failed: %s' % exc, fault=CLEAN_FAILURE)
            return
        steps.sort(key=lambda s: -s['priority'])
        steps = [{'interface': s['interface'], 'step': s['step'],
                  'args': {}} for s in steps]
    else:
        steps = []
    _finish_cleaning(task, steps)


def continue_cleaning(conf, task):
    """Resume cleaning after the step that returned ``clean wait``."""
    info = task.node.driver_internal_info or {}
    steps = info.get(_STEPS_KEY) or []
    start = info.get(_INDEX_KEY, -1) + 1
    _finish_cleaning(task, steps, start)


def _deploy_with(task, work):
    """Run ``work()``, a deploy step of the driver, and act on its result.

    A failure fails the deployment; ``wait call-back`` leaves it waiting
    for its call-back; anything else finishes it.
    """
    node = task.node
    try:
        result = work()
    except Exception as exc:
        _fail(task, 'Deploy failed: %s' % exc)
        return
    if result == states.DEPLOYWAIT:
        _move(task, states.WAIT)
        return
    node.deploy_step = {}
    _move(task, states.DONE)
    LOG.info('Node %s deployed', node.uuid)


def continue_deploy(conf, task):
    """Resume a deployment that returned ``wait call-back``."""
    _deploy_with(task, lambda: task.driver.deploy.continue_deploy(task))


# --- the flows ---------------------------------------------------------------
#
# Each flow is the work that follows the first move of its event, which
# begin() has already made and saved.

def do_verify(conf, task):
    """Verifying: the node's credentials work, its power state is readable."""
    node = task.node
    try:
        task.driver.power.validate(task)
        task.driver.management.validate(task)
        node.power_state = task.driver.power.get_power_state(task)
    except Exception as exc:
        _fail(task, 'Failed to verify node %s: %s' % (node.uuid, exc))
        return
    _move(task, states.DONE)


def do_deploy(conf, task):
    def work():
        task.driver.power.validate(task)
        task.driver.boot.validate(task)
        task.driver.deploy.validate(task)
        task.driver.deploy.prepare(task)
        return task.driver.deploy.deploy(task)
    _deploy_with(task, work)


def do_tear_down(conf, task):
    node = task.node
    try:
        task.driver.deploy.tear_down(task)
        task.driver.deploy.clean_up(task)
    except Exception as exc:
        _fail(task, 'Tear down failed: %s' % exc)
        return
    # The instance is gone: release it and, as the allocation API says,
    # its allocation, in the same transaction.
    node.instance_info = {}
    node.instance_uuid = None
    node.protected = False
    node.protected_reason = None
    node.provision_state, node.target_provision_state = (
        states.MACHINE.process_event(node.provision_state, states.DONE,
                                     node.target_provision_state,
                                     node=node.uuid))
    node.save(task.context, delete_allocation=True)
    do_cleaning(conf, task)


def do_abort(task):
    """Abort a waiting flow: bookkeeping only, made in the RPC call."""
    node = task.node
    _move(task, states.ABORT)
    node.last_error = 'Aborted by request in state %s.' % (
        node.provision_state)
    node.clean_step = {}
    node.deploy_step = {}
    _set_progress(node)
    node.save(task.context)
    _record(task, node.last_error, event_type=node_history.PROVISIONING)


FLOWS = {
    states.MANAGE: do_verify,
    states.PROVIDE: do_cleaning,
    states.DEPLOY: do_deploy,
    states.REBUILD: do_deploy,
    states.DELETE: do_tear_down,
}
"""Machine event -> the work after its first move (``clean`` takes steps;
``resume`` goes on with what waited)."""

NO_FREE_WORKER = 'No free conductor workers available'
"""``last_error`` of a node whose request found the worker pool full."""


def begin(task, event):
    """Make the first move of ``event`` and save it (in the RPC call).

    The node shows its transient state and target (``deploying`` /
    ``active``) before the API answers 202.

    :returns: True when a worker has to go on with :func:`run`; False
        when this move ended the request (``manage`` of an available
        node, ``abort``): the caller releases the task.
    :raises: InvalidStateRequested when ``event`` is not allowed.
    """
    if event == states.ABORT:
        do_abort(task)
        return False
    _move(task, event)
    return task.node.provision_state in states.WORKING_STATES


def undo_begin(task, provision_state, target_provision_state):
    """Put the node back where :func:`begin` found it.

    For a request that no worker could take (``NoFreeConductorWorker``):
    nothing ran, so the node returns to its previous state rather than
    through the state machine, and ``last_error`` says why, as upstream
    does.
    """
    node = task.node
    node.provision_state = provision_state
    node.target_provision_state = target_provision_state
    node.last_error = NO_FREE_WORKER
    node.save(task.context)


def _fail_unexpected(task, event, exc):
    """A flow raised instead of recording its failure: a bug, but the node
    must not stay in a working state that nothing will ever end."""
    LOG.exception('Unexpected error in %(event)s of node %(node)s',
                  {'event': event, 'node': task.node.uuid})
    node = task.node
    try:
        node.refresh(task.context)
        if states.MACHINE.is_valid_event(node.provision_state, states.FAIL):
            _fail(task, 'Unexpected error during %s: %s' % (event, exc))
    except Exception:
        LOG.exception('Could not record the failure of node %s',
                      node.uuid)


def fail_wait_timeout(task, timeout):
    """Fail a node nothing resumed within ``timeout`` seconds of waiting."""
    node = task.node
    if node.provision_state == states.CLEANWAIT:
        step = (node.clean_step or {}).get('step')
        _set_progress(node)
        _fail(task, 'Timeout reached while cleaning the node: nothing '
                    'resumed it within %d seconds. Failed on step %s.'
              % (timeout, step), fault=CLEAN_FAILURE)
    else:
        _fail(task, 'Timeout reached while waiting for callback for node '
                    '%s: nothing resumed the deployment within %d seconds.'
              % (node.uuid, timeout))


def fail_interrupted(task):
    """Fail the work a dead worker left on a node (at conductor start)."""
    node = task.node
    message = ('The conductor %s stopped while the node was %s; the work '
               'was not finished.')
    if node.provision_state in states.WORKING_STATES:
        fault = CLEAN_FAILURE if node.provision_state == states.CLEANING \
            else None
        _set_progress(node)
        _fail(task, message % (task.host, node.provision_state),
              fault=fault)
    if node.target_power_state:
        node.last_error = message % (
            task.host, 'changing to %s' % node.target_power_state)
        node.target_power_state = None
        node.save(task.context)
        _record(task, node.last_error, event_type=node_history.POWER)


def run(conf, task, event, clean_steps=None):
    """Go on with the flow :func:`begin` started; release the task.

    The worker's entry point: the node lock is released when it returns,
    whatever happened.
    """
    with task:
        try:
            if event == states.RESUME:
                if task.node.provision_state == states.CLEANING:
                    continue_cleaning(conf, task)
                else:
                    continue_deploy(conf, task)
            elif event == states.CLEAN:
                do_cleaning(conf, task, manual_steps=clean_steps)
            else:
                FLOWS[event](conf, task)
        except Exception as exc:
            _fail_unexpected(task, event, exc)


# --- power -------------------------------------------------------------------

def begin_power(task, new_state):
    """Record the power change about to start (in the RPC call)."""
    node = task.node
    node.target_power_state = (states.POWER_ON if new_state == states.REBOOT
                               else new_state)
    node.last_error = None
    node.save(task.context)


def undo_begin_power(task):
    """Clear the target of a power change that no worker could take."""
    node = task.node
    node.target_power_state = None
    node.last_error = NO_FREE_WORKER
    node.save(task.context)


def change_power(task, new_state):
    """Set the power of a locked node; records failures on the node.

    The worker's entry point: the node lock is released when it returns.
    """
    with task:
        node = task.node
        power = task.driver.power
        try:
            if new_state == states.REBOOT:
                power.reboot(task)
            else:
                power.set_power_state(task, new_state)
            node.power_state = power.get_power_state(task)
            node.last_error = None
        except Exception as exc:
            message = ('Failed to change power state to "%s": %s'
                       % (new_state, exc))
            LOG.error('Node %(node)s: %(msg)s', {'node': node.uuid,
                                                 'msg': message})
            node.last_error = message
            _record(task, message, event_type=node_history.POWER)
        node.target_power_state = None
        node.save(task.context)
