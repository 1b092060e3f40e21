"""Step flows: the lists of interface steps that cleaning and servicing run.

Cleaning and servicing are the same machine with different names: a list
of ``{'interface', 'step', 'args'}`` steps, run in order on a locked node,
each a method of the node's interface marked with the flow's decorator
(``clean_step``, ``service_step``). :class:`StepFlow` holds what differs
(the node field showing the current step, the wait state, the fault of a
failure); :func:`run_steps` is the one runner. The steps and the index of
the current one are kept in ``driver_internal_info`` so a flow that waits
can go on with the step after it.

A step runs in one of three ways:

* synchronously: the runner calls it and goes on with the next one;
* it returns the flow's wait state: the node waits (lock released) until
  ``continue_node_clean`` resumes it, as before deferred actions;
* its method is :func:`~alloc_framework.drivers.deferred.deferrable`: the
  runner does not call it but creates a deferred action
  ``task.driver.<interface>.<step>`` with the step's args, in the same
  transaction as the node's move to the wait state (:func:`defer_step`).
  The action records the flow; when it ends, the launcher hands the node
  back to the flow (``provisioning.deferred_step_ended``), still under the
  lock it ran with: COMPLETED goes on with the next step, FAILED fails the
  flow naming the action.
"""

from oslo_log import log

from alloc_framework.common import exception
from alloc_framework.common import states
from alloc_framework.drivers import deferred
from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import deferred_action as da

LOG = log.getLogger(__name__)

WAITING_ACTION = 'waiting_on_action'
"""Key of ``driver_internal_info``: the UUID of the deferred action a
waiting node waits for."""


class StepFlow:
    """What a flow of steps is called and where it keeps its progress.

    :param name: the step type (``clean``, ``service``), also the
        ``flow`` of the deferred actions its steps become.
    :param label: the flow in messages (``Cleaning``).
    :param step_field: the node field showing the current step.
    :param wait_state: the provision state of a node waiting in the flow.
    :param fault: the ``fault`` (and maintenance) of a node whose flow
        failed, or None to leave maintenance alone.
    """

    def __init__(self, name, label, step_field, wait_state, fault=None):
        self.name = name
        self.label = label
        self.step_field = step_field
        self.wait_state = wait_state
        self.fault = fault
        self.steps_key = '%s_steps' % name
        self.index_key = '%s_step_index' % name

    def __repr__(self):
        return 'StepFlow(%s)' % self.name


CLEAN_FAILURE = 'clean failure'
"""The ``fault`` of a node put in maintenance by a cleaning failure."""

CLEAN = StepFlow('clean', 'Cleaning', 'clean_step', states.CLEANWAIT,
                 fault=CLEAN_FAILURE)
SERVICE = StepFlow('service', 'Servicing', 'service_step',
                   states.SERVICEWAIT)
DEPLOY = StepFlow('deploy', 'Deploy', 'deploy_step', states.DEPLOYWAIT)
FLOWS = {flow.name: flow for flow in (CLEAN, SERVICE, DEPLOY)}
"""The step flows by name (the ``flow`` of their deferred actions)."""


def flow_of(node):
    """The step flow a node is in (running or waiting), or None."""
    if node.provision_state in (states.CLEANING, states.CLEANWAIT):
        return CLEAN
    if node.provision_state in (states.SERVICING, states.SERVICEWAIT):
        return SERVICE
    if node.provision_state in (states.DEPLOYING, states.DEPLOYWAIT):
        return DEPLOY
    return None


# --- steps of the node's interfaces ------------------------------------------

def all_steps(task, flow):
    """Every step of ``flow`` the node's interfaces offer."""
    steps = []
    for iface in task.driver.all_interfaces().values():
        steps.extend(iface.get_steps(task, flow.name))
    return steps


def validate_steps(task, flow, requested):
    """Check requested steps against the node's interfaces.

    :param requested: the ``clean_steps`` or ``service_steps`` of the
        request.
    :returns: the steps with ``args`` filled in.
    :raises: InvalidParameterValue naming the field and the bad step.
    """
    field = flow.steps_key
    if not isinstance(requested, list) or not requested:
        raise exception.InvalidParameterValue(
            err='%s must be a non-empty list of steps.' % field)
    known = {(s['interface'], s['step']): s for s in all_steps(task, flow)}
    result = []
    for number, step in enumerate(requested):
        where = '%s[%d]' % (field, number)
        if not isinstance(step, dict):
            raise exception.InvalidParameterValue(
                err='%s must be an object, not %r.' % (where, step))
        unknown = set(step) - {'interface', 'step', 'args', 'priority'}
        if unknown:
            raise exception.InvalidParameterValue(
                err='%s has unknown key(s) %s.'
                    % (where, ', '.join(sorted(map(str, unknown)))))
        key = (step.get('interface'), step.get('step'))
        if key not in known:
            raise exception.InvalidParameterValue(
                err='%(where)s: %(label)s step %(step)s of interface '
                    '%(iface)s is not supported by node %(node)s. '
                    'Supported steps: %(ok)s'
                    % {'where': where, 'label': flow.name,
                       'step': key[1], 'iface': key[0],
                       'node': task.node.uuid,
                       'ok': ', '.join('%s.%s' % k for k in sorted(known))
                       or 'none'})
        args = step.get('args')
        if args is None:
            args = {}
        if not isinstance(args, dict):
            raise exception.InvalidParameterValue(
                err='%s.args must be an object.' % where)
        argsinfo = known[key]['argsinfo']
        unknown = set(args) - set(argsinfo)
        if unknown:
            raise exception.InvalidParameterValue(
                err='%s.args: step %s does not accept the argument(s) %s.'
                    % (where, key[1], ', '.join(sorted(unknown))))
        missing = [a for a, info in sorted(argsinfo.items())
                   if info.get('required') and a not in args]
        if missing:
            raise exception.InvalidParameterValue(
                err='%s.args: step %s requires the argument(s) %s.'
                    % (where, key[1], ', '.join(missing)))
        try:
            getattr(task.driver, key[0]).validate_step_args(task, key[1],
                                                            args)
        except exception.InvalidParameterValue as exc:
            raise exception.InvalidParameterValue(
                err='%s: %s' % (where, exc))
        result.append({'interface': key[0], 'step': key[1], 'args': args})
    return result


# --- progress ----------------------------------------------------------------

def set_progress(node, flow, steps=None, index=None):
    """Remember the flow's steps and current index (None: forget them)."""
    info = dict(node.driver_internal_info or {})
    info.pop(WAITING_ACTION, None)
    if steps is None:
        info.pop(flow.steps_key, None)
        info.pop(flow.index_key, None)
    else:
        info[flow.steps_key] = steps
        info[flow.index_key] = index
    node.driver_internal_info = info


def clear_progress(node):
    """Forget the progress of every flow (the flow ended or failed)."""
    for flow in FLOWS.values():
        set_progress(node, flow)
        setattr(node, flow.step_field, {})


def progress(node, flow):
    """``(steps, index of the current step)`` of the flow."""
    info = node.driver_internal_info or {}
    return info.get(flow.steps_key) or [], info.get(flow.index_key, -1)


def waiting_on(node):
    """UUID of the deferred action the node waits for, or None."""
    return (node.driver_internal_info or {}).get(WAITING_ACTION)


def waits_on_live_action(context, node):
    """Whether the node waits for a deferred action that can still run.

    Such a node is not timed out: the action's retries and deadline
    govern it. An action that ended, or is gone, no longer holds it.
    """
    uuid = waiting_on(node)
    if uuid is None:
        return False
    try:
        action = objects.DeferredAction.get_by_uuid(context, uuid)
    except exception.DeferredActionNotFound:
        return False
    return action.state not in da.TERMINAL


# --- running -----------------------------------------------------------------

def defer_step(conf, task, flow, step, origin=None):
    """Make ``step`` a deferred action and move the node to wait for it.

    The action and the node's move to the flow's wait state are saved in
    one transaction: a node never waits for an action that does not
    exist, and no action runs for a node that does not wait for it.

    :param origin: the action of an earlier step of the same request,
        when the flow goes on from the launcher: the new action keeps its
        request id, user and project, so a failure still names the
        request that started the flow.
    :returns: the new DeferredAction.
    """
    node = task.node
    context = task.context
    action = objects.DeferredAction.new(
        context, node.id, deferred.call_name(step['interface'], step['step']),
        arguments=step.get('args') or {},
        retries=conf.deferred_actions.step_retries,
        created_by=getattr(context, 'project_id', None), flow=flow.name)
    if origin is not None:
        action.request_id = origin.request_id
        action.user_id = origin.user_id
        action.created_by = origin.created_by
    node.move_provision_state(states.WAIT)
    info = dict(node.driver_internal_info or {})
    info[WAITING_ACTION] = action.uuid
    node.driver_internal_info = info
    da.create_actions(context, [action], node=node)
    LOG.info('Node %(node)s: %(label)s step %(iface)s.%(step)s runs as '
             'deferred action %(action)s',
             {'node': node.uuid, 'label': flow.name,
              'iface': step['interface'], 'step': step['step'],
              'action': action.uuid})
    return action


def step_done(task, step, result=None):
    """What follows a step that ended, however it ran: its interface's
    ``step_ended`` hook, with what the step returned.

    The interface decides what its steps leave behind (the firmware
    interface stores the versions its ``update`` returned, so that
    ``GET /v1/nodes/{node}/firmware`` shows what was flashed). A failure
    of the hook is logged, not raised: the step itself succeeded.
    """
    iface = getattr(task.driver, step.get('interface') or '', None)
    if iface is None or not step.get('step'):
        return
    try:
        iface.step_ended(task, step['step'], step.get('args') or {}, result)
    except Exception:
        LOG.exception('Node %(node)s: could not record the end of step '
                      '%(iface)s.%(step)s', {'node': task.node.uuid,
                                             'iface': step['interface'],
                                             'step': step['step']})


def step_failed(task, step, error):
    """What precedes failing the flow of a step that failed: its
    interface's ``step_failed`` hook (see ``BaseInterface.step_failed``).

    A failure of the hook is logged, not raised: the flow fails with the
    step's own error either way.
    """
    iface = getattr(task.driver, step.get('interface') or '', None)
    hook = getattr(iface, 'step_failed', None)
    if hook is None or not step.get('step'):
        return
    try:
        hook(task, step['step'], step.get('args') or {}, error)
    except Exception:
        LOG.exception('Node %(node)s: could not record what the failed step '
                      '%(iface)s.%(step)s left behind',
                      {'node': task.node.uuid, 'iface': step['interface'],
                       'step': step['step']})


def cache_firmware(task, flashed=()):
    """Store the node's firmware components as its interface reads them.

    A failure is logged, not raised: the versions are for operators and
    must not fail the flow that asked for them.
    """
    try:
        task.driver.firmware.cache_firmware_components(task,
                                                       flashed=flashed)
    except exception.UnsupportedDriverExtension:
        pass
    except Exception:
        LOG.exception('Could not read the firmware components of node %s',
                      task.node.uuid)


def run_steps(conf, task, flow, steps, start=0, origin=None):
    """Run ``steps[start:]`` in order.

    :param origin: the deferred action whose end resumed the flow; the
        next step that becomes an action inherits its request (see
        :func:`defer_step`).
    :returns: True when every step ran, False when the node now waits
        (a step returned the wait state, or became a deferred action).
    :raises: whatever a step raises; the caller fails the flow.
    """
    node = task.node
    for index in range(start, len(steps)):
        step = steps[index]
        setattr(node, flow.step_field, step)
        set_progress(node, flow, steps, index)
        iface = getattr(task.driver, step['interface'])
        method = getattr(iface, step['step'])
        if deferred.is_deferrable(method):
            defer_step(conf, task, flow, step, origin=origin)
            return False
        node.save(task.context)
        # execute_clean_step of interfaces that override it still runs.
        execute = getattr(iface, 'execute_%s_step' % flow.name,
                          iface.execute_step)
        result = execute(task, step)
        if result == flow.wait_state:
            node.move_provision_state(states.WAIT)
            node.save(task.context)
            return False
        step_done(task, step, result)
    setattr(node, flow.step_field, {})
    set_progress(node, flow)
    return True
