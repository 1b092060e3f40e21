"""The URL and body size checks in front of both APIs."""

import io

import webob

from alloc_framework.api import limits
from tests import base


def _ok(environ, start_response):
    body = environ['wsgi.input'].read(int(environ.get('CONTENT_LENGTH')
                                          or 0))
    start_response('200 OK', [('Content-Type', 'text/plain')])
    return [b'read %d' % len(body)]


def _error(environ, status, message):
    return webob.Response(status=status, text=message,
                          content_type='text/plain')


class RequestLimitsTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.app = limits.wrap(_ok, self.conf, _error)
        self.config(max_request_body_size=10, group='oslo_middleware')

    def call(self, path='/', query='', body=None, chunked=False):
        req = webob.Request.blank('/')
        req.environ['PATH_INFO'] = path
        req.environ['QUERY_STRING'] = query
        if body is not None:
            req.method = 'POST'
            req.body = body
            if chunked:
                del req.environ['CONTENT_LENGTH']
                req.environ['wsgi.input'] = io.BytesIO(body)
                req.environ['wsgi.input_terminated'] = True
                req.environ['HTTP_TRANSFER_ENCODING'] = 'chunked'
        return req.get_response(self.app)

    def test_default_limit_is_documented_value(self):
        self.conf.clear_override('max_request_body_size',
                                 group='oslo_middleware')
        self.assertEqual(1024 * 1024,
                         self.conf.oslo_middleware.max_request_body_size)

    def test_valid_urls(self):
        # PATH_INFO is latin-1 decoded bytes: here UTF-8 for é and ☃.
        snowman = '\u2603'.encode('utf-8').decode('latin-1')
        for path, query in (('/v1/nodes', ''), ('/a/' + snowman, ''),
                            ('/', 'name=%E2%98%83&x=caf%C3%A9+au+lait'),
                            ('/', 'a=%25ff'), ('/%ff', ''),
                            ('/\u2603', '')):
            resp = self.call(path, query)
            self.assertEqual(200, resp.status_int, (path, query, resp.text))

    def test_invalid_utf8_is_400(self):
        for path, query, what in (
                ('/v1/nodes/\xff\xfe', '', 'path'),
                ('/v1/allocations/\xc0\xae', '', 'path'),
                ('/', 'driver=%ff', 'query'),
                ('/', '%ff=1', 'query'),
                ('/', 'project_id=%ED%A0%80', 'query')):
            resp = self.call(path, query)
            self.assertEqual(400, resp.status_int)
            self.assertIn('The URL %s' % what if what == 'path' else
                          'The query string', resp.text)

    def test_nul_is_400(self):
        for path, query in (('/a\x00b', ''), ('/', 'owner=a%00b')):
            resp = self.call(path, query)
            self.assertEqual(400, resp.status_int)
            self.assertIn('NUL', resp.text)

    def test_body_size(self):
        self.assertEqual(b'read 10', self.call(body=b'x' * 10).body)
        resp = self.call(body=b'x' * 11)
        self.assertEqual(413, resp.status_int)
        self.assertIn('larger than 10 bytes '
                      '([oslo_middleware]max_request_body_size)', resp.text)

    def test_chunked_body_size(self):
        self.assertEqual(b'read 10',
                         self.call(body=b'x' * 10, chunked=True).body)
        self.assertEqual(413,
                         self.call(body=b'x' * 11, chunked=True).status_int)
