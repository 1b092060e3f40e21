"""Property-based fuzzing of both APIs: no request ever gets a 5xx.

Hypothesis generates requests from each API's route table: every route
template with its placeholders filled by real identifiers, other UUIDs
or arbitrary (also invalid UTF-8) percent-encoded bytes; any method;
query strings of known and unknown parameters; version, content type and
accept headers valid or not; and bodies that are structured documents of
the API's field names, nested JSON with big numbers, NaN, lone
surrogates and NUL, deep bracket bombs or plain garbage. Each request
goes through the whole WSGI stack in process, on the database of
``ALLOC_TEST_DB_BACKEND``.

A response must not be a 5xx, and a JSON response must be strict JSON
(no NaN or Infinity). The runs are derandomized (the same examples every
time) and bounded by ``max_examples``; ``ALLOC_FUZZ_EXAMPLES`` scales
them (``ALLOC_FUZZ_EXAMPLES=20000`` for a long local run).
"""

import json
import os
import re
from urllib import parse

import hypothesis
from hypothesis import strategies as st
import webob

from alloc_framework.api.baremetal import handler as bm_handler
from alloc_framework.api.baremetal.schemas import node as bm_node_schema
from alloc_framework.api.placement import handler as pl_handler
from tests.functional.api.baremetal import base as bm_base
from tests.functional.api.placement import base as pl_base

EXAMPLES = int(os.environ.get('ALLOC_FUZZ_EXAMPLES', 1000))
SETTINGS = hypothesis.settings(
    max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
    print_blob=False,
    phases=(hypothesis.Phase.explicit, hypothesis.Phase.generate),
    suppress_health_check=list(hypothesis.HealthCheck))

METHODS = ('GET', 'PUT', 'POST', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS')
_PLACEHOLDER = re.compile(r'{([a-z_]+)}')

# Strings a fuzzer should try: Unicode edge cases and our own limits.
SPECIAL_TEXT = ('', '\x00', 'a\x00b', '\ud800', 'a\udfffb', '\u00e9',
                '\u2603', '\U0001f600', ' ', '%', '..', '/', '.json',
                'a' * 300, 'CUSTOM_X', 'VCPU', 'baremetal', 'NaN', 'null',
                '-1', '0', '2147483648', '99999999999999999999', 'in:',
                '!', 'true', 'latest', 'power on', '\n', '\t')

text = st.one_of(st.sampled_from(SPECIAL_TEXT), st.text(max_size=12))
numbers = st.one_of(
    st.integers(min_value=-3, max_value=3),
    st.sampled_from([2 ** 31 - 1, 2 ** 31, -2 ** 31 - 1, 2 ** 63,
                     10 ** 30, -10 ** 30]),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True))
scalars = st.one_of(st.none(), st.booleans(), numbers, text)


def json_values(keys):
    """Nested JSON values whose object keys are drawn from ``keys``."""
    return st.recursive(
        scalars,
        lambda children: st.one_of(
            st.lists(children, max_size=3),
            st.dictionaries(keys, children, max_size=4)),
        max_leaves=12)


def _dumps(value):
    # ensure_ascii escapes lone surrogates (\ud800) as JSON allows;
    # allow_nan writes NaN and Infinity, which the APIs must refuse.
    return json.dumps(value, ensure_ascii=True, allow_nan=True)


def _encode(value):
    """Text or bytes, percent-encoded for a URL."""
    if isinstance(value, str):
        value = value.encode('utf-8', 'surrogatepass')
    return parse.quote_from_bytes(value, safe='')


def bodies(fields, documents):
    """Request bodies (bytes) or None."""
    keys = st.one_of(st.sampled_from(fields), text)
    values = json_values(keys)
    return st.one_of(
        st.none(),
        documents(keys, values).map(_dumps),
        st.dictionaries(keys, values, max_size=6).map(_dumps),
        values.map(_dumps),
        st.integers(min_value=0, max_value=200).map(
            lambda n: '[' * n + ']' * n),
        st.integers(min_value=30, max_value=5000).map(
            lambda n: '{"a":' * n + '1' + '}' * n),
        st.binary(max_size=40),
    ).map(lambda body: body if body is None or isinstance(body, bytes)
          else body.encode('utf-8', 'surrogatepass'))


def query_strings(names):
    pair = st.tuples(
        st.one_of(st.sampled_from(names).map(_encode), text.map(_encode),
                  st.binary(max_size=4).map(_encode)),
        st.one_of(text.map(_encode), numbers.map(str).map(_encode),
                  st.binary(max_size=6).map(_encode)))
    return st.lists(pair, max_size=4).map(
        lambda pairs: '&'.join('%s=%s' % p for p in pairs))


class FuzzMixin:
    """Draws requests from a route table and checks the responses."""

    # Set by each API's test case.
    routes = None
    fields = ()
    query_names = ()
    version_header = None
    versions = ()
    headers = {}

    def documents(self, keys, values):
        return st.dictionaries(keys, values, max_size=6)

    def identifiers(self):
        """{placeholder: [real identifiers]} for the route templates."""
        return {}

    def _strategies(self):
        """The strategies of each part of a request, built once."""
        known = self.identifiers()
        segments = {}
        for template in self.routes:
            for name in _PLACEHOLDER.findall(template):
                real = known.get(name, [])
                # Real identifiers half of the time, to reach handlers.
                real = st.sampled_from(real) if real else st.nothing()
                segments[name] = st.one_of(
                    real, real, real, real, st.uuids().map(str),
                    st.uuids().map(lambda u: u.hex.upper()),
                    text.map(_encode), st.binary(max_size=8).map(_encode))
        return {
            'segments': segments,
            'query': query_strings(self.query_names),
            'body': bodies(self.fields, self.documents),
            'version': st.one_of(*[st.sampled_from(self.versions)] * 4,
                                 text),
        }

    def draw_request(self, data):
        if getattr(self, '_drawing', None) is None:
            self._drawing = self._strategies()
        strategies = self._drawing
        template = data.draw(st.sampled_from(sorted(self.routes)), 'route')

        def fill(match):
            segment = data.draw(strategies['segments'][match.group(1)],
                                match.group(1))
            return segment or 'x'

        path = _PLACEHOLDER.sub(fill, template)
        path += data.draw(st.sampled_from(['', '', '', '/', '.json', '/x',
                                           '%ff', '%00']), 'suffix')
        method = data.draw(st.one_of(
            st.sampled_from(sorted(self.routes[template])),
            st.sampled_from(METHODS)), 'method')
        query = data.draw(strategies['query'], 'query')
        body = data.draw(strategies['body'], 'body')
        headers = dict(self.headers)
        version = data.draw(strategies['version'], 'version')
        if version is not None:
            headers[self.version_header[0]] = self.version_header[1] % version
        content_type = data.draw(st.sampled_from(
            ['application/json'] * 6 + [
                'application/json; charset=utf-8', 'text/plain',
                'application/xml', '', 'garbage', None]), 'content_type')
        if content_type is not None and body is not None:
            headers['Content-Type'] = content_type
        accept = data.draw(st.sampled_from(
            [None, 'application/json', 'text/html', '*/*', 'garbage/x;q=x',
             'text/plain;q=0.5, application/json']), 'accept')
        if accept is not None:
            headers['Accept'] = accept
        return method, path, query, headers, body

    def check(self, data):
        method, path, query, headers, body = self.draw_request(data)
        req = webob.Request.blank('/', method=method)
        req.environ['PATH_INFO'] = parse.unquote_to_bytes(path).decode(
            'latin-1')
        req.environ['QUERY_STRING'] = query
        for name, value in headers.items():
            # WSGI headers are latin-1 strings.
            req.headers[name] = value.encode(
                'utf-8', 'surrogatepass').decode('latin-1')
        if body is not None:
            req.body = body
        resp = req.get_response(self.app)
        what = '%s %s?%s %r %r -> %s %s' % (
            method, path, query, headers, (body or b'')[:300],
            resp.status, resp.body[:500])
        self.assertLess(resp.status_int, 500, what)
        if resp.content_type == 'application/json' and resp.body:
            json.loads(resp.body, parse_constant=self._not_json)

    @staticmethod
    def _not_json(name):
        raise AssertionError('the response holds %s' % name)


class BaremetalFuzzTestCase(FuzzMixin, bm_base.BaremetalTestCase):

    routes = bm_handler.ROUTES
    fields = tuple(bm_node_schema.WRITABLE) + (
        'resource_class', 'traits', 'candidate_nodes', 'node', 'extra',
        'target', 'timeout', 'reason', 'clean_steps', 'op', 'path',
        'value', 'interface', 'step')
    query_names = ('fields', 'limit', 'marker', 'sort_key', 'sort_dir',
                   'detail', 'node', 'state', 'owner', 'lessee',
                   'resource_class', 'reason', 'driver', 'instance_uuid',
                   'associated', 'maintenance', 'provision_state', 'fault',
                   'conductor_group', 'retired')
    version_header = ('X-OpenStack-Ironic-API-Version', '%s')
    versions = (None, 'latest', '1.1', '1.52', '1.58', '1.60', '1.78',
                '1.99', '2.0', '1.x')

    def setUp(self):
        super().setUp()
        self.node = self.make_node(name='fuzz-node', resource_class='rc',
                                   traits=['CUSTOM_FUZZ'])
        resp = self.post('/v1/allocations', {'resource_class': 'rc',
                                             'name': 'fuzz-allocation'})
        self.allocation = resp.json['uuid']

    def identifiers(self):
        return {'node_ident': [self.node.uuid, 'fuzz-node'],
                'allocation_ident': [self.allocation, 'fuzz-allocation'],
                'trait': ['CUSTOM_FUZZ']}

    def documents(self, keys, values):
        patch = st.lists(st.fixed_dictionaries(
            {'op': st.sampled_from(['add', 'replace', 'remove', 'move']),
             'path': st.one_of(
                 st.sampled_from(self.fields).map('/{}'.format),
                 st.sampled_from(['/extra/a', '/extra', '/name', '/',
                                  '/properties/a/b'])),
             'value': values}), max_size=3)
        return st.one_of(patch, st.dictionaries(keys, values, max_size=6))

    @SETTINGS
    @hypothesis.given(data=st.data())
    def test_no_server_error(self, data):
        self.check(data)


class PlacementFuzzTestCase(FuzzMixin, pl_base.PlacementAppTestCase):

    routes = pl_handler.ROUTE_DECLARATIONS
    fields = ('name', 'uuid', 'parent_provider_uuid',
              'resource_provider_generation', 'inventories', 'total',
              'reserved', 'min_unit', 'max_unit', 'step_size',
              'allocation_ratio', 'allocations', 'resources',
              'resource_provider', 'project_id', 'user_id',
              'consumer_generation', 'consumer_type', 'traits',
              'aggregates', 'mappings', 'generation', 'resource_class',
              'VCPU', 'MEMORY_MB', 'CUSTOM_FUZZ')
    query_names = ('name', 'uuid', 'member_of', 'resources', 'in_tree',
                   'required', 'project_id', 'user_id', 'consumer_type',
                   'root_required', 'limit', 'group_policy', 'resources1',
                   'required1', 'member_of1', 'associated')
    version_header = ('OpenStack-API-Version', 'placement %s')
    headers = {'X-Auth-Token': 'admin'}
    versions = (None, 'latest', '1.0', '1.7', '1.8', '1.12', '1.13',
                '1.19', '1.28', '1.30', '1.34', '1.38', '1.39', '1.99',
                '2.0', 'x')
    provider = 'fa2e5c0d-8d13-4ac4-9d5e-4c1f6a2b7e39'
    consumer = 'c0a1b2c3-d4e5-4f60-8a7b-9c0d1e2f3a4b'

    def setUp(self):
        super().setUp()
        self.request('POST', '/resource_providers',
                     json={'name': 'fuzz', 'uuid': self.provider})
        self.request('PUT', '/resource_providers/%s/inventories'
                     % self.provider,
                     json={'resource_provider_generation': 0,
                           'inventories': {'VCPU': {'total': 8}}})
        self.request('PUT', '/allocations/%s' % self.consumer, json={
            'allocations': {self.provider: {'resources': {'VCPU': 1}}},
            'project_id': 'p', 'user_id': 'u', 'consumer_generation': None,
            'consumer_type': 'FUZZ'})
        self.app = self.load()

    def identifiers(self):
        return {'uuid': [self.provider],
                'consumer_uuid': [self.consumer],
                'resource_class': ['VCPU', 'CUSTOM_FUZZ'],
                'name': ['VCPU', 'CUSTOM_FUZZ', 'HW_CPU_X86_AVX']}

    def documents(self, keys, values):
        uuids = st.one_of(st.just(self.provider), st.uuids().map(str),
                          text)
        resources = st.dictionaries(
            st.one_of(st.sampled_from(['VCPU', 'MEMORY_MB', 'CUSTOM_FUZZ']),
                      text), numbers, max_size=3)
        allocations = st.fixed_dictionaries(
            {'allocations': st.one_of(
                st.dictionaries(uuids, st.fixed_dictionaries(
                    {'resources': resources}), max_size=3),
                st.lists(st.fixed_dictionaries(
                    {'resource_provider': st.fixed_dictionaries(
                        {'uuid': uuids}),
                     'resources': resources}), max_size=3))},
            optional={'project_id': text, 'user_id': text,
                      'consumer_generation': st.one_of(st.none(), numbers),
                      'consumer_type': text, 'mappings': values})
        inventory = st.fixed_dictionaries(
            {'resource_provider_generation': numbers},
            optional={'total': numbers, 'reserved': numbers,
                      'max_unit': numbers, 'allocation_ratio': numbers,
                      'inventories': st.dictionaries(
                          text, st.dictionaries(keys, numbers, max_size=3),
                          max_size=2)})
        return st.one_of(
            allocations, inventory,
            st.dictionaries(st.just(self.consumer), allocations),
            st.dictionaries(keys, values, max_size=6))

    @SETTINGS
    @hypothesis.given(data=st.data())
    def test_no_server_error(self, data):
        self.check(data)
