"""Strict JSON bodies: nesting limit, numbers, Unicode."""

from alloc_framework.api import strict_json
from tests import base


class LoadsTestCase(base.TestCase):

    def assertRefused(self, text, contains, field=None):
        exc = self.assertRaises(strict_json.InvalidJSON, strict_json.loads,
                                text)
        self.assertIn(contains, str(exc))
        self.assertEqual(field, exc.field)
        return exc

    def test_documents_within_the_limits(self):
        deepest = '[' * strict_json.MAX_DEPTH + ']' * strict_json.MAX_DEPTH
        self.assertEqual(strict_json.MAX_DEPTH,
                         strict_json.depth(strict_json.loads(deepest)))
        self.assertEqual({'a': ['[[[[', 1.5, 'é', '\u2603', None]},
                         strict_json.loads(
                             b'{"a": ["[[[[", 1.5, "\\u00e9", "\xe2\x98\x83",'
                             b' null]}'))
        self.assertEqual(2 ** 70, strict_json.loads(str(2 ** 70)))

    def test_too_deep(self):
        for text in ('[' * 100000, '{"a":' * 50000,
                     '[' * (strict_json.MAX_DEPTH + 1)
                     + ']' * (strict_json.MAX_DEPTH + 1)):
            self.assertRefused(text, 'nested more than 32 levels')

    def test_brackets_in_strings_do_not_count(self):
        text = '{"a": "%s"}' % ('[' * 1000)
        self.assertEqual({'a': '[' * 1000}, strict_json.loads(text))
        escaped = '["\\"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["]'
        self.assertEqual(1, len(strict_json.loads(escaped)))

    def test_not_finite_numbers_name_the_field(self):
        self.assertRefused('{"a": {"b": NaN}}', 'field /a/b: nan is not a '
                           'valid JSON number', field='/a/b')
        self.assertRefused('[1, Infinity]', 'field /1: inf', field='/1')
        self.assertRefused('{"x": -Infinity}', '-inf', field='/x')
        self.assertRefused('{"x": 1e999999}', 'field /x: inf', field='/x')

    def test_lone_surrogates_name_the_field(self):
        self.assertRefused('{"description": "a\\ud800b"}',
                           "field /description: 'a\\ud800b' is not valid "
                           "Unicode", field='/description')
        self.assertRefused('{"e": {"k/~": ["\\udfff"]}}', '/e/k~1~0/0',
                           field='/e/k~1~0/0')
        self.assertRefused('{"e": {"\\ud800": 1}}', 'The key', field='/e')
        # A well-formed pair is one character.
        self.assertEqual(['\U0001f600'],
                         strict_json.loads('["\\ud83d\\ude00"]'))

    def test_syntax_and_encoding(self):
        self.assertRefused(b'{"a": \xff}', "can't decode byte 0xff")
        self.assertRefused('{"a": 1', 'Expecting')
        self.assertRefused('1' * 5000, 'Exceeds the limit')

    def test_check_depth_of_built_documents(self):
        doc = {'a': 1}
        for _ in range(strict_json.MAX_DEPTH - 1):
            doc = {'a': doc}
        strict_json.check_depth(doc)
        self.assertRaises(strict_json.InvalidJSON, strict_json.check_depth,
                          [doc])
