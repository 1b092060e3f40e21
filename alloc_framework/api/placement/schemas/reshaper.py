"""JSON schemas of POST /reshaper (microversion 1.30 and later).

The body reuses the bodies of ``PUT /resource_providers/{uuid}/inventories``
(keyed by provider uuid) and of ``POST /allocations`` (keyed by consumer
uuid) of the same microversion.
"""

import copy

from alloc_framework.api.placement.schemas import allocation
from alloc_framework.api.placement.schemas import inventory


def _allocations(post_schema):
    result = copy.deepcopy(post_schema)
    # A reshape may move inventory nothing is allocated from.
    result['minProperties'] = 0
    return result


# 1.30
POST_RESHAPER_SCHEMA = {
    'type': 'object',
    'properties': {
        'inventories': {
            'type': 'object',
            'patternProperties': {
                allocation.UUID_PATTERN: inventory.PUT_INVENTORY_SCHEMA,
            },
            # Without inventories there is nothing to reshape.
            'minProperties': 1,
            'additionalProperties': False,
        },
        'allocations': _allocations(allocation.POST_ALLOCATIONS_V1_28),
    },
    'required': ['inventories', 'allocations'],
    'additionalProperties': False,
}

# 1.34: allocations may carry mappings.
POST_RESHAPER_SCHEMA_V1_34 = copy.deepcopy(POST_RESHAPER_SCHEMA)
POST_RESHAPER_SCHEMA_V1_34['properties']['allocations'] = _allocations(
    allocation.POST_ALLOCATIONS_V1_34)

# 1.38: allocations must carry consumer_type.
POST_RESHAPER_SCHEMA_V1_38 = copy.deepcopy(POST_RESHAPER_SCHEMA_V1_34)
POST_RESHAPER_SCHEMA_V1_38['properties']['allocations'] = _allocations(
    allocation.POST_ALLOCATIONS_V1_38)
