"""Validation of allocation group bodies (``POST /v1/allocation_groups``).

An extension of ours, the same at every API version: one schema, with
``additionalProperties: false`` at every level. Errors are 400 naming the
field as a path (``members/1/count``).
"""

import jsonschema
from oslo_utils import uuidutils

from alloc_framework.api.baremetal import errors
from alloc_framework.api.baremetal.schemas import allocation as alloc_schema
from alloc_framework.api import limits
from alloc_framework.common import schema as schema_utils
from alloc_framework.common import utils

# The fields a group may spread its nodes over.
SPREAD_PATTERN = r'^(conductor_group|properties/[^/\s]{1,255})$'

MEMBER = {
    'type': 'object',
    'properties': {
        'count': {'type': 'integer', 'minimum': 1},
        'resource_class': alloc_schema.RESOURCE_CLASS,
        'traits': {'type': 'array', 'items': {'type': 'string'}},
        'candidate_nodes': {'type': ['array', 'null'],
                            'items': {'type': 'string'}},
    },
    'required': ['count', 'resource_class'],
    'additionalProperties': False,
}

POST = {
    'type': 'object',
    'properties': {
        'name': {'type': ['string', 'null']},
        'uuid': {'type': ['string', 'null']},
        'owner': {'type': ['string', 'null'], 'maxLength': 255,
                  'pattern': limits.TEXT_PATTERN},
        'members': {'type': 'array', 'minItems': 1, 'items': MEMBER},
        'spread': {
            'type': ['object', 'null'],
            'properties': {'field': {'type': 'string',
                                     'pattern': SPREAD_PATTERN}},
            'required': ['field'],
            'additionalProperties': False,
        },
    },
    'required': ['members'],
    'additionalProperties': False,
}


def _field_of(exc):
    path = [str(p) for p in exc.absolute_path]
    if exc.validator == 'additionalProperties':
        extra = sorted(set(exc.instance) -
                       set(exc.schema.get('properties', {})))
        path.append(', '.join(extra))
    elif exc.validator == 'required':
        path.append(exc.message.split("'")[1])
    return '/'.join(path)


def validate_post(body, max_size):
    """Check a POST body; returns it (UUID made canonical).

    :param max_size: ``[allocation]max_group_size``.
    :raises: 400 naming the field.
    """
    try:
        schema_utils.validate(body, POST)
    except jsonschema.ValidationError as exc:
        raise errors.HTTPError(
            400, 'Invalid allocation group field %s: %s'
            % (_field_of(exc), exc.message), errors.INVALID_FIELD)
    if body.get('uuid') is not None:
        if not uuidutils.is_uuid_like(body['uuid']):
            raise errors.HTTPError(
                400, 'Invalid allocation group field uuid: %r is not a '
                     'UUID.' % body['uuid'], errors.INVALID_FIELD)
        body['uuid'] = utils.canonical_uuid(body['uuid'])
    name = body.get('name')
    if name is not None and not utils.is_valid_logical_name(name):
        raise errors.HTTPError(
            400, 'Invalid allocation group field name: %r is not an '
                 'accepted name (letters, digits and -._~ only, not a '
                 'UUID).' % (name,), errors.INVALID_FIELD)
    total = sum(member['count'] for member in body['members'])
    if total > max_size:
        raise errors.HTTPError(
            400, 'Invalid allocation group field members: %d nodes '
                 'requested, more than [allocation]max_group_size (%d).'
            % (total, max_size), errors.INVALID_FIELD)
    return body
