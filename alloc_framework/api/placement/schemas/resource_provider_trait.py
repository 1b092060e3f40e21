"""JSON schemas of /resource_providers/{uuid}/traits."""

from alloc_framework.api import limits

SET_TRAITS_FOR_RP_SCHEMA = {
    'type': 'object',
    'properties': {
        'traits': {
            'type': 'array',
            'items': {
                'type': 'string',
                'pattern': '^[A-Z0-9_]+$',
                'minLength': 1,
                'maxLength': 255,
            },
            'uniqueItems': True,
        },
        'resource_provider_generation': limits.INTEGER,
    },
    'required': ['traits', 'resource_provider_generation'],
    'additionalProperties': False,
}
