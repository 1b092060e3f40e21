"""JSON schemas of /traits."""

import re

# Custom trait names; os-traits' standard names are read-only.
CUSTOM_TRAIT = {
    'type': 'string',
    'pattern': '^CUSTOM_[A-Z0-9_]+$',
    'maxLength': 255,
}
CUSTOM_TRAIT_RE = re.compile(CUSTOM_TRAIT['pattern'])

LIST_TRAIT_SCHEMA = {
    'type': 'object',
    'properties': {
        'name': {'type': 'string'},
        # Checked by the handler, case-insensitively.
        'associated': {'type': 'string'},
    },
    'additionalProperties': False,
}
