"""``common.schema``: the compiled checks agree with jsonschema.

They may only say "valid" where jsonschema says so; a document they do
not accept goes to jsonschema, so the errors (and their messages) are
jsonschema's own. Every schema of both APIs is checked on mutations of
documents, valid and not, against jsonschema's answer.
"""

import copy
import importlib
import pkgutil
import random

import jsonschema

from alloc_framework.api.placement import content
from alloc_framework.api.placement.schemas import allocation
from alloc_framework.common import schema as schema_utils
from tests import base

CLAIM = {
    'allocations': {
        '8ad2f8a5-3c1f-4bd2-8d9e-9c3b7c1f2a10': {
            'resources': {'VCPU': 1, 'MEMORY_MB': 1024, 'DISK_GB': 20}},
    },
    'project_id': 'a-project', 'user_id': 'a-user',
    'consumer_generation': None, 'consumer_type': 'INSTANCE',
    'mappings': {'': ['8ad2f8a5-3c1f-4bd2-8d9e-9c3b7c1f2a10']},
}

# Values a mutation puts somewhere in a document.
ODD_VALUES = [None, True, False, 0, 1, -1, 1.0, 1.5, 2 ** 31, -2 ** 31 - 1,
              '', 'x', 'VCPU', 'not-a-uuid', '\x00', 'a' * 256,
              '8ad2f8a53c1f4bd28d9e9c3b7c1f2a10', [], [1], ['x'], {},
              {'VCPU': 1}, {'resources': {}}, {'x': None}]
ODD_KEYS = ['', 'x', 'VCPU', 'vcpu', 'resources', 'generation',
            'not-a-uuid', '8ad2f8a5-3c1f-4bd2-8d9e-9c3b7c1f2a11',
            'project_id', 'allocations', 'consumer_generation']


def _schemas():
    for name in ('alloc_framework.api.placement.schemas',
                 'alloc_framework.api.baremetal.schemas'):
        package = importlib.import_module(name)
        for found in pkgutil.iter_modules(package.__path__):
            module = importlib.import_module(name + '.' + found.name)
            for attr, value in sorted(vars(module).items()):
                if attr.isupper() and isinstance(value, dict) and (
                        'type' in value):
                    yield '%s.%s' % (found.name, attr), value


def _paths(doc, path=()):
    yield path
    if isinstance(doc, dict):
        for key, value in doc.items():
            yield from _paths(value, path + (key,))
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            yield from _paths(value, path + (i,))


def _mutate(doc, rng):
    doc = copy.deepcopy(doc)
    path = rng.choice(list(_paths(doc)))
    if not path:
        return rng.choice(ODD_VALUES + [doc])
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    action = rng.randrange(3)
    if action == 0:
        parent[path[-1]] = copy.deepcopy(rng.choice(ODD_VALUES))
    elif action == 1:
        del parent[path[-1]]
    elif isinstance(parent, dict):
        parent[rng.choice(ODD_KEYS)] = copy.deepcopy(rng.choice(ODD_VALUES))
    else:
        parent.append(copy.deepcopy(rng.choice(ODD_VALUES)))
    return doc


class FastCheckTestCase(base.TestCase):
    dialect_neutral = True

    def assertAgrees(self, schema, doc, checker, name=''):
        check = schema_utils.fast_check(schema, checker)
        valid = schema_utils.validator(schema, checker).is_valid(doc)
        if check(doc):
            self.assertTrue(valid, '%s accepted %r' % (name, doc))
        return valid

    def test_claim_body_is_accepted(self):
        schema = allocation.ALLOCATION_SCHEMA_V1_38
        checker = content._BODY_FORMAT_CHECKER
        self.assertTrue(schema_utils.fast_check(schema, checker)(CLAIM))

    def test_mutated_claims(self):
        rng = random.Random(1)
        schema = allocation.ALLOCATION_SCHEMA_V1_38
        checker = content._BODY_FORMAT_CHECKER
        docs, invalid = [CLAIM], 0
        for _ in range(3000):
            doc = _mutate(rng.choice(docs), rng)
            if not self.assertAgrees(schema, doc, checker):
                invalid += 1
            elif len(docs) < 50:
                docs.append(doc)
        # The mutations did find invalid documents.
        self.assertGreater(invalid, 1000)

    def test_every_schema(self):
        rng = random.Random(2)
        for name, schema in _schemas():
            check = schema_utils.fast_check(schema)
            if check is None:
                continue
            docs = [{}, CLAIM, {'name': 'x', 'uuid': CLAIM['consumer_type']}]
            for _ in range(200):
                doc = _mutate(rng.choice(docs), rng)
                if self.assertAgrees(schema, doc,
                                     schema_utils.FORMAT_CHECKER, name):
                    docs.append(doc)

    def test_most_schemas_compile(self):
        names = [name for name, schema in _schemas()
                 if schema_utils.fast_check(schema) is None]
        # uniqueItems is left to jsonschema.
        self.assertLessEqual(len(names), 3, names)

    def test_float_integer_left_to_jsonschema(self):
        schema = {'type': 'integer'}
        self.assertFalse(schema_utils.fast_check(schema)(1.0))
        schema_utils.validate(1.0, schema)

    def test_error_is_jsonschema_s(self):
        doc = copy.deepcopy(CLAIM)
        doc['allocations']['8ad2f8a5-3c1f-4bd2-8d9e-9c3b7c1f2a10'][
            'resources']['VCPU'] = 0
        schema = allocation.ALLOCATION_SCHEMA_V1_38
        checker = content._BODY_FORMAT_CHECKER
        expected = jsonschema.exceptions.best_match(
            jsonschema.Draft202012Validator(
                schema, format_checker=checker).iter_errors(doc))
        with self.assertRaises(jsonschema.ValidationError) as raised:
            schema_utils.validate(doc, schema, format_checker=checker)
        self.assertEqual(str(expected), str(raised.exception))

    def test_unknown_keyword_not_compiled(self):
        self.assertIsNone(schema_utils.fast_check(
            {'type': 'array', 'uniqueItems': True}))
