"""Query schemas of GET /allocation_candidates.

One constant per microversion that changed the accepted parameters; each
is a copy of the previous one with one change.
"""

import copy

# Suffix of a granular group: a number before 1.33, then a string.
GROUP_PAT = r'[1-9][0-9]*'
GROUP_PAT_1_33 = r'[a-zA-Z0-9_-]{1,64}'
_GROUP_KEY = '^%s(' + GROUP_PAT + ')?$'
_GROUP_KEY_1_33 = '^%s(' + GROUP_PAT_1_33 + ')?$'

GET_SCHEMA_1_10 = {
    'type': 'object',
    'properties': {
        'resources': {'type': 'string'},
        # Not in the reference: ``explain=true`` adds an ``explanation``
        # to the answer, at every version (its value is checked by the
        # handler, which names the parameter in its 400).
        'explain': {'type': 'string'},
    },
    'required': ['resources'],
    'additionalProperties': False,
}

GET_SCHEMA_1_16 = copy.deepcopy(GET_SCHEMA_1_10)
GET_SCHEMA_1_16['properties']['limit'] = {
    'type': ['integer', 'string'],
    'pattern': '^[1-9][0-9]*$',
    'minimum': 1,
    'minLength': 1,
}

GET_SCHEMA_1_17 = copy.deepcopy(GET_SCHEMA_1_16)
GET_SCHEMA_1_17['properties']['required'] = {'type': ['string']}

GET_SCHEMA_1_21 = copy.deepcopy(GET_SCHEMA_1_17)
GET_SCHEMA_1_21['properties']['member_of'] = {'type': ['string']}

GET_SCHEMA_1_25 = copy.deepcopy(GET_SCHEMA_1_21)
del GET_SCHEMA_1_25['properties']['resources']
del GET_SCHEMA_1_25['required']
del GET_SCHEMA_1_25['properties']['required']
del GET_SCHEMA_1_25['properties']['member_of']
GET_SCHEMA_1_25['patternProperties'] = {
    _GROUP_KEY % prefix: {'type': 'string'}
    for prefix in ('resources', 'required', 'member_of')}
GET_SCHEMA_1_25['properties']['group_policy'] = {
    'type': 'string',
    'enum': ['none', 'isolate'],
}

GET_SCHEMA_1_31 = copy.deepcopy(GET_SCHEMA_1_25)
GET_SCHEMA_1_31['patternProperties'][_GROUP_KEY % 'in_tree'] = {
    'type': 'string'}

GET_SCHEMA_1_33 = copy.deepcopy(GET_SCHEMA_1_31)
GET_SCHEMA_1_33['patternProperties'] = {
    _GROUP_KEY_1_33 % prefix: {'type': 'string'}
    for prefix in ('resources', 'required', 'member_of', 'in_tree')}

GET_SCHEMA_1_35 = copy.deepcopy(GET_SCHEMA_1_33)
GET_SCHEMA_1_35['properties']['root_required'] = {'type': ['string']}

GET_SCHEMA_1_36 = copy.deepcopy(GET_SCHEMA_1_35)
GET_SCHEMA_1_36['properties']['same_subtree'] = {'type': ['string']}
