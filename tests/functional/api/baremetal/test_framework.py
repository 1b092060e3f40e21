"""Version documents, version negotiation, errors, suffixes, request ids."""

from oslo_middleware import http_proxy_to_wsgi

from tests.functional.api.baremetal import base

# The newest version served, and the first that is not.
MAX = '1.115'
BEYOND = '1.116'


class TestVersions(base.BaremetalTestCase):
    with_conductor = False

    def test_root_document(self):
        resp = self.get('/', version=None, status=200)
        body = resp.json_body
        self.assertEqual('v1', body['default_version']['id'])
        self.assertEqual('1.1', body['default_version']['min_version'])
        self.assertEqual(MAX, body['default_version']['version'])
        self.assertEqual('CURRENT', body['default_version']['status'])
        self.assertEqual([body['default_version']], body['versions'])
        self.assertEqual('http://localhost/v1/',
                         body['versions'][0]['links'][0]['href'])

    def test_v1_document(self):
        resp = self.get('/v1', status=200)
        body = resp.json_body
        self.assertEqual('v1', body['id'])
        self.assertEqual('application/vnd.openstack.ironic.v1+json',
                         body['media_types'][0]['type'])
        self.assertEqual(MAX, body['version']['version'])
        self.assertEqual('1.1', body['version']['min_version'])
        self.assertIn('nodes', body)
        self.assertIn('allocations', body)
        self.assertEqual('1.1', resp.headers[
            'X-OpenStack-Ironic-API-Minimum-Version'])
        self.assertEqual(MAX, resp.headers[
            'X-OpenStack-Ironic-API-Maximum-Version'])
        self.assertEqual(MAX, resp.headers[
            'X-OpenStack-Ironic-API-Version'])

    def test_allocations_link_needs_1_52(self):
        body = self.get('/v1', version='1.51', status=200).json_body
        self.assertNotIn('allocations', body)

    def test_default_version_is_minimum(self):
        resp = self.get('/v1', version=None, status=200)
        self.assertEqual('1.1', resp.headers['X-OpenStack-Ironic-API-Version'])

    def test_explicit_version(self):
        resp = self.get('/v1', version='1.60', status=200)
        self.assertEqual('1.60',
                         resp.headers['X-OpenStack-Ironic-API-Version'])

    def test_generic_header(self):
        resp = self.get('/v1', version=None, status=200,
                        headers={'OpenStack-API-Version': 'baremetal 1.58'})
        self.assertEqual('1.58',
                         resp.headers['X-OpenStack-Ironic-API-Version'])

    def test_version_too_high_is_406(self):
        resp = self.get('/v1/nodes', version=BEYOND)
        self.assertError(resp, 406, 'baremetal.version_not_acceptable',
                         BEYOND)
        self.assertEqual(MAX, resp.headers[
            'X-OpenStack-Ironic-API-Maximum-Version'])

    def test_version_zero_and_other_major_are_406(self):
        self.assertError(self.get('/v1', version='1.0'), 406)
        self.assertError(self.get('/v1', version='2.1'), 406)

    def test_malformed_version_is_400(self):
        self.assertError(self.get('/v1', version='one'), 400,
                         'baremetal.version_invalid')

    def test_json_suffix_up_to_1_90(self):
        resp = self.get('/v1.json', version='1.90', status=200)
        self.assertEqual('v1', resp.json_body['id'])
        resp = self.get('/v1/nodes.json', version='1.90', status=200)
        self.assertEqual([], resp.json_body['nodes'])
        resp = self.get('/v1/nodes/detail.json', version='1.90',
                        status=200)
        self.assertEqual([], resp.json_body['nodes'])
        resp = self.get('/v1/allocations.json', version='1.90', status=200)
        self.assertEqual([], resp.json_body['allocations'])

    def test_no_json_suffix_from_1_91(self):
        """Upstream 1.91 ends the special treatment of ``.json``."""
        for path in ('/v1/nodes.json', '/v1/nodes/detail.json',
                     '/v1/allocations.json'):
            self.assertError(self.get(path, version='1.91'), 404)
            self.assertError(self.get(path), 404)

    def test_request_id(self):
        resp = self.get('/v1', status=200)
        self.assertTrue(resp.headers['X-OpenStack-Request-Id'].startswith(
            'req-'))


class TestErrors(base.BaremetalTestCase):
    with_conductor = False

    def test_unknown_path_is_404(self):
        self.assertError(self.get('/v1/nothing'), 404, 'baremetal.not_found')

    def test_method_not_allowed(self):
        resp = self.request('PUT', '/v1/nodes')
        self.assertError(resp, 405, 'baremetal.method_not_allowed')
        self.assertEqual('GET, POST', resp.headers['Allow'])

    def test_allocations_before_1_52_are_404(self):
        self.assertError(self.get('/v1/allocations', version='1.51'), 404)

    def test_invalid_json(self):
        resp = self.request('POST', '/v1/allocations', raw=b'{nope')
        self.assertError(resp, 400, 'baremetal.invalid_json')

    def test_body_not_object(self):
        resp = self.post('/v1/allocations', [1, 2])
        self.assertError(resp, 400, 'baremetal.invalid_body')

    def test_unexpected_error_is_500_without_traceback(self):
        from alloc_framework.objects.baremetal import node as node_obj

        def boom(*a, **kw):
            raise RuntimeError('secret internals')

        self.patch_obj = self.useFixture(__import__('fixtures').MonkeyPatch(
            'alloc_framework.objects.baremetal.node.Node.list', boom))
        resp = self.get('/v1/nodes')
        fault = self.assertError(resp, 500, 'baremetal.internal_error')
        self.assertNotIn('secret', resp.text)
        self.assertNotIn('Traceback', fault['faultstring'])
        self.assertIsNotNone(node_obj)


class TestPolicySample(base.BaremetalTestCase):
    with_conductor = False

    def test_rules_have_upstream_names(self):
        from alloc_framework.api.baremetal import policies
        names = {rule.name for rule in policies.list_rules()}
        for name in ('baremetal:node:get', 'baremetal:node:create',
                     'baremetal:node:list', 'baremetal:node:list_all',
                     'baremetal:node:update', 'baremetal:node:delete',
                     'baremetal:allocation:create',
                     'baremetal:allocation:get',
                     'baremetal:allocation:list',
                     'baremetal:allocation:list_all',
                     'baremetal:allocation:delete',
                     'baremetal:allocation:update',
                     'baremetal:allocation:create_restricted',
                     'baremetal:node:history:get'):
            self.assertIn(name, names)

    def test_enforcer_entry_point(self):
        import fixtures

        from alloc_framework.api.baremetal import policy
        self.useFixture(fixtures.MonkeyPatch(
            'sys.argv', ['oslopolicy-policy-generator', '--namespace',
                         'alloc_framework.baremetal']))
        enforcer = policy.get_oslo_policy_enforcer()
        enforcer.load_rules()
        self.assertIn('baremetal:allocation:create', enforcer.rules)


class TestCORS(base.BaremetalTestCase):
    with_conductor = False

    def setUp(self):
        super().setUp()
        self.config(allowed_origin=['http://example.com'], group='cors')
        from alloc_framework.api.baremetal import app as bm_app
        self.app = bm_app.setup_app(self.conf)

    def test_preflight(self):
        resp = self.request('OPTIONS', '/v1/nodes', headers={
            'Origin': 'http://example.com',
            'Access-Control-Request-Method': 'GET'})
        self.assertEqual(200, resp.status_int)
        self.assertEqual('http://example.com',
                         resp.headers['Access-Control-Allow-Origin'])

    def test_simple_request_exposes_version_headers(self):
        resp = self.get('/v1', headers={'Origin': 'http://example.com'},
                        status=200)
        self.assertEqual('http://example.com',
                         resp.headers['Access-Control-Allow-Origin'])
        self.assertIn('X-OpenStack-Ironic-API-Version',
                      resp.headers['Access-Control-Expose-Headers'])


class TestOptionalMiddleware(base.BaremetalTestCase):
    """CORS and proxy headers are in the stack only when configured."""
    with_conductor = False

    def _app(self, **overrides):
        from alloc_framework.api.baremetal import app as bm_app
        self.conf.register_opts(http_proxy_to_wsgi.OPTS,
                                group='oslo_middleware')
        for group, values in overrides.items():
            for name, value in values.items():
                self.config(**{name: value, 'group': group})
        self.app = bm_app.setup_app(self.conf)

    def test_no_cors_headers_without_allowed_origin(self):
        self._app()
        resp = self.get('/v1', headers={'Origin': 'http://example.com'},
                        status=200)
        self.assertNotIn('Access-Control-Allow-Origin', resp.headers)

    def test_proxy_headers_ignored_unless_enabled(self):
        self._app()
        resp = self.get('/v1', headers={'X-Forwarded-Proto': 'https',
                                        'X-Forwarded-Host': 'api.example'},
                        status=200)
        self.assertTrue(resp.json_body['links'][0]['href'].startswith(
            'http://localhost'), resp.json_body['links'])

    def test_proxy_headers_parsed_when_enabled(self):
        self._app(oslo_middleware={'enable_proxy_headers_parsing': True})
        resp = self.get('/v1', headers={'X-Forwarded-Proto': 'https',
                                        'X-Forwarded-Host': 'api.example'},
                        status=200)
        self.assertTrue(resp.json_body['links'][0]['href'].startswith(
            'https://api.example/'), resp.json_body['links'])
