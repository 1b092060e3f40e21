"""Validation of allocation bodies (``POST`` and ``PATCH``).

One JSON schema per version that changed the POST body: each is a copy
of the previous one with one change and ``additionalProperties: false``.
"""

import copy

import jsonschema
from oslo_utils import uuidutils

from alloc_framework.api.baremetal import errors
from alloc_framework.api.baremetal import microversion as mv
from alloc_framework.api.baremetal.schemas import node as node_schema
from alloc_framework.api import limits
from alloc_framework.common import schema as schema_utils
from alloc_framework.common import utils

RESOURCE_CLASS = {'type': 'string', 'minLength': 1, 'maxLength': 80,
                  'pattern': node_schema.RESOURCE_CLASS_PATTERN}

POST_1_52 = {
    'type': 'object',
    'properties': {
        'resource_class': RESOURCE_CLASS,
        'traits': {'type': 'array', 'items': {'type': 'string'}},
        'candidate_nodes': {'type': ['array', 'null'],
                            'items': {'type': 'string'}},
        'name': {'type': ['string', 'null']},
        'uuid': {'type': ['string', 'null']},
        'extra': {'type': ['object', 'null']},
    },
    'required': ['resource_class'],
    'additionalProperties': False,
}
# 1.58: ``node`` backfills an allocation; resource_class may then be
# omitted (it comes from the node).
POST_1_58 = copy.deepcopy(POST_1_52)
POST_1_58['properties']['node'] = {'type': 'string'}
POST_1_58['required'] = []
# 1.60: ``owner``.
POST_1_60 = copy.deepcopy(POST_1_58)
POST_1_60['properties']['owner'] = {'type': ['string', 'null'],
                                    'maxLength': 255,
                                    'pattern': limits.TEXT_PATTERN}

# Attributes a PATCH may change (1.57).
PATCHABLE = ('name', 'extra')


def _schema_for(version):
    if version.check(mv.ALLOCATION_OWNER):
        return POST_1_60
    if version.check(mv.ALLOCATION_BACKFILL):
        return POST_1_58
    return POST_1_52


def _field_of(exc):
    if exc.path:
        return str(exc.path[0])
    if exc.validator == 'additionalProperties':
        return ', '.join(sorted(set(exc.instance) -
                                set(exc.schema.get('properties', {}))))
    if exc.validator == 'required':
        return exc.message.split("'")[1]
    return ''


def validate_post(req, body):
    """Check a POST body; returns it.

    :raises: 400 for ``node`` before 1.58 and 406 for ``owner`` before
        1.60 (upstream's answers: an invalid request, and the "not
        acceptable" of its allocation field check), 400 naming the field
        for anything else that is wrong.
    """
    if body.get('node') is not None and not req.version.check(
            mv.ALLOCATION_BACKFILL):
        raise errors.HTTPError(
            400, 'Invalid allocation field node: backfilling needs API '
                 'version 1.%d or newer (this request uses %s).'
            % (mv.ALLOCATION_BACKFILL, req.version), errors.INVALID_FIELD)
    if 'owner' in body and not req.version.check(mv.ALLOCATION_OWNER):
        raise errors.HTTPError(
            406, 'Field owner is not available in API version %s.'
            % req.version, errors.VERSION_NOT_ACCEPTABLE)
    try:
        schema_utils.validate(body, _schema_for(req.version))
    except jsonschema.ValidationError as exc:
        field = _field_of(exc)
        raise errors.HTTPError(
            400, 'Invalid allocation field %s: %s' % (field, exc.message),
            errors.INVALID_FIELD)
    if 'resource_class' not in body and 'node' not in body:
        raise errors.HTTPError(
            400, 'Invalid allocation field resource_class: it is required '
                 'unless node is given.', errors.INVALID_FIELD)
    if body.get('uuid') is not None:
        if not uuidutils.is_uuid_like(body['uuid']):
            raise errors.HTTPError(
                400, 'Invalid allocation field uuid: %r is not a UUID.'
                % body['uuid'], errors.INVALID_FIELD)
        body['uuid'] = utils.canonical_uuid(body['uuid'])
    check_name(body.get('name'))
    return body


def check_name(name):
    if name is not None and not utils.is_valid_logical_name(name):
        raise errors.HTTPError(
            400, 'Invalid allocation field name: %r is not an accepted '
                 'name (letters, digits and -._~ only, not a UUID).'
            % (name,), errors.INVALID_FIELD)


def validate_patch_paths(patch):
    for op in patch:
        root = op['path'].lstrip('/').split('/')[0]
        if root not in PATCHABLE:
            raise errors.HTTPError(
                400, "Cannot update allocation field /%s: only name and "
                     "extra can be updated." % root,
                errors.READ_ONLY_FIELD)


def validate_patched(doc):
    check_name(doc.get('name'))
    if doc.get('extra') is not None and not isinstance(doc['extra'], dict):
        raise errors.HTTPError(400, 'Invalid allocation field extra: it '
                               'must be an object.', errors.INVALID_FIELD)
