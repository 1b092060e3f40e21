"""Hostile input to the bare metal API gets a 4xx, never a 500.

Each test names the defect it guards against: deep JSON, invalid UTF-8 in
URLs, lone surrogates and NUL, numbers JSON cannot represent, bodies too
large or not JSON, UUID spellings and the power timeout.
"""

import json
from urllib import parse

import webob

from alloc_framework.api import strict_json
from alloc_framework.objects.baremetal import node as node_obj
from tests.functional.api.baremetal import base

DEEP = strict_json.MAX_DEPTH


def _nested(levels):
    value = 1
    for _ in range(levels):
        value = {'a': value}
    return value


class HostileInputTestCase(base.BaremetalTestCase):

    def raw(self, method, path, body=None, content_type='application/json',
            version=base.LATEST):
        """A request whose URL is sent as is (percent-encoded)."""
        req = webob.Request.blank('/', method=method)
        path, _sep, query = path.partition('?')
        req.environ['PATH_INFO'] = parse.unquote_to_bytes(path).decode(
            'latin-1')
        req.environ['QUERY_STRING'] = query
        req.headers['X-OpenStack-Ironic-API-Version'] = version
        if body is not None:
            if isinstance(body, str):
                body = body.encode('utf-8', 'surrogatepass')
            req.body = body
            if content_type is not None:
                req.content_type = content_type
        return req.get_response(self.app)

    def create(self, **fields):
        fields.setdefault('driver', 'fake-hardware')
        return self.raw('POST', '/v1/nodes', json.dumps(fields))

    # --- 1: nesting ----------------------------------------------------------

    def test_deep_json_is_400(self):
        for body in (b'[' * 100000, b'{"a":' * 50000,
                     json.dumps({'driver': 'fake-hardware',
                                 'extra': _nested(900)})):
            for method, path in (('POST', '/v1/nodes'),
                                 ('POST', '/v1/allocations')):
                resp = self.raw(method, path, body)
                self.assertError(resp, 400, 'baremetal.invalid_json',
                                 'nested more than %d levels' % DEEP)
        self.assertEqual([], node_obj.Node.list(self.context))

    def test_nesting_limit(self):
        # The body itself is one level: extra may nest DEEP - 1 more.
        resp = self.create(extra=_nested(DEEP - 1))
        self.assertEqual(201, resp.status_int, resp.text)
        self.assertEqual(_nested(DEEP - 1), resp.json['extra'])
        self.assertEqual(400, self.create(extra=_nested(DEEP)).status_int)

    def test_patch_cannot_grow_beyond_the_nesting_limit(self):
        node = self.make_node(extra=_nested(DEEP - 2))
        path = '/extra' + '/a' * (DEEP - 2)
        resp = self.patch('/v1/nodes/%s' % node.uuid,
                          [{'op': 'replace', 'path': path,
                            'value': _nested(DEEP - 2)}])
        self.assertError(resp, 400, 'baremetal.invalid_patch',
                         'nested more than %d levels' % DEEP)
        self.assertEqual(_nested(DEEP - 2),
                         self.get('/v1/nodes/%s' % node.uuid).json['extra'])

    # --- 2: URLs -------------------------------------------------------------

    def test_invalid_utf8_in_url_is_400(self):
        for path in ('/v1/nodes/%ff%fe', '/v1/allocations/%C0%AE',
                     '/v1/nodes?driver=%ff', '/v1/nodes?%ff=1',
                     '/v1/allocations?owner=%ED%A0%80'):
            self.assertError(self.raw('GET', path), 400,
                             'baremetal.invalid_url', 'not valid UTF-8')

    def test_nul_in_url_is_400(self):
        for path in ('/v1/nodes?owner=a%00b', '/v1/nodes?driver=a%00b',
                     '/v1/allocations?resource_class=a%00b',
                     '/v1/nodes/a%00b'):
            self.assertError(self.raw('GET', path), 400,
                             'baremetal.invalid_url', 'NUL')

    def test_unicode_in_url_still_works(self):
        node = self.make_node(owner='\u2603')
        resp = self.raw('GET', '/v1/nodes?owner=%E2%98%83')
        self.assertEqual([node.uuid], [n['uuid'] for n in resp.json['nodes']])

    # --- 3: lone surrogates and NUL ------------------------------------------

    def test_lone_surrogate_is_400_naming_the_field(self):
        for field in ('description', 'owner', 'lessee', 'resource_class',
                      'maintenance_reason', 'protected_reason',
                      'retired_reason'):
            resp = self.raw('POST', '/v1/nodes',
                            '{"driver": "fake-hardware", "%s": "a\\ud800b"}'
                            % field)
            self.assertError(resp, 400, 'baremetal.invalid_field',
                             'field /%s' % field)
        for field in ('resource_class', 'owner'):
            resp = self.raw('POST', '/v1/allocations',
                            '{"resource_class": "rc", "%s": "a\\ud800b"}'
                            % field)
            self.assertError(resp, 400, 'baremetal.invalid_field',
                             'field /%s' % field)
        node = self.make_node()
        resp = self.raw('PATCH', '/v1/nodes/%s' % node.uuid,
                        '[{"op": "add", "path": "/description", '
                        '"value": "\\udc00"}]')
        self.assertError(resp, 400, 'baremetal.invalid_field',
                         'field /0/value')
        self.assertEqual(1, len(node_obj.Node.list(self.context)))

    def test_nul_in_text_fields_is_400(self):
        for field in ('description', 'owner', 'lessee', 'resource_class',
                      'maintenance_reason', 'protected_reason',
                      'retired_reason', 'driver', 'deploy_interface'):
            resp = self.create(**{field: 'a\x00b'})
            self.assertError(resp, 400, 'baremetal.invalid_field', field)
        for field in ('resource_class', 'owner'):
            body = {'resource_class': 'rc', field: 'a\x00b'}
            self.assertError(self.post('/v1/allocations', body), 400,
                             'baremetal.invalid_field', field)
        node = self.make_node()
        self.assertError(self.put('/v1/nodes/%s/maintenance' % node.uuid,
                                  {'reason': 'a\x00b'}),
                         400, 'baremetal.invalid_field', 'reason')
        # JSON fields store NUL escaped: it stays accepted there.
        resp = self.create(extra={'a\x00': 'b\x00'})
        self.assertEqual(201, resp.status_int, resp.text)
        self.assertEqual({'a\x00': 'b\x00'}, resp.json['extra'])

    # --- 8: body size --------------------------------------------------------

    def test_body_too_large_is_413(self):
        self.config(max_request_body_size=4096, group='oslo_middleware')
        resp = self.create(extra={'a': 'x' * 5000})
        self.assertError(resp, 413, 'baremetal.request_too_large',
                         'max_request_body_size')
        self.assertEqual([], node_obj.Node.list(self.context))
        self.assertEqual(201, self.create(extra={'a': 'x' * 3000}).status_int)

    def test_default_body_size_limit(self):
        resp = self.create(extra={'a': 'x' * (1024 * 1024)})
        self.assertError(resp, 413, 'baremetal.request_too_large')

    # --- 9: numbers ----------------------------------------------------------

    def test_nan_and_infinity_are_400(self):
        for number in ('NaN', 'Infinity', '-Infinity', '1e999999'):
            resp = self.raw('POST', '/v1/nodes',
                            '{"driver": "fake-hardware", '
                            '"extra": {"a": %s}}' % number)
            self.assertError(resp, 400, 'baremetal.invalid_field',
                             'field /extra/a')
        self.assertEqual([], node_obj.Node.list(self.context))

    # --- 12: content type ----------------------------------------------------

    def test_body_that_is_not_json_is_415(self):
        body = json.dumps({'driver': 'fake-hardware'})
        for content_type in ('text/plain', 'application/xml', 'garbage',
                             None):
            resp = self.raw('POST', '/v1/nodes', body,
                            content_type=content_type)
            self.assertError(resp, 415, 'baremetal.unsupported_media_type',
                             'The media type %s is not supported'
                             % content_type)
        node = self.make_node()
        resp = self.raw('PATCH', '/v1/nodes/%s' % node.uuid,
                        '[{"op": "add", "path": "/extra/a", "value": 1}]',
                        content_type='text/plain')
        self.assertError(resp, 415, 'baremetal.unsupported_media_type')
        self.assertEqual(1, len(node_obj.Node.list(self.context)))

    def test_json_with_parameters_is_accepted(self):
        resp = self.raw('POST', '/v1/nodes', '{"driver": "fake-hardware"}',
                        content_type='application/json; charset=UTF-8')
        self.assertEqual(201, resp.status_int, resp.text)

    # --- 10: UUID spellings --------------------------------------------------

    def test_uuid_spellings_name_one_node(self):
        uuid = 'a9d1c6be-60d5-4a8f-9c11-4cfe4e1b7c3d'
        spellings = (uuid.upper(), uuid.replace('-', ''), '{%s}' % uuid,
                     'urn:uuid:' + uuid.upper())
        resp = self.create(uuid=spellings[0])
        self.assertEqual(201, resp.status_int, resp.text)
        self.assertEqual(uuid, resp.json['uuid'])
        for spelling in spellings[1:]:
            self.assertEqual(409, self.create(uuid=spelling).status_int)
        self.assertEqual(1, len(node_obj.Node.list(self.context)))
        for spelling in (uuid,) + spellings[:3]:
            resp = self.raw('GET', '/v1/nodes/%s' % parse.quote(spelling))
            self.assertEqual(200, resp.status_int, spelling)
            self.assertEqual(uuid, resp.json['uuid'])
        resp = self.patch('/v1/nodes/%s' % uuid.upper(),
                          [{'op': 'add', 'path': '/instance_uuid',
                            'value': uuid.replace('-', '').upper()}])
        self.assertEqual(uuid, resp.json['instance_uuid'])
        resp = self.get('/v1/nodes?instance_uuid=%s' % uuid.upper())
        self.assertEqual([uuid], [n['uuid'] for n in resp.json['nodes']])
        resp = self.get('/v1/nodes?marker=%s' % uuid.upper())
        self.assertEqual(200, resp.status_int, resp.text)

    def test_allocation_uuid_spellings(self):
        node = self.make_node(resource_class='rc')
        uuid = 'b3c1f7a2-0d4e-4b6a-8f1c-2e9d7a5b4c3f'
        resp = self.post('/v1/allocations',
                         {'resource_class': 'rc', 'uuid': uuid.upper(),
                          'candidate_nodes': [node.uuid.upper()]})
        self.assertEqual(201, resp.status_int, resp.text)
        self.assertEqual(uuid, resp.json['uuid'])
        self.assertEqual([node.uuid], resp.json['candidate_nodes'])
        for spelling in (uuid, uuid.upper(), uuid.replace('-', '')):
            resp = self.get('/v1/allocations/%s' % spelling)
            self.assertEqual(200, resp.status_int, spelling)
        resp = self.post('/v1/allocations',
                         {'resource_class': 'rc',
                          'uuid': uuid.replace('-', '')})
        self.assertEqual(409, resp.status_int, resp.text)

    # --- 14: power timeout and resource class --------------------------------

    def test_power_timeout_is_a_positive_integer(self):
        node = self.make_node()
        path = '/v1/nodes/%s/states/power' % node.uuid
        for timeout in (-1, 0, 'x', 1.5, True, 2 ** 31, [], '1e3'):
            resp = self.put(path, {'target': 'power on',
                                   'timeout': timeout})
            self.assertError(resp, 400, 'baremetal.invalid_field',
                             'Invalid timeout')
        for timeout in (1, '30', 2 ** 31 - 1, None):
            resp = self.put(path, {'target': 'power on',
                                   'timeout': timeout})
            self.assertEqual(202, resp.status_int, resp.text)

    def test_power_timeout_needs_1_27(self):
        node = self.make_node()
        path = '/v1/nodes/%s/states/power' % node.uuid
        resp = self.put(path, {'target': 'power on', 'timeout': 10},
                        version='1.26')
        self.assertError(resp, 406, 'baremetal.version_not_acceptable',
                         'timeout')
        resp = self.put(path, {'target': 'power on'}, version='1.26')
        self.assertEqual(202, resp.status_int, resp.text)
        resp = self.put(path, {'target': 'power on', 'timeout': 10},
                        version='1.27')
        self.assertEqual(202, resp.status_int, resp.text)

    def test_resource_class_is_printable_ascii(self):
        for value in ('a\x00b', '\u00e9t\u00e9', 'tab\there', 'nl\n'):
            self.assertError(self.create(resource_class=value), 400,
                             'baremetal.invalid_field', 'resource_class')
            resp = self.post('/v1/allocations', {'resource_class': value})
            self.assertError(resp, 400, 'baremetal.invalid_field',
                             'resource_class')
        node = self.make_node()
        resp = self.patch('/v1/nodes/%s' % node.uuid,
                          [{'op': 'replace', 'path': '/resource_class',
                            'value': 'caf\u00e9'}])
        self.assertError(resp, 400, 'baremetal.invalid_field',
                         'resource_class')
        for value in ('baremetal', 'bm.gold-2_x', 'CUSTOM_GPU', 'a b'):
            self.assertEqual(201,
                             self.create(resource_class=value).status_int)
