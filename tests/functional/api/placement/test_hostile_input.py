"""Hostile input to the Placement API gets a 4xx, never a 500.

Deep JSON, invalid UTF-8 and NUL in URLs, lone surrogates and NUL in
bodies, integers beyond the columns' range, bodies too large, and the
list form of allocations naming one provider twice.
"""

import json
from urllib import parse

import webob

from alloc_framework.api import strict_json
from tests.functional.api.placement import base

RP = 'abcdef11-2222-3333-4444-55555555cdef'
CONSUMER = 'aaaaaaaa-2222-3333-4444-555555555555'


def _nested(levels):
    value = 1
    for _ in range(levels):
        value = {'a': value}
    return value


class HostileInputTestCase(base.PlacementAppTestCase):

    def raw(self, method, path, body=None, version='latest',
            content_type='application/json'):
        """A request whose URL is sent as is (percent-encoded)."""
        if self.app is None:
            self.load()
        req = webob.Request.blank('/', method=method)
        path, _sep, query = path.partition('?')
        req.environ['PATH_INFO'] = parse.unquote_to_bytes(path).decode(
            'latin-1')
        req.environ['QUERY_STRING'] = query
        req.headers['X-Auth-Token'] = 'admin'
        req.headers['Accept'] = 'application/json'
        req.headers['OpenStack-API-Version'] = 'placement %s' % version
        if body is not None:
            if not isinstance(body, (str, bytes)):
                body = json.dumps(body)
            if isinstance(body, str):
                body = body.encode('utf-8', 'surrogatepass')
            req.body = body
            req.content_type = content_type
        return req.get_response(self.app)

    def assertError(self, resp, status, contains):
        self.assertEqual(status, resp.status_int, resp.text)
        error = resp.json['errors'][0]
        self.assertEqual(status, error['status'])
        self.assertIn(contains, error['detail'])
        return error

    def make_provider(self, total=4, max_unit=None):
        resp = self.raw('POST', '/resource_providers',
                        {'name': 'rp1', 'uuid': RP})
        self.assertEqual(200, resp.status_int, resp.text)
        inventory = {'total': total}
        if max_unit:
            inventory['max_unit'] = max_unit
        resp = self.raw('PUT', '/resource_providers/%s/inventories' % RP,
                        {'resource_provider_generation': 0,
                         'inventories': {'VCPU': inventory}})
        self.assertEqual(200, resp.status_int, resp.text)

    def providers(self):
        return self.raw('GET', '/resource_providers').json[
            'resource_providers']

    # --- 1: nesting ----------------------------------------------------------

    def test_deep_json_is_400(self):
        for body in (b'[' * 100000, b'{"a":' * 50000,
                     {'name': 'x', 'zz': _nested(400)}):
            resp = self.raw('POST', '/resource_providers', body)
            self.assertError(resp, 400, 'nested more than %d levels'
                             % strict_json.MAX_DEPTH)
        self.assertEqual([], self.providers())

    def test_unknown_property_within_the_limit(self):
        resp = self.raw('POST', '/resource_providers',
                        {'name': 'x', 'zz': _nested(30)})
        self.assertError(resp, 400, "'zz' was unexpected")

    # --- 2: URLs -------------------------------------------------------------

    def test_invalid_utf8_in_url_is_400(self):
        for path in ('/resource_providers/%ff%fe', '/traits/CUSTOM_%ED%A0%80',
                     '/resource_providers?name=%ff',
                     '/resource_providers?%ff=1',
                     '/usages?project_id=%ED%A0%80'):
            self.assertError(self.raw('GET', path), 400, 'not valid UTF-8')

    def test_nul_in_url_is_400(self):
        for path in ('/resource_providers?name=a%00b',
                     '/usages?project_id=a%00b', '/allocations/a%00b'):
            self.assertError(self.raw('GET', path), 400, 'NUL')

    def test_unicode_in_url_still_works(self):
        resp = self.raw('POST', '/resource_providers', {'name': '\u2603'})
        self.assertEqual(200, resp.status_int, resp.text)
        resp = self.raw('GET', '/resource_providers?name=%E2%98%83')
        self.assertEqual(['\u2603'], [rp['name'] for rp in
                                      resp.json['resource_providers']])

    # --- 3: lone surrogates and NUL ------------------------------------------

    def test_lone_surrogate_is_400_naming_the_field(self):
        resp = self.raw('POST', '/resource_providers', '{"name": "a\\ud800b"}')
        self.assertError(resp, 400, 'field /name')
        self.assertEqual([], self.providers())

    def test_nul_in_text_fields_is_400(self):
        resp = self.raw('POST', '/resource_providers', {'name': 'a\x00b'})
        self.assertError(resp, 400, "['name']")
        self.make_provider()
        resp = self.raw('PUT', '/resource_providers/%s' % RP,
                        {'name': 'b\x00'})
        self.assertError(resp, 400, "['name']")
        for field in ('project_id', 'user_id'):
            body = {'allocations': {RP: {'resources': {'VCPU': 1}}},
                    'project_id': 'p', 'user_id': 'u',
                    'consumer_generation': None, 'consumer_type': 'X'}
            body[field] = 'a\x00b'
            resp = self.raw('PUT', '/allocations/%s' % CONSUMER, body)
            self.assertError(resp, 400, "['%s']" % field)

    # --- 4: integers ---------------------------------------------------------

    def test_huge_amount_in_query_is_400(self):
        self.make_provider()
        for amount in ('99999999999999999999', '2147483648'):
            resp = self.raw('GET', '/resource_providers?resources=VCPU:%s'
                            % amount)
            self.assertError(resp, 400, 'requires amount <= 2147483647')
        resp = self.raw('GET',
                        '/resource_providers?resources=VCPU:2147483647')
        self.assertEqual([], resp.json['resource_providers'])
        resp = self.raw('GET', '/resource_providers?resources=VCPU:4')
        self.assertEqual(1, len(resp.json['resource_providers']))

    def test_integers_in_bodies_are_in_column_range(self):
        self.make_provider()
        huge = 2 ** 31
        allocation = {'allocations': {RP: {'resources': {'VCPU': huge}}},
                      'project_id': 'p', 'user_id': 'u',
                      'consumer_generation': None, 'consumer_type': 'X'}
        self.assertError(self.raw('PUT', '/allocations/%s' % CONSUMER,
                                  allocation), 400, 'VCPU')
        allocation['allocations'][RP]['resources']['VCPU'] = 1
        allocation['consumer_generation'] = huge
        self.assertError(self.raw('PUT', '/allocations/%s' % CONSUMER,
                                  allocation), 400, 'consumer_generation')
        for path, body in (
                ('/inventories', {'resource_provider_generation': huge,
                                  'inventories': {}}),
                ('/traits', {'resource_provider_generation': huge,
                             'traits': []}),
                ('/aggregates', {'resource_provider_generation': -huge - 1,
                                 'aggregates': []})):
            resp = self.raw('PUT', '/resource_providers/%s%s' % (RP, path),
                            body)
            self.assertError(resp, 400, 'resource_provider_generation')

    # --- 8: body size --------------------------------------------------------

    def test_body_too_large_is_413(self):
        self.config(max_request_body_size=100, group='oslo_middleware')
        resp = self.raw('POST', '/resource_providers', {'name': 'x' * 200})
        self.assertError(resp, 413, 'max_request_body_size')
        self.assertEqual([], self.providers())

    # --- 9: numbers ----------------------------------------------------------

    def test_nan_and_infinity_are_400(self):
        self.make_provider()
        for number in ('NaN', 'Infinity', '1e999999'):
            resp = self.raw('PUT', '/resource_providers/%s/inventories/VCPU'
                            % RP, '{"resource_provider_generation": 1, '
                            '"total": 4, "allocation_ratio": %s}' % number)
            self.assertError(resp, 400, 'allocation_ratio')

    # --- 11: a provider named twice ------------------------------------------

    def _put_list_form(self, entries, version='1.7'):
        body = {'allocations': [
            {'resource_provider': {'uuid': rp}, 'resources': resources}
            for rp, resources in entries]}
        return self.raw('PUT', '/allocations/%s' % CONSUMER, body,
                        version=version)

    def _usage(self):
        resp = self.raw('GET', '/allocations/%s' % CONSUMER)
        return {rp: entry['resources']
                for rp, entry in resp.json['allocations'].items()}

    def test_list_form_sums_a_provider_named_twice(self):
        self.make_provider(total=4)
        resp = self._put_list_form([(RP, {'VCPU': 3}),
                                    (RP.upper(), {'VCPU': 1})])
        self.assertEqual(204, resp.status_int, resp.text)
        self.assertEqual({RP: {'VCPU': 4}}, self._usage())

    def test_list_form_sum_is_checked_against_capacity(self):
        self.make_provider(total=4)
        resp = self._put_list_form([(RP, {'VCPU': 3}), (RP, {'VCPU': 3})])
        self.assertError(resp, 409, 'Unable to allocate inventory')
        self.assertEqual({}, self._usage())
        # max_unit applies to the sum too.
        resp = self.raw('PUT', '/resource_providers/%s/inventories/VCPU'
                        % RP, {'resource_provider_generation': 1,
                               'total': 4, 'max_unit': 2})
        self.assertEqual(200, resp.status_int, resp.text)
        resp = self._put_list_form([(RP, {'VCPU': 2}), (RP, {'VCPU': 1})],
                                   version='1.8')
        self.assertEqual(400, resp.status_int)  # 1.8 needs project/user
        resp = self._put_list_form([(RP, {'VCPU': 2}), (RP, {'VCPU': 1})])
        self.assertError(resp, 409, 'Unable to allocate inventory')

    def test_dict_form_refuses_one_provider_spelled_twice(self):
        self.make_provider(total=4)
        body = {'allocations': {RP: {'resources': {'VCPU': 1}},
                                RP.upper(): {'resources': {'VCPU': 1}}},
                'project_id': 'p', 'user_id': 'u',
                'consumer_generation': None, 'consumer_type': 'X'}
        resp = self.raw('PUT', '/allocations/%s' % CONSUMER, body)
        self.assertError(resp, 400, 'Resource provider %s is given more '
                         'than once' % RP)
        self.assertEqual({}, self._usage())
