"""CORS set-up shared by the bare metal and Placement APIs."""

from oslo_middleware import cors
import webob

from alloc_framework.api import middleware
from tests import base

ORIGIN = 'https://dashboard.example'


def _app(environ, start_response):
    return webob.Response('ok')(environ, start_response)


def _preflight(app, header):
    return webob.Request.blank('/', method='OPTIONS', headers={
        'Origin': ORIGIN, 'Access-Control-Request-Method': 'GET',
        'Access-Control-Request-Headers': header}).get_response(app)


class WrapCorsTestCase(base.TestCase):

    def test_left_out_without_allowed_origin(self):
        self.assertIs(_app, middleware.wrap_cors(
            _app, self.conf, allow_headers=['X-A'], expose_headers=[]))

    def test_each_api_keeps_its_own_headers(self):
        # alloc-server builds both APIs in one process, one after the
        # other, on one configuration.
        self.conf.register_opts(cors.CORS_OPTS, 'cors')
        self.config(allowed_origin=[ORIGIN], group='cors')
        first = middleware.wrap_cors(_app, self.conf, allow_headers=['X-A'],
                                     expose_headers=['X-Exposed-A'])
        second = middleware.wrap_cors(_app, self.conf,
                                      allow_headers=['X-B'],
                                      expose_headers=['X-Exposed-B'])

        for app, mine, other in ((first, 'x-a', 'x-b'),
                                 (second, 'x-b', 'x-a')):
            resp = _preflight(app, mine)
            self.assertEqual(ORIGIN,
                             resp.headers['Access-Control-Allow-Origin'])
            self.assertNotIn('Access-Control-Allow-Origin',
                             _preflight(app, other).headers)
        resp = webob.Request.blank(
            '/', headers={'Origin': ORIGIN}).get_response(first)
        self.assertEqual('X-Exposed-A',
                         resp.headers['Access-Control-Expose-Headers'])
