"""JSON schemas of /resource_providers/{uuid}/inventories[/{class}]."""

import copy

from alloc_framework.api import limits

# The integer columns' range.
MAX_INT = limits.MAX_INT
# The largest value of a single precision float column.
MAX_FLOAT = 3.40282e+38
RC_PATTERN = '^[A-Z0-9_]+$'

BASE_INVENTORY_SCHEMA = {
    'type': 'object',
    'properties': {
        'resource_provider_generation': limits.INTEGER,
        'total': {'type': 'integer', 'minimum': 1, 'maximum': MAX_INT},
        'reserved': {'type': 'integer', 'minimum': 0, 'maximum': MAX_INT},
        'min_unit': {'type': 'integer', 'minimum': 1, 'maximum': MAX_INT},
        'max_unit': {'type': 'integer', 'minimum': 1, 'maximum': MAX_INT},
        'step_size': {'type': 'integer', 'minimum': 1, 'maximum': MAX_INT},
        'allocation_ratio': {'type': 'number', 'maximum': MAX_FLOAT},
    },
    'required': ['total', 'resource_provider_generation'],
    'additionalProperties': False,
}

# POST of one inventory names its class and needs no generation.
POST_INVENTORY_SCHEMA = copy.deepcopy(BASE_INVENTORY_SCHEMA)
POST_INVENTORY_SCHEMA['properties']['resource_class'] = {
    'type': 'string', 'pattern': RC_PATTERN}
POST_INVENTORY_SCHEMA['required'] = ['total', 'resource_class']

# One record inside PUT /inventories: the generation is at the top.
PUT_INVENTORY_RECORD_SCHEMA = copy.deepcopy(BASE_INVENTORY_SCHEMA)
del PUT_INVENTORY_RECORD_SCHEMA['properties'][
    'resource_provider_generation']
PUT_INVENTORY_RECORD_SCHEMA['required'] = ['total']

PUT_INVENTORY_SCHEMA = {
    'type': 'object',
    'properties': {
        'resource_provider_generation': limits.INTEGER,
        'inventories': {
            'type': 'object',
            'patternProperties': {
                RC_PATTERN: PUT_INVENTORY_RECORD_SCHEMA,
            },
            'additionalProperties': False,
        },
    },
    'required': ['resource_provider_generation', 'inventories'],
    'additionalProperties': False,
}
