"""JSON schemas of /resource_classes."""

import copy

# Custom classes only: standard names have no CUSTOM_ prefix.
_NAME = {
    'type': 'string',
    'pattern': '^CUSTOM_[A-Z0-9_]+$',
    'maxLength': 255,
}

POST_RC_SCHEMA_V1_2 = {
    'type': 'object',
    'properties': {
        'name': _NAME,
    },
    'required': ['name'],
    'additionalProperties': False,
}

# The pre-1.7 rename takes the same document as the creation.
PUT_RC_SCHEMA_V1_2 = copy.deepcopy(POST_RC_SCHEMA_V1_2)
