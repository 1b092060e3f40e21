"""JSON schemas of /resource_providers and /resource_providers/{uuid}.

One constant per microversion that changed the document; each is a copy
of the previous one with one change.
"""

import copy

from alloc_framework.api import limits

# A uuid with or without dashes; handlers normalise it to the dashed form.
UUID = {
    'type': 'string',
    'pattern': '^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?'
               '[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$',
}
# A uuid in a request body: checked as ``format: uuid``, as the reference
# does, so that errors say "is not a 'uuid'" (content.extract_json).
UUID_FORMAT = {'type': 'string', 'format': 'uuid'}
_NAME = {'type': 'string', 'minLength': 1, 'maxLength': 200,
         'pattern': limits.TEXT_PATTERN}

POST_RESOURCE_PROVIDER_SCHEMA = {
    'type': 'object',
    'properties': {
        'name': _NAME,
        'uuid': UUID_FORMAT,
    },
    'required': ['name'],
    'additionalProperties': False,
}

# 1.14: nested providers.
POST_RP_SCHEMA_V1_14 = copy.deepcopy(POST_RESOURCE_PROVIDER_SCHEMA)
POST_RP_SCHEMA_V1_14['properties']['parent_provider_uuid'] = {
    'anyOf': [UUID_FORMAT, {'type': 'null'}],
}

PUT_RESOURCE_PROVIDER_SCHEMA = {
    'type': 'object',
    'properties': {
        'name': _NAME,
    },
    'required': ['name'],
    'additionalProperties': False,
}

# 1.14: nested providers.
PUT_RP_SCHEMA_V1_14 = copy.deepcopy(PUT_RESOURCE_PROVIDER_SCHEMA)
PUT_RP_SCHEMA_V1_14['properties']['parent_provider_uuid'] = {
    'anyOf': [UUID_FORMAT, {'type': 'null'}],
}

GET_RPS_SCHEMA_1_0 = {
    'type': 'object',
    'properties': {
        'name': {'type': 'string'},
        'uuid': UUID,
    },
    'additionalProperties': False,
}

# 1.3: member_of (checked further by query.normalize_member_of_qs_params).
GET_RPS_SCHEMA_1_3 = copy.deepcopy(GET_RPS_SCHEMA_1_0)
GET_RPS_SCHEMA_1_3['properties']['member_of'] = {'type': 'string'}

# 1.4: resources.
GET_RPS_SCHEMA_1_4 = copy.deepcopy(GET_RPS_SCHEMA_1_3)
GET_RPS_SCHEMA_1_4['properties']['resources'] = {'type': 'string'}

# 1.14: in_tree.
GET_RPS_SCHEMA_1_14 = copy.deepcopy(GET_RPS_SCHEMA_1_4)
GET_RPS_SCHEMA_1_14['properties']['in_tree'] = UUID

# 1.18: required traits.
GET_RPS_SCHEMA_1_18 = copy.deepcopy(GET_RPS_SCHEMA_1_14)
GET_RPS_SCHEMA_1_18['properties']['required'] = {'type': 'string'}

# 1.24: member_of may be repeated.
GET_RPS_SCHEMA_1_24 = copy.deepcopy(GET_RPS_SCHEMA_1_18)
GET_RPS_SCHEMA_1_24['properties']['member_of'] = {
    'type': 'array', 'items': {'type': 'string'}}

# 1.39: required may be repeated.
GET_RPS_SCHEMA_1_39 = copy.deepcopy(GET_RPS_SCHEMA_1_24)
GET_RPS_SCHEMA_1_39['properties']['required'] = {
    'type': 'array', 'items': {'type': 'string'}}
