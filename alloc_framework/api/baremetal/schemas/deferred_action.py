"""Validation of the query of ``GET /v1/deferred_actions``."""

from alloc_framework.api.baremetal import errors
from alloc_framework.common import schema as schema_utils
from alloc_framework.objects.baremetal import deferred_action

LIST_QUERY = {
    'type': 'object',
    'properties': {
        'state': {'type': 'string', 'enum': list(deferred_action.STATES)},
        'node': {'type': 'string', 'minLength': 1, 'maxLength': 255},
        'limit': {'type': 'string', 'pattern': '^[0-9]+$'},
        'marker': {'type': 'string'},
        'detail': {'type': 'string'},
    },
    'additionalProperties': False,
}


def validate_list_query(query):
    """:raises: 400 ``baremetal.invalid_query`` naming the problem."""
    params = {}
    for key, value in query.items():
        if key in params:
            raise errors.HTTPError(400, 'Query parameter %s is repeated.'
                                   % key, errors.INVALID_QUERY)
        params[key] = value
    error = next(iter(schema_utils.validator(LIST_QUERY).iter_errors(
        params)), None)
    if error is not None:
        raise errors.HTTPError(400, 'Invalid query: %s' % error.message,
                               errors.INVALID_QUERY)
    return params
