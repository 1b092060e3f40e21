"""Query-string parsing and validation of the Placement API."""

import testtools
import webob.exc

from alloc_framework.api.placement import query
from tests.unit.api.placement import fakes

_req = fakes.request

AGG1 = '2f1b4f1e-6a43-4a3b-9a5e-5a9c3d3a1a11'
AGG2 = '8d3f1e2a-1c5e-4b0b-8e7e-0c1e2d3f4a22'


class ResourcesTestCase(testtools.TestCase):

    def test_good(self):
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 1024},
                         query.normalize_resources_qs_param(
                             'VCPU:2,MEMORY_MB:1024'))

    def test_trailing_comma_reports_the_empty_part(self):
        exc = self.assertRaises(webob.exc.HTTPBadRequest,
                                query.normalize_resources_qs_param,
                                'DISK_GB:500,')
        self.assertIn('Got: .', str(exc))

    def test_bad(self):
        for value in ('', 'VCPU', 'VCPU:x', 'VCPU:0', 'VCPU:-1',
                      'VCPU:1:2'):
            self.assertRaises(webob.exc.HTTPBadRequest,
                              query.normalize_resources_qs_param, value)


class TraitsTestCase(testtools.TestCase):

    def test_required_and_forbidden(self):
        required, forbidden = query.normalize_traits_qs_param(
            'A,!B,C', allow_forbidden=True)
        self.assertEqual([{'A'}, {'C'}], required)
        self.assertEqual({'B'}, forbidden)

    def test_forbidden_before_1_22_is_malformed(self):
        exc = self.assertRaises(webob.exc.HTTPBadRequest,
                                query.normalize_traits_qs_param, '!B')
        self.assertIn('HW_CPU_X86_VMX,CUSTOM_MAGIC. Got: !B', str(exc))

    def test_expected_form_shows_forbidden_from_1_22(self):
        exc = self.assertRaises(webob.exc.HTTPBadRequest,
                                query.normalize_traits_qs_param, '',
                                allow_forbidden=True)
        self.assertIn('HW_CPU_X86_VMX,!CUSTOM_MAGIC', str(exc))

    def test_in_before_1_39(self):
        exc = self.assertRaises(webob.exc.HTTPBadRequest,
                                query.normalize_traits_qs_param, 'in:A,B',
                                allow_forbidden=True)
        self.assertIn('only supported since microversion 1.39', str(exc))

    def test_any_of(self):
        required, forbidden = query.normalize_traits_qs_param(
            'in:A,B', allow_any_traits=True)
        self.assertEqual([{'A', 'B'}], required)
        self.assertRaises(webob.exc.HTTPBadRequest,
                          query.normalize_traits_qs_param, 'in:A,!B',
                          allow_forbidden=True, allow_any_traits=True)

    def test_empty_name(self):
        self.assertRaises(webob.exc.HTTPBadRequest,
                          query.normalize_traits_qs_param, 'A,,B')

    def test_repeated_from_1_39(self):
        req = _req('required=A&required=in:B,C&required=!D')
        required, forbidden = query.normalize_traits_qs_params(
            req, allow_forbidden=True, allow_any_traits=True)
        self.assertEqual([{'A'}, {'B', 'C'}], required)
        self.assertEqual({'D'}, forbidden)
        # Before 1.39 only the last value counts.
        required, forbidden = query.normalize_traits_qs_params(
            req, allow_forbidden=True)
        self.assertEqual([], required)
        self.assertEqual({'D'}, forbidden)


class MemberOfTestCase(testtools.TestCase):

    def test_single_and_in(self):
        required, forbidden = query.normalize_member_of_qs_params(
            _req('member_of=%s&member_of=in:%s,%s' % (AGG1, AGG1, AGG2)))
        self.assertEqual([{AGG1}, {AGG1, AGG2}], required)
        self.assertEqual(set(), forbidden)

    def test_multiple_before_1_24(self):
        self.assertRaises(webob.exc.HTTPBadRequest,
                          query.normalize_member_of_qs_params,
                          _req('member_of=%s&member_of=%s' % (AGG1, AGG2),
                               version='1.23'))

    def test_forbidden_from_1_32(self):
        required, forbidden = query.normalize_member_of_qs_params(
            _req('member_of=!in:%s,%s' % (AGG1, AGG2)))
        self.assertEqual([], required)
        self.assertEqual({AGG1, AGG2}, forbidden)
        exc = self.assertRaises(
            webob.exc.HTTPBadRequest, query.normalize_member_of_qs_params,
            _req('member_of=!%s' % AGG1, version='1.31'))
        self.assertIn('Forbidden member_of parameters are not supported',
                      str(exc))

    def test_list_without_in(self):
        self.assertRaises(webob.exc.HTTPBadRequest,
                          query.normalize_member_of_qs_params,
                          _req('member_of=%s,%s' % (AGG1, AGG2)))

    def test_not_a_uuid(self):
        self.assertRaises(webob.exc.HTTPBadRequest,
                          query.normalize_member_of_qs_params,
                          _req('member_of=in:nope'))


class InTreeTestCase(testtools.TestCase):

    def test_in_tree(self):
        self.assertEqual(AGG1, query.normalize_in_tree_qs_params(AGG1))
        self.assertRaises(webob.exc.HTTPBadRequest,
                          query.normalize_in_tree_qs_params, 'x')


class ValidateTestCase(testtools.TestCase):

    def test_validate_query_params(self):
        schema = {'type': 'object',
                  'properties': {'limit': {'type': 'string',
                                           'pattern': '^[1-9][0-9]*$'}},
                  'additionalProperties': False}
        query.validate_query_params(_req('limit=3'), schema)
        exc = self.assertRaises(webob.exc.HTTPBadRequest,
                                query.validate_query_params,
                                _req('limit=0'), schema)
        self.assertIn('limit', str(exc))
