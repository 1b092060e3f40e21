"""JSON schemas of /resource_providers/{uuid}/aggregates."""

import copy

from alloc_framework.api import limits
from alloc_framework.api.placement.schemas import resource_provider

# 1.1: a bare list of aggregate uuids.
PUT_AGGREGATES_SCHEMA_V1_1 = {
    'type': 'array',
    'items': resource_provider.UUID_FORMAT,
    'uniqueItems': True,
}

# 1.19: an object with the provider generation.
PUT_AGGREGATES_SCHEMA_V1_19 = {
    'type': 'object',
    'properties': {
        'aggregates': copy.deepcopy(PUT_AGGREGATES_SCHEMA_V1_1),
        'resource_provider_generation': limits.INTEGER,
    },
    'required': ['aggregates', 'resource_provider_generation'],
    'additionalProperties': False,
}
