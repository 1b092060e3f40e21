"""JSON schemas of PUT /allocations/{consumer_uuid} and POST /allocations.

One constant per microversion that changed the body; each is a copy of
the previous one with one change.
"""

import copy

from alloc_framework.api import limits

# Resource class names in bodies (standard or CUSTOM_*).
RC_PATTERN = '^[A-Z0-9_]+$'
# Provider and consumer uuids as dict keys (dashes optional, as upstream).
UUID_PATTERN = ('^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?'
                '[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$')
CONSUMER_TYPE_PATTERN = '^[A-Z0-9_]+$'
# Request group suffixes of "mappings": empty or [a-zA-Z0-9_-]+.
GROUP_PATTERN = '^[a-zA-Z0-9_-]{0,64}$'

_RESOURCES = {
    'type': 'object',
    'minProperties': 1,
    'patternProperties': {
        RC_PATTERN: {'type': 'integer', 'minimum': 1,
                     'maximum': limits.MAX_INT},
    },
    'additionalProperties': False,
}
_EXTERNAL_ID = {'type': 'string', 'minLength': 1, 'maxLength': 255,
                'pattern': limits.TEXT_PATTERN}

# 1.0: a list of {resource_provider: {uuid}, resources}.
ALLOCATION_SCHEMA = {
    'type': 'object',
    'properties': {
        'allocations': {
            'type': 'array',
            'minItems': 1,
            'items': {
                'type': 'object',
                'properties': {
                    'resource_provider': {
                        'type': 'object',
                        'properties': {
                            'uuid': {'type': 'string', 'format': 'uuid'},
                        },
                        'required': ['uuid'],
                        'additionalProperties': False,
                    },
                    'resources': _RESOURCES,
                },
                'required': ['resource_provider', 'resources'],
                'additionalProperties': False,
            },
        },
    },
    'required': ['allocations'],
    'additionalProperties': False,
}

# 1.8: project_id and user_id are required.
ALLOCATION_SCHEMA_V1_8 = copy.deepcopy(ALLOCATION_SCHEMA)
ALLOCATION_SCHEMA_V1_8['properties']['project_id'] = _EXTERNAL_ID
ALLOCATION_SCHEMA_V1_8['properties']['user_id'] = _EXTERNAL_ID
ALLOCATION_SCHEMA_V1_8['required'].extend(['project_id', 'user_id'])

# 1.12: allocations become a dict keyed by provider uuid, the shape GET
# returns ("generation" is accepted and ignored).
ALLOCATION_SCHEMA_V1_12 = copy.deepcopy(ALLOCATION_SCHEMA_V1_8)
ALLOCATION_SCHEMA_V1_12['properties']['allocations'] = {
    'type': 'object',
    'minProperties': 1,
    'patternProperties': {
        UUID_PATTERN: {
            'type': 'object',
            'properties': {
                'generation': limits.INTEGER,
                'resources': _RESOURCES,
            },
            'required': ['resources'],
            'additionalProperties': False,
        },
    },
    'additionalProperties': False,
}

# POST /allocations (1.13): a dict keyed by consumer uuid of 1.12 bodies
# whose allocations may be empty (removing the consumer's allocations).
DELETABLE_ALLOCATIONS_V1_13 = copy.deepcopy(ALLOCATION_SCHEMA_V1_12)
DELETABLE_ALLOCATIONS_V1_13['properties']['allocations']['minProperties'] = 0
POST_ALLOCATIONS_V1_13 = {
    'type': 'object',
    'minProperties': 1,
    'patternProperties': {UUID_PATTERN: DELETABLE_ALLOCATIONS_V1_13},
    'additionalProperties': False,
}

# 1.28: consumer_generation is required (null for a new consumer); PUT
# accepts empty allocations too.
ALLOCATION_SCHEMA_V1_28 = copy.deepcopy(DELETABLE_ALLOCATIONS_V1_13)
ALLOCATION_SCHEMA_V1_28['properties']['consumer_generation'] = dict(
    limits.INTEGER, type=['integer', 'null'])
ALLOCATION_SCHEMA_V1_28['required'].append('consumer_generation')
POST_ALLOCATIONS_V1_28 = copy.deepcopy(POST_ALLOCATIONS_V1_13)
POST_ALLOCATIONS_V1_28['patternProperties'] = {
    UUID_PATTERN: ALLOCATION_SCHEMA_V1_28}

# 1.34: optional mappings {group suffix: [provider uuids]}, ignored.
ALLOCATION_SCHEMA_V1_34 = copy.deepcopy(ALLOCATION_SCHEMA_V1_28)
ALLOCATION_SCHEMA_V1_34['properties']['mappings'] = {
    'type': 'object',
    'minProperties': 1,
    'patternProperties': {
        GROUP_PATTERN: {
            'type': 'array',
            'minItems': 1,
            'items': {'type': 'string', 'format': 'uuid'},
        },
    },
    'additionalProperties': False,
}
POST_ALLOCATIONS_V1_34 = copy.deepcopy(POST_ALLOCATIONS_V1_28)
POST_ALLOCATIONS_V1_34['patternProperties'] = {
    UUID_PATTERN: ALLOCATION_SCHEMA_V1_34}

# 1.38: consumer_type is required.
ALLOCATION_SCHEMA_V1_38 = copy.deepcopy(ALLOCATION_SCHEMA_V1_34)
ALLOCATION_SCHEMA_V1_38['properties']['consumer_type'] = {
    'type': 'string',
    'pattern': CONSUMER_TYPE_PATTERN,
    'minLength': 1,
    'maxLength': 255,
}
ALLOCATION_SCHEMA_V1_38['required'].append('consumer_type')
POST_ALLOCATIONS_V1_38 = copy.deepcopy(POST_ALLOCATIONS_V1_34)
POST_ALLOCATIONS_V1_38['patternProperties'] = {
    UUID_PATTERN: ALLOCATION_SCHEMA_V1_38}
