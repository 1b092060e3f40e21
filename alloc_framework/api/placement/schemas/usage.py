"""JSON schemas of the query string of GET /usages."""

import copy

# 1.9: project_id is required, user_id optional.
GET_USAGES_SCHEMA_1_9 = {
    'type': 'object',
    'properties': {
        'project_id': {'type': 'string', 'minLength': 1, 'maxLength': 255},
        'user_id': {'type': 'string', 'minLength': 1, 'maxLength': 255},
    },
    'required': ['project_id'],
    'additionalProperties': False,
}

# 1.38: optional consumer_type, a type name or "all" or "unknown".
GET_USAGES_SCHEMA_1_38 = copy.deepcopy(GET_USAGES_SCHEMA_1_9)
GET_USAGES_SCHEMA_1_38['properties']['consumer_type'] = {
    'type': 'string',
    'pattern': '^([A-Z0-9_]+|all|unknown)$',
    'minLength': 1,
    'maxLength': 255,
}
