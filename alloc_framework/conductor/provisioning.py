"""Provisioning and power work on a locked node.

A request is in two parts. :func:`begin` runs in the RPC call: it makes
the request's first move (``available`` -> ``deploying``, target
``active``) and saves it, so that a client polling the node after the
202 sees where the node is heading. The rest (:func:`run`,
:func:`change_power`) runs in a conductor worker that owns the task and
releases the node lock when it ends, whatever happens.

Every move of ``provision_state`` goes through
``Node.move_provision_state``, which follows the state machine of
:mod:`alloc_framework.common.states`. A failure moves the node
to the failure state of its flow, sets ``last_error`` and records a node
history entry; it is never raised to the API, which already answered 202. An
interface that returns a wait state leaves the node waiting (lock
released) until the matching ``continue_*`` call. Cleaning and servicing
run interface steps through :mod:`steps`; a deferrable step becomes a
deferred action, whose end goes on with the flow
(:func:`deferred_step_ended`).
"""

from oslo_log import log

from alloc_framework.common import exception
from alloc_framework.common import states
from alloc_framework.conductor import steps
from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import node_history

LOG = log.getLogger(__name__)

CLEAN_FAILURE = steps.CLEAN_FAILURE
"""The ``fault`` of a node put in maintenance by a cleaning failure."""


def _move(task, event):
    task.node.move_provision_state(event)
    task.node.save(task.context)


def _record(task, message, event_type=node_history.PROVISIONING,
            severity=node_history.ERROR, state_entered_at=None):
    try:
        objects.NodeHistory.record(task.context, task.node, message,
                                   event_type=event_type, severity=severity,
                                   conductor=task.host,
                                   state_entered_at=state_entered_at)
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
    node.service_step = {}
    entered_at = node.provision_updated_at
    _move(task, states.FAIL)
    _record(task, message, state_entered_at=entered_at)


# --- cleaning and servicing --------------------------------------------------
#
# Both run a list of interface steps with the one runner of
# :mod:`steps`; they differ in their names and in where they end.

def automated_clean_enabled(conf, node):
    if node.automated_clean is not None:
        return node.automated_clean
    return conf.conductor.automated_clean


def validate_manual_clean_steps(task, clean_steps):
    """Check manual clean steps against the node's interfaces.

    :returns: the steps with ``args`` filled in.
    :raises: InvalidParameterValue naming the bad step.
    """
    return steps.validate_steps(task, steps.CLEAN, clean_steps)


def validate_service_steps(task, service_steps):
    """Check service steps against the node's interfaces.

    :returns: the steps with ``args`` filled in.
    :raises: InvalidParameterValue naming the bad step.
    """
    return steps.validate_steps(task, steps.SERVICE, service_steps)


def _finish_steps(conf, task, flow, step_list, start=0, origin=None):
    """Run the flow's steps from ``start``; end, fail or leave it waiting.

    :param origin: the deferred action whose end resumed the flow (see
        :func:`steps.run_steps`).
    """
    node = task.node
    try:
        if not steps.run_steps(conf, task, flow, step_list, start,
                               origin=origin):
            return
    except Exception as exc:
        steps.step_failed(task, getattr(node, flow.step_field) or {},
                          str(exc))
        steps.clear_progress(node)
        _fail(task, '%s failed: %s' % (flow.label, exc), fault=flow.fault)
        return
    if flow is not steps.CLEAN:
        done = states.DONE
    else:
        # Manual cleaning returns to manageable, automated goes on to
        # available: the target set when cleaning started tells which.
        done = (states.MANAGE if node.target_provision_state
                == states.MANAGEABLE else states.DONE)
    _move(task, done)
    LOG.info('Node %(node)s: %(label)s done, now %(state)s',
             {'node': node.uuid, 'label': flow.label.lower(),
              'state': node.provision_state})


def _continue_steps(conf, task, flow, origin=None):
    """Go on with the step after the one the node waited for."""
    step_list, index = steps.progress(task.node, flow)
    _finish_steps(conf, task, flow, step_list, index + 1, origin=origin)


def do_cleaning(conf, task, manual_steps=None):
    """Clean a node that is in ``cleaning`` and finish the flow.

    Automated cleaning runs the interfaces' steps with a priority above 0
    (highest first) unless disabled; manual cleaning runs
    ``manual_steps``.
    """
    node = task.node
    if manual_steps is not None:
        step_list = manual_steps
    elif automated_clean_enabled(conf, node):
        try:
            step_list = [s for s in steps.all_steps(task, steps.CLEAN)
                         if s['priority'] > 0]
        except Exception as exc:
            _fail(task, 'Cleaning failed: %s' % exc, fault=CLEAN_FAILURE)
            return
        step_list.sort(key=lambda s: -s['priority'])
        step_list = [{'interface': s['interface'], 'step': s['step'],
                      'args': {}} for s in step_list]
    else:
        step_list = []
    _finish_steps(conf, task, steps.CLEAN, step_list)


def continue_cleaning(conf, task):
    """Resume cleaning after the step that returned ``clean wait``."""
    _continue_steps(conf, task, steps.CLEAN)


def do_servicing(conf, task, service_steps):
    """Service an active node that is in ``servicing``; back to active."""
    _finish_steps(conf, task, steps.SERVICE, service_steps)


def continue_servicing(conf, task):
    """Resume servicing after the step that returned ``service wait``."""
    _continue_steps(conf, task, steps.SERVICE)


def deferred_step_ended(conf, task, action, error=None, result=None):
    """A deferred action of a clean, service or deploy step ended (under
    its lock).

    Called by the launcher with the node's task, once the action is
    COMPLETED (``error`` None, ``result`` what the step returned) or
    FAILED (``error`` is the failure message naming it). A node that no
    longer waits for this action (aborted, timed out, resumed by hand) is
    left alone.
    """
    flow = steps.FLOWS[action.flow]
    node = task.node
    if (node.provision_state != flow.wait_state
            or steps.waiting_on(node) != action.uuid):
        LOG.info('Node %(node)s no longer waits for deferred action '
                 '%(action)s (it is %(state)s): nothing to go on with',
                 {'node': node.uuid, 'action': action.uuid,
                  'state': node.provision_state})
        return
    if error is not None:
        steps.step_failed(task, getattr(node, flow.step_field) or {}, error)
        steps.clear_progress(node)
        _fail(task, '%s failed: %s' % (flow.label, error), fault=flow.fault)
        return
    # The action is purged after its retention; the history keeps what
    # it did, as the specification asks of results.
    _record(task, '%s step %s completed as deferred action %s: %s'
            % (flow.label, action.call, action.uuid, action.result),
            event_type=node_history.DEFERRED_ACTION,
            severity=node_history.INFO)
    try:
        steps.step_done(task, getattr(node, flow.step_field) or {}, result)
        _move(task, states.RESUME)
        _continue_steps(conf, task, flow, origin=action)
    except Exception as exc:
        # Steps' own failures are handled in the flow: this is a bug or
        # the database, and the node must not stay in a working state
        # that nothing will end.
        _fail_unexpected(task, 'the %s flow' % flow.name, exc)


# The deploy interface's ``deploy`` is the core deploy step, with this
# priority, whether or not its implementation marks it ``deploy_step``.
CORE_DEPLOY_PRIORITY = 100


def deploy_steps(task):
    """The steps of a deployment, highest priority first.

    Every ``deploy_step`` with a priority above 0 of the node's
    interfaces, and ``deploy.deploy`` (priority 100 unless its
    implementation says otherwise).
    """
    found = [s for s in steps.all_steps(task, steps.DEPLOY)
             if s['priority'] > 0]
    if not any(s['interface'] == 'deploy' and s['step'] == 'deploy'
               for s in found):
        found.append({'interface': 'deploy', 'step': 'deploy',
                      'priority': CORE_DEPLOY_PRIORITY})
    found.sort(key=lambda s: -s['priority'])
    return [{'interface': s['interface'], 'step': s['step'], 'args': {}}
            for s in found]


def continue_deploy(conf, task):
    """Resume a deployment whose step returned ``wait call-back``.

    The deploy interface's ``continue_deploy`` finishes the waiting step
    (it may wait again); the steps after it follow.
    """
    node = task.node
    try:
        result = task.driver.deploy.continue_deploy(task)
    except Exception as exc:
        steps.clear_progress(node)
        _fail(task, 'Deploy failed: %s' % exc)
        return
    if result == states.DEPLOYWAIT:
        _move(task, states.WAIT)
        return
    steps.step_done(task, node.deploy_step or {}, result)
    _continue_steps(conf, task, steps.DEPLOY)


# --- the flows ---------------------------------------------------------------
#
# Each flow is the work that follows the first move of its event, which
# begin() has already made and saved.

def do_verify(conf, task):
    """Verifying: the node's credentials work, its power state is readable.

    The node's firmware components are read then, so that a managed node
    shows them (``GET /v1/nodes/{node}/firmware``), and what the hardware
    reports about itself is recorded in its ``properties``
    (:func:`record_hardware_properties`).
    """
    node = task.node
    try:
        task.driver.power.validate(task)
        task.driver.management.validate(task)
        node.power_state = task.driver.power.get_power_state(task)
    except Exception as exc:
        _fail(task, 'Failed to verify node %s: %s' % (node.uuid, exc))
        return
    steps.cache_firmware(task)
    record_hardware_properties(task)
    _move(task, states.DONE)


def record_hardware_properties(task):
    """Merge ``ManagementInterface.get_hardware_properties`` into the node.

    Only the keys the interface returns change (not saved here: the
    caller saves the node). A failure, or an answer that is not a dict
    keyed by strings, is logged as a warning and changes nothing: these
    facts are for scheduling and must not fail the flow that reads them.
    """
    node = task.node
    try:
        found = task.driver.management.get_hardware_properties(task)
    except exception.UnsupportedDriverExtension:
        return
    except exception.AllocFrameworkException as exc:
        LOG.warning('Node %(node)s: could not read its hardware properties, '
                    'they stay as they were: %(exc)s',
                    {'node': node.uuid, 'exc': exc})
        return
    except Exception:
        LOG.warning('Node %s: could not read its hardware properties, they '
                    'stay as they were', node.uuid, exc_info=True)
        return
    if not isinstance(found, dict) or not all(isinstance(key, str)
                                              for key in found):
        LOG.warning('Node %(node)s: its management interface returned '
                    '%(found)r as hardware properties, not a dict keyed by '
                    'names; ignored.', {'node': node.uuid, 'found': found})
        return
    properties = dict(node.properties or {})
    changed = {key: value for key, value in found.items()
               if key not in properties or properties[key] != value}
    if not changed:
        return
    properties.update(changed)
    node.properties = properties
    LOG.info('Node %(node)s: recorded the hardware properties its '
             'management interface reports: %(changed)s',
             {'node': node.uuid,
              'changed': ', '.join('%s=%s' % item
                                   for item in sorted(changed.items()))})


def do_deploy(conf, task):
    """Deploy: validate, prepare, then run the deploy steps in order.

    A step may return ``wait call-back`` (resumed by
    ``continue_node_deploy``) or be deferrable (it runs as a deferred
    action and the deployment goes on when the action ends).
    """
    try:
        task.driver.power.validate(task)
        task.driver.boot.validate(task)
        task.driver.deploy.validate(task)
        task.driver.deploy.prepare(task)
        step_list = deploy_steps(task)
    except Exception as exc:
        _fail(task, 'Deploy failed: %s' % exc)
        return
    _finish_steps(conf, task, steps.DEPLOY, step_list)


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
    # instance_name mirrors instance_info's display_name.
    node.instance_name = None
    node.instance_uuid = None
    node.protected = False
    node.protected_reason = None
    node.move_provision_state(states.DONE)
    node.save(task.context, delete_allocation=True)
    do_cleaning(conf, task)


def do_abort(task):
    """Abort a waiting flow: bookkeeping only, made in the RPC call.

    A deferred action the node waited for is not stopped (a firmware
    update cannot be interrupted half way); when it ends, the node no
    longer waits for it and its end changes nothing.
    """
    node = task.node
    before = node.provision_state
    entered_at = node.provision_updated_at
    _move(task, states.ABORT)
    node.last_error = 'Aborted by request in state %s.' % before
    node.deploy_step = {}
    steps.clear_progress(node)
    node.save(task.context)
    _record(task, node.last_error, event_type=node_history.PROVISIONING,
            state_entered_at=entered_at)


FLOWS = {
    states.MANAGE: do_verify,
    states.PROVIDE: do_cleaning,
    states.DEPLOY: do_deploy,
    states.REBUILD: do_deploy,
    states.DELETE: do_tear_down,
}
"""Machine event -> the work after its first move (``clean`` and
``service`` take steps; ``resume`` goes on with what waited)."""

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


def undo_begin(task, event, provision_state, target_provision_state):
    """Put the node back where :func:`begin` found it.

    For a request that no worker could take (``NoFreeConductorWorker``):
    nothing ran, so the first move of ``event`` is reverted rather than
    followed by a failure, and ``last_error`` says why, as upstream does.
    """
    node = task.node
    node.move_provision_state(
        event, revert_to=(provision_state, target_provision_state))
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
    flow = steps.flow_of(node)
    if flow is steps.DEPLOY:
        # Upstream's words, which clients and operators know.
        steps.clear_progress(node)
        _fail(task, 'Timeout reached while waiting for callback for node '
                    '%s: nothing resumed the deployment within %d seconds.'
              % (node.uuid, timeout))
    elif flow is not None:
        step = (getattr(node, flow.step_field) or {}).get('step')
        steps.clear_progress(node)
        _fail(task, 'Timeout reached while %(doing)s the node: nothing '
                    'resumed it within %(timeout)d seconds. Failed on step '
                    '%(step)s.' % {'doing': flow.label.lower(),
                                   'timeout': timeout, 'step': step},
              fault=flow.fault)


def fail_interrupted(task):
    """Fail the work a dead worker left on a node (at conductor start)."""
    node = task.node
    message = ('The conductor %s stopped while the node was %s; the work '
               'was not finished.')
    if node.provision_state in states.WORKING_STATES:
        flow = steps.flow_of(node)
        steps.clear_progress(node)
        _fail(task, message % (task.host, node.provision_state),
              fault=flow.fault if flow is not None else None)
    if node.target_power_state:
        node.last_error = message % (
            task.host, 'changing to %s' % node.target_power_state)
        node.target_power_state = None
        node.save(task.context)
        _record(task, node.last_error, event_type=node_history.POWER)


def run(conf, task, event, clean_steps=None, service_steps=None):
    """Go on with the flow :func:`begin` started; release the task.

    The worker's entry point: the node lock is released when it returns,
    whatever happened.
    """
    with task:
        try:
            if event == states.RESUME:
                if task.node.provision_state == states.CLEANING:
                    continue_cleaning(conf, task)
                elif task.node.provision_state == states.SERVICING:
                    continue_servicing(conf, task)
                else:
                    continue_deploy(conf, task)
            elif event == states.CLEAN:
                do_cleaning(conf, task, manual_steps=clean_steps)
            elif event == states.SERVICE:
                do_servicing(conf, task, service_steps)
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
