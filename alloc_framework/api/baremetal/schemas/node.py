"""Validation of node bodies: ``POST /v1/nodes`` and JSON patches.

Each writable field has a JSON schema and the minor version that
introduced it; a field of a later version is refused with 406, as the
upstream service does, and anything else unknown or read-only with 400
naming the field.
"""

import json
import re

import jsonschema
from oslo_utils import strutils

from alloc_framework.api.baremetal import errors
from alloc_framework.api.baremetal import microversion as mv
from alloc_framework.api import limits
from alloc_framework.common import schema as schema_utils
from alloc_framework.common import utils

_STRING_255 = {'type': ['string', 'null'], 'maxLength': 255}
_DICT = {'type': ['object', 'null']}
_BOOL = {'type': 'boolean'}
_UUID = {'type': ['string', 'null'], 'format': 'uuid'}
# Resource classes: printable ASCII (upstream limits only the length;
# control and non-ASCII characters cannot name a Placement class).
RESOURCE_CLASS_PATTERN = r'^[\x20-\x7e]*\Z'

# Writable fields: name -> (schema, first minor version).
WRITABLE = {
    'uuid': ({'type': 'string', 'format': 'uuid'}, 1),
    'name': ({'type': ['string', 'null'], 'format': 'logical_name'},
             mv.NAME),
    'driver': ({'type': 'string', 'minLength': 1, 'maxLength': 255}, 1),
    'driver_info': (_DICT, 1),
    'properties': (_DICT, 1),
    'extra': (_DICT, 1),
    'instance_info': (_DICT, 1),
    'instance_uuid': (_UUID, 1),
    'maintenance': (_BOOL, 1),
    'maintenance_reason': ({'type': ['string', 'null']}, 1),
    'resource_class': ({'type': ['string', 'null'], 'maxLength': 80,
                        'pattern': RESOURCE_CLASS_PATTERN},
                       mv.RESOURCE_CLASS),
    'power_interface': (_STRING_255, mv.INTERFACES),
    'deploy_interface': (_STRING_255, mv.INTERFACES),
    'management_interface': (_STRING_255, mv.INTERFACES),
    'boot_interface': (_STRING_255, mv.INTERFACES),
    'bios_interface': (_STRING_255, mv.BIOS_INTERFACE),
    'firmware_interface': (_STRING_255, mv.FIRMWARE),
    'conductor_group': ({'type': ['string', 'null'], 'maxLength': 255,
                         'pattern': r'^[a-zA-Z0-9_\-\.]*$'},
                        mv.CONDUCTOR_GROUP),
    'automated_clean': ({'type': ['boolean', 'null']}, mv.AUTOMATED_CLEAN),
    'protected': (_BOOL, mv.PROTECTED),
    'protected_reason': ({'type': ['string', 'null']}, mv.PROTECTED),
    'owner': (_STRING_255, mv.OWNER),
    'description': ({'type': ['string', 'null'], 'maxLength': 4096},
                    mv.DESCRIPTION),
    'retired': (_BOOL, mv.RETIRED),
    'retired_reason': ({'type': ['string', 'null']}, mv.RETIRED),
    'lessee': (_STRING_255, mv.LESSEE),
    'shard': (_STRING_255, mv.SHARDS),
    # A node name or UUID; the handler stores the parent's UUID.
    'parent_node': ({'type': ['string', 'null'], 'maxLength': 255},
                    mv.CHILD_NODES),
    'disable_power_off': (_BOOL, mv.DISABLE_POWER_OFF),
    'instance_name': (_STRING_255, mv.INSTANCE_NAME),
}
# Boolean fields: false when removed or given as null at creation.
_FLAGS = ('maintenance', 'protected', 'retired', 'disable_power_off')
# Fields that take a boolean (or a string naming one).
_BOOLEAN_FIELDS = _FLAGS + ('automated_clean',)
# Fields set only at creation.
CREATE_ONLY = ('uuid',)
# Fields holding a UUID, stored in its canonical spelling.
UUID_FIELDS = ('uuid', 'instance_uuid')
# Fields the API shows but no client may write.
READ_ONLY = ('uuid', 'created_at', 'updated_at', 'provision_state',
             'target_provision_state', 'power_state', 'target_power_state',
             'provision_updated_at', 'last_error', 'reservation',
             'clean_step', 'deploy_step', 'service_step',
             'driver_internal_info',
             'allocation_uuid', 'traits', 'fault', 'conductor', 'health',
             'console_enabled', 'links', 'id')
# The document a PATCH applies to.
PATCH_DOCUMENT = tuple(WRITABLE) + tuple(
    f for f in READ_ONLY if f not in ('allocation_uuid', 'conductor',
                                      'console_enabled', 'links', 'id'))
# Extra policy rule checked when a field changes.
FIELD_RULES = {
    'driver_info': 'baremetal:node:update:driver_info',
    'properties': 'baremetal:node:update:properties',
    'instance_uuid': 'baremetal:node:update:instance_uuid',
    'lessee': 'baremetal:node:update:lessee',
    'owner': 'baremetal:node:update:owner',
    'driver': 'baremetal:node:update:driver_interfaces',
    'power_interface': 'baremetal:node:update:driver_interfaces',
    'deploy_interface': 'baremetal:node:update:driver_interfaces',
    'management_interface': 'baremetal:node:update:driver_interfaces',
    'boot_interface': 'baremetal:node:update:driver_interfaces',
    'bios_interface': 'baremetal:node:update:driver_interfaces',
    'firmware_interface': 'baremetal:node:update:driver_interfaces',
    'conductor_group': 'baremetal:node:update:conductor_group',
    'name': 'baremetal:node:update:name',
    'retired': 'baremetal:node:update:retired',
    'retired_reason': 'baremetal:node:update:retired',
    'shard': 'baremetal:node:update:shard',
    'parent_node': 'baremetal:node:update:parent_node',
    'extra': 'baremetal:node:update_extra',
    'instance_info': 'baremetal:node:update_instance_info',
}

_CHECKER = jsonschema.FormatChecker()


@_CHECKER.checks('uuid')
def _is_uuid(value):
    from oslo_utils import uuidutils
    return not isinstance(value, str) or uuidutils.is_uuid_like(value)


@_CHECKER.checks('logical_name')
def _is_name(value):
    return not isinstance(value, str) or utils.is_valid_logical_name(value)


def _check_value(name, value):
    schema = WRITABLE[name][0]
    if isinstance(value, str) and not re.match(limits.TEXT_PATTERN, value):
        raise errors.HTTPError(400, 'Invalid value for field %s: NUL '
                               'characters are not accepted.' % name,
                               errors.INVALID_FIELD)
    try:
        schema_utils.validate(value, schema, format_checker=_CHECKER)
    except jsonschema.ValidationError as exc:
        if exc.validator == 'format' and name == 'name':
            message = ('Cannot use %r as the node name: a name may only '
                       'contain letters, digits and -._~ and must not look '
                       'like a UUID.' % (value,))
        else:
            message = 'Invalid value for field %s: %s' % (name, exc.message)
        raise errors.HTTPError(400, message, errors.INVALID_FIELD)


def _coerce(name, value):
    """A boolean field patched with a string (``"True"``, ``"false"``)
    takes that boolean, as upstream's patches do: python-ironicclient's
    ``node set --protected`` or ``--disable-power-off`` send strings."""
    if name in _BOOLEAN_FIELDS and isinstance(value, str):
        try:
            return strutils.bool_from_string(value, strict=True)
        except ValueError:
            pass  # refused by the field's schema, naming the field
    return value


def _check_version(req, name):
    minor = WRITABLE[name][1]
    if not req.version.check(minor):
        raise errors.HTTPError(
            406, 'Field %s is not available in API version %s.'
            % (name, req.version), errors.VERSION_NOT_ACCEPTABLE)


def validate_create(req, body):
    """Return the values of a new node from a POST body."""
    for name in body:
        if name in WRITABLE:
            continue
        if name in READ_ONLY:
            raise errors.HTTPError(400, "'%s' is a read-only attribute and "
                                   "can not be set at creation." % name,
                                   errors.READ_ONLY_FIELD)
        raise errors.HTTPError(400, "Unknown attribute for node: %s" % name,
                               errors.INVALID_FIELD)
    if 'driver' not in body:
        raise errors.HTTPError(400, 'Mandatory field missing: driver',
                               errors.INVALID_FIELD)
    values = {}
    for name, value in body.items():
        _check_version(req, name)
        _check_value(name, value)
        if name == 'conductor_group' and value is None:
            value = ''
        if name in UUID_FIELDS and value is not None:
            value = utils.canonical_uuid(value)
        if value is not None or name not in _FLAGS:
            values[name] = value
    return values


def check_patch_paths(req, patch):
    """Refuse a patch touching a read-only or unknown field (400).

    :param patch: a list of operations already checked by
        ``util.apply_patch``'s shape rules or to be checked by it.
    """
    for op in patch:
        if not isinstance(op, dict) or not isinstance(op.get('path'), str):
            continue
        if '~' in op['path'] and not req.version.check(mv.PATCH_ESCAPES):
            # Upstream's patch paths were word characters and dashes
            # until 1.98 brought keys with ~ and / (escaped ~0 and ~1).
            raise errors.HTTPError(
                400, 'Invalid patch path %s: keys with ~ or / (escaped '
                     '~0 and ~1) need API version 1.%d or later.'
                % (json.dumps(op['path'])[:300], mv.PATCH_ESCAPES),
                errors.INVALID_PATCH)
        root = op['path'].lstrip('/').split('/')[0]
        if root in READ_ONLY:
            raise errors.HTTPError(
                400, "'/%s' is a read-only attribute and can not be "
                     "updated." % root, errors.READ_ONLY_FIELD)
        if root not in WRITABLE:
            raise errors.HTTPError(
                400, "Unknown attribute for node: %s" % root,
                errors.INVALID_FIELD)
        _check_version(req, root)


def validate_patch(req, patch, doc, node):
    """Return {field: new value} for the fields a patch changed.

    :param doc: the patched document (see PATCH_DOCUMENT).
    :raises: 400 for a value that is not acceptable.
    """
    changes = {}
    for name in WRITABLE:
        if name in CREATE_ONLY:
            continue
        if name not in doc:
            # A removed attribute goes back to its empty value.
            doc[name] = {} if WRITABLE[name][0] is _DICT else None
            if name in _FLAGS:
                doc[name] = False
        value = _coerce(name, doc[name])
        if name in UUID_FIELDS and isinstance(value, str):
            _check_value(name, value)
            value = utils.canonical_uuid(value)
        if value != getattr(node, name):
            _check_value(name, value)
            if name == 'driver' and not value:
                raise errors.HTTPError(400, 'Node driver can not be '
                                       'removed.', errors.INVALID_FIELD)
            if name == 'conductor_group' and value is None:
                value = ''
            changes[name] = value
    return changes


def instance_name_sync(values, node):
    """Keep ``instance_name`` and ``instance_info['display_name']`` equal.

    As upstream (1.104): setting ``instance_name`` sets the display name
    (removing it removes the name), and an ``instance_info`` whose
    ``display_name`` changes, at any version, changes ``instance_name``
    (clients written before 1.104 set only the display name).

    :param values: the new values (a POST body's or a patch's changes).
    :param node: the node being updated, None at creation.
    :returns: the further changes to make.
    """
    info = values.get('instance_info')
    if info is None and node is not None:
        info = node.instance_info
    info = dict(info or {})
    if 'instance_name' in values:
        name = values['instance_name']
        if name is None:
            info.pop('display_name', None)
        else:
            info['display_name'] = name
        if node is None or info != (node.instance_info or {}):
            return {'instance_info': info}
        return {}
    if 'instance_info' not in values:
        return {}
    display = info.get('display_name')
    if not isinstance(display, str) or len(display) > 255:
        # Not a name the field can hold: the field stays empty.
        display = None
    if node is None:
        return {'instance_name': display} if display is not None else {}
    if display != node.instance_name:
        return {'instance_name': display}
    return {}
