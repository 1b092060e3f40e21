"""Node sub-resources: traits, states, validation, boot device,
maintenance, history, firmware."""

import json

from oslo_utils import uuidutils

from alloc_framework.api.baremetal import errors
from alloc_framework.api.baremetal import microversion as mv
from alloc_framework.api.baremetal import policy
from alloc_framework.api.baremetal import util
from alloc_framework.api import limits
from alloc_framework.common import exception
from alloc_framework.common import states
from alloc_framework.common import utils
from alloc_framework.objects.baremetal import firmware as firmware_obj
from alloc_framework.objects.baremetal import node_history as history_obj
from alloc_framework.objects.baremetal import trait as trait_obj

# Provision actions -> first minor version that accepts them.
PROVISION_VERBS = {
    'active': 1, 'deleted': 1, 'rebuild': 1, 'manage': 4, 'provide': 4,
    'abort': mv.ABORT, 'clean': mv.MANUAL_CLEAN,
    'deploy': mv.DEPLOY_VERBS, 'undeploy': mv.DEPLOY_VERBS,
    'unhold': mv.UNHOLD,
    'service': mv.SERVICE,
}
# Step lists of the provision body -> the verb that takes them.
STEP_LISTS = {'clean_steps': 'clean', 'service_steps': 'service'}
POWER_TARGETS = (states.POWER_ON, states.POWER_OFF, states.REBOOT)


def _node(req, node_ident, rule, minor=1):
    if not req.version.check(minor):
        raise util.resource_not_found()
    return util.get_node(req, node_ident, rule=rule)


# --- traits ------------------------------------------------------------------

def list_traits(req, node_ident):
    node = _node(req, node_ident, 'baremetal:node:traits:list', mv.TRAITS)
    return util.json_response({'traits': sorted(node.traits or [])})


def set_traits(req, node_ident):
    node = _node(req, node_ident, 'baremetal:node:traits:set', mv.TRAITS)
    body = util.json_object(req)
    if set(body) != {'traits'} or not isinstance(body['traits'], list):
        raise errors.HTTPError(400, 'The body must be {"traits": [...]}',
                               errors.INVALID_BODY)
    traits = trait_obj.validate_traits(body['traits'])
    req.rpcapi.add_node_traits(req.context, node.id, traits, replace=True)
    return util.no_content()


def add_trait(req, node_ident, trait):
    node = _node(req, node_ident, 'baremetal:node:traits:set', mv.TRAITS)
    if req.body:
        raise errors.HTTPError(400, 'Adding one trait takes no body.',
                               errors.INVALID_BODY)
    trait_obj.validate_trait(trait)
    req.rpcapi.add_node_traits(req.context, node.id, [trait])
    return util.no_content()


def delete_traits(req, node_ident):
    node = _node(req, node_ident, 'baremetal:node:traits:delete', mv.TRAITS)
    req.rpcapi.remove_node_traits(req.context, node.id, None)
    return util.no_content()


def delete_trait(req, node_ident, trait):
    node = _node(req, node_ident, 'baremetal:node:traits:delete', mv.TRAITS)
    if trait not in (node.traits or []):
        raise exception.NodeTraitNotFound(node_id=node.uuid, trait=trait)
    req.rpcapi.remove_node_traits(req.context, node.id, [trait])
    return util.no_content()


# --- states ------------------------------------------------------------------

def get_states(req, node_ident):
    node = _node(req, node_ident, 'baremetal:node:get_states')
    last_error = node.last_error
    if not req.policy.check(req.context, 'baremetal:node:get:last_error',
                            policy.node_target(node)):
        last_error = None
    return util.json_response({
        'console_enabled': False,
        'last_error': last_error,
        'power_state': node.power_state,
        'provision_state': node.provision_state,
        'provision_updated_at': node.provision_updated_at,
        'target_power_state': node.target_power_state,
        'target_provision_state': node.target_provision_state,
    })


def _accepted(req, node):
    resp = util.no_content(202)
    resp.headers['Location'] = '%s/v1/nodes/%s/states' % (
        util.base_url(req), node.uuid)
    return resp


def set_provision_state(req, node_ident):
    node = _node(req, node_ident, 'baremetal:node:set_provision_state')
    body = util.json_object(req)
    unknown = set(body) - {'target', 'clean_steps', 'service_steps',
                           'configdrive', 'runbook', 'disable_ramdisk'}
    if unknown:
        raise errors.HTTPError(400, 'Unknown attribute(s): %s'
                               % ', '.join(sorted(unknown)),
                               errors.INVALID_BODY)
    target = body.get('target')
    if not isinstance(target, str) or target not in PROVISION_VERBS:
        raise errors.HTTPError(
            400, 'Invalid provision state target %r; valid targets are %s.'
            % (target, ', '.join(sorted(PROVISION_VERBS))),
            errors.INVALID_FIELD)
    if not req.version.check(PROVISION_VERBS[target]):
        raise util.not_acceptable(req, 'The "%s" provision action' % target)
    if 'service_steps' in body and not req.version.check(mv.SERVICE):
        raise util.not_acceptable(req, 'The "service_steps" attribute')
    if 'runbook' in body and not req.version.check(mv.RUNBOOK):
        raise util.not_acceptable(req, 'The "runbook" attribute')
    if 'disable_ramdisk' in body:
        _check_disable_ramdisk(req, body['disable_ramdisk'], target)
    for field, verb in STEP_LISTS.items():
        _check_steps(body, field, verb, target)
    if 'runbook' in body:
        _check_runbook(body['runbook'], target)
    if target in ('active', 'deploy', 'rebuild') and node.maintenance:
        raise exception.NodeInMaintenance(op='provisioning', node=node.uuid)
    event = states.event_for_verb(target)
    if (not states.MACHINE.is_valid_event(node.provision_state, event)
            or (event == states.ABORT
                and node.provision_state == states.DEPLOYWAIT
                and not req.version.check(mv.ABORT_DEPLOY_WAIT))):
        # Before 1.110 upstream cannot abort a deployment waiting for
        # its call-back.
        raise exception.InvalidStateRequested(
            action=target, node=node.uuid, state=node.provision_state)
    req.rpcapi.do_provisioning_action(
        req.context, node.id, target, clean_steps=body.get('clean_steps'),
        service_steps=body.get('service_steps'))
    return _accepted(req, node)


def _check_steps(body, field, verb, target):
    """The shape of ``clean_steps`` or ``service_steps`` (400 naming it).

    Whether the steps exist and take their args is the conductor's check,
    against the node's interfaces.
    """
    steps = body.get(field)
    if target == verb and 'runbook' in body:
        if steps is not None:
            raise errors.HTTPError(
                400, '"runbook" and "%s" can not be given together.'
                % field, errors.INVALID_FIELD)
        return
    if target == verb:
        if not isinstance(steps, list) or not steps or not all(
                isinstance(s, dict) and isinstance(s.get('interface'), str)
                and isinstance(s.get('step'), str)
                and isinstance(s.get('args', {}), dict) for s in steps):
            raise errors.HTTPError(
                400, '"%s" is required for the %s action and must be a '
                     'non-empty list of {"interface": ..., "step": ..., '
                     '"args": {...}}.' % (field, verb),
                errors.INVALID_FIELD)
    elif steps is not None:
        raise errors.HTTPError(400, '"%s" is only valid with the %s '
                               'action.' % (field, verb),
                               errors.INVALID_FIELD)


def _check_disable_ramdisk(req, value, target):
    """``disable_ramdisk`` of the service action (1.108).

    Upstream does not boot its ramdisk for service steps given it. The
    conductor here never boots a ramdisk (steps run through the BMC), so
    the flag asks for what always happens and is only checked.

    :raises: HTTPError 406 before 1.108, 400 naming it when it is not a
        boolean or comes with another action.
    """
    if not req.version.check(mv.SERVICE_DISABLE_RAMDISK):
        raise util.not_acceptable(req, 'The "disable_ramdisk" attribute')
    if target != 'service':
        raise errors.HTTPError(400, '"disable_ramdisk" is only valid with '
                               'the service action here.',
                               errors.INVALID_FIELD)
    if not isinstance(value, bool):
        raise errors.HTTPError(400, '"disable_ramdisk" must be a boolean.',
                               errors.INVALID_FIELD)


def _check_runbook(runbook, target):
    """A runbook (1.92) in place of the steps of ``clean`` or ``service``.

    This service keeps no runbooks (``/v1/runbooks`` is not served), so
    any runbook named is not found, as upstream answers for an unknown
    one.

    :raises: HTTPError 400 naming ``runbook`` when it is not a name or
        UUID or comes with another action, RunbookNotFound (404).
    """
    if target not in STEP_LISTS.values():
        raise errors.HTTPError(400, '"runbook" is only valid with the '
                               'clean and service actions.',
                               errors.INVALID_FIELD)
    if not isinstance(runbook, str) or not runbook:
        raise errors.HTTPError(400, '"runbook" must be the name or UUID '
                               'of a runbook.', errors.INVALID_FIELD)
    raise exception.RunbookNotFound(runbook=runbook)


def _check_power_timeout(req, timeout):
    """As upstream: a positive integer (or a string of one) of seconds.

    :raises: HTTPError 406 before microversion 1.27, which introduced it.
    """
    if timeout is None:
        return
    if not req.version.check(mv.POWER_TIMEOUT):
        raise util.not_acceptable(req, 'The power state change timeout')
    if (not utils.is_int_like(timeout)
            or not 1 <= int(timeout) <= limits.MAX_INT):
        raise errors.HTTPError(
            400, 'Invalid timeout %s: it must be a positive integer (at '
                 'most %d seconds).' % (json.dumps(timeout)[:40],
                                        limits.MAX_INT),
            errors.INVALID_FIELD)


def set_power_state(req, node_ident):
    node = _node(req, node_ident, 'baremetal:node:set_power_state')
    body = util.json_object(req)
    unknown = set(body) - {'target', 'timeout'}
    if unknown:
        raise errors.HTTPError(400, 'Unknown attribute(s): %s'
                               % ', '.join(sorted(unknown)),
                               errors.INVALID_BODY)
    target = body.get('target')
    if target not in POWER_TARGETS:
        raise errors.HTTPError(
            400, 'Invalid power state target %r; valid targets are %s.'
            % (target, ', '.join(POWER_TARGETS)), errors.INVALID_FIELD)
    _check_power_timeout(req, body.get('timeout'))
    req.rpcapi.change_node_power_state(req.context, node.id, target)
    return _accepted(req, node)


# --- validation --------------------------------------------------------------

def validate(req, node_ident):
    """Each interface's ``{"result", "reason"}``, from its own
    ``validate`` run by the node's conductor (no hardware access)."""
    node = _node(req, node_ident, 'baremetal:node:validate')
    return util.json_response(
        req.rpcapi.validate_driver_interfaces(req.context, node.id))


# --- boot device -------------------------------------------------------------

def set_boot_device(req, node_ident):
    node = _node(req, node_ident, 'baremetal:node:set_boot_device')
    body = util.json_object(req)
    unknown = set(body) - {'boot_device', 'persistent'}
    if unknown:
        raise errors.HTTPError(400, 'Unknown attribute(s): %s'
                               % ', '.join(sorted(unknown)),
                               errors.INVALID_BODY)
    device = body.get('boot_device')
    if not isinstance(device, str) or not device:
        raise errors.HTTPError(400, 'boot_device is required: a string.',
                               errors.INVALID_FIELD)
    persistent = body.get('persistent', False)
    if not isinstance(persistent, bool):
        raise errors.HTTPError(400, 'persistent must be a boolean.',
                               errors.INVALID_FIELD)
    req.rpcapi.set_boot_device(req.context, node.id, device,
                               persistent=persistent)
    return util.no_content()


def get_boot_device(req, node_ident):
    node = _node(req, node_ident, 'baremetal:node:get_boot_device')
    found = req.rpcapi.get_boot_device(req.context, node.id)
    return util.json_response({'boot_device': found.get('boot_device'),
                               'persistent': found.get('persistent')})


def get_supported_boot_devices(req, node_ident):
    node = _node(req, node_ident, 'baremetal:node:get_boot_device')
    devices = req.rpcapi.get_supported_boot_devices(req.context, node.id)
    return util.json_response({'supported_boot_devices': list(devices)})


# --- maintenance -------------------------------------------------------------

def _set_maintenance(req, node, flag, reason):
    node.maintenance = flag
    node.maintenance_reason = reason
    if not flag:
        node.fault = None
    req.rpcapi.update_node(req.context, node)
    return util.no_content(202)


def set_maintenance(req, node_ident):
    node = _node(req, node_ident, 'baremetal:node:set_maintenance')
    reason = req.GET.get('reason')
    if req.body:
        body = util.json_object(req)
        unknown = set(body) - {'reason'}
        if unknown:
            raise errors.HTTPError(400, 'Unknown attribute(s): %s'
                                   % ', '.join(sorted(unknown)),
                                   errors.INVALID_BODY)
        reason = body.get('reason', reason)
    if reason is not None and (not isinstance(reason, str)
                               or '\x00' in reason):
        raise errors.HTTPError(400, 'The maintenance reason must be a '
                               'string without NUL characters.',
                               errors.INVALID_FIELD)
    return _set_maintenance(req, node, True, reason)


def clear_maintenance(req, node_ident):
    node = _node(req, node_ident, 'baremetal:node:clear_maintenance')
    return _set_maintenance(req, node, False, None)


# --- history -----------------------------------------------------------------

HISTORY_FIELDS = ('uuid', 'created_at', 'severity', 'event')
HISTORY_DETAIL_FIELDS = HISTORY_FIELDS + (
    'event_type', 'conductor', 'user', 'project', 'state',
    'target_provision_state', 'duration_seconds')
# Fields of a history event -> first minor version (when after 1.78).
HISTORY_FIELD_VERSIONS = {'project': mv.HISTORY_PROJECT,
                          'state': mv.HISTORY_STATE,
                          'target_provision_state': mv.HISTORY_STATE,
                          'duration_seconds': mv.HISTORY_STATE}


def _history(req, node, event, fields):
    data = {name: getattr(event, name) for name in fields
            if req.version.check(HISTORY_FIELD_VERSIONS.get(name, 1))}
    data['links'] = [{'href': '%s/v1/nodes/%s/history/%s' % (
        util.base_url(req), node.uuid, event.uuid), 'rel': 'self'}]
    return data


def list_history(req, node_ident):
    node = _node(req, node_ident, 'baremetal:node:history:get',
                 mv.NODE_HISTORY)
    detail = util.query_bool(req, 'detail')
    limit, marker, _key, _dir = util.pagination(req, ('created_at',),
                                                default_sort='created_at')
    events = history_obj.NodeHistory.list_by_node_id(
        req.context, node.id, limit=limit, marker=marker)
    fields = HISTORY_DETAIL_FIELDS if detail else HISTORY_FIELDS
    items = [_history(req, node, e, fields) for e in events]
    return util.json_response(util.collection(
        req, 'history', items, limit, path='nodes/%s/history' % node.uuid))


def get_history(req, node_ident, event_ident):
    node = _node(req, node_ident, 'baremetal:node:history:get',
                 mv.NODE_HISTORY)
    if not uuidutils.is_uuid_like(event_ident):
        raise exception.InvalidUUID(uuid=event_ident)
    event = history_obj.NodeHistory.get_by_uuid(
        req.context, utils.canonical_uuid(event_ident))
    if event.node_id != node.id:
        raise exception.NodeHistoryNotFound(history=event_ident)
    return util.json_response(_history(req, node, event,
                                       HISTORY_DETAIL_FIELDS))


# --- firmware ----------------------------------------------------------------

FIRMWARE_FIELDS = ('component', 'initial_version', 'current_version',
                   'last_version_flashed', 'vendor', 'model',
                   'serial_number', 'created_at', 'updated_at')
# Fields of a firmware component -> first minor version (when after 1.86).
FIRMWARE_FIELD_VERSIONS = {'vendor': mv.FIRMWARE_IDENTITY,
                           'model': mv.FIRMWARE_IDENTITY,
                           'serial_number': mv.FIRMWARE_IDENTITY}


def list_firmware(req, node_ident):
    node = _node(req, node_ident, 'baremetal:node:firmware:get',
                 mv.FIRMWARE)
    components = firmware_obj.FirmwareComponent.list_by_node_id(
        req.context, node.id)
    fields = [name for name in FIRMWARE_FIELDS
              if req.version.check(FIRMWARE_FIELD_VERSIONS.get(name, 1))]
    return util.json_response({'firmware': [
        {name: getattr(c, name) for name in fields} for c in components]})
