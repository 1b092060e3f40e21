"""The microversion list and the version-gating helpers."""

import microversion_parse
import testtools
import webob
import webob.exc

from alloc_framework.api.placement import microversion
from alloc_framework.api.placement import microversion_middleware


def _req(version):
    req = webob.Request.blank('/')
    req.environ[microversion.MICROVERSION_ENVIRON] = (
        microversion.extract_version(
            {'openstack-api-version': 'placement %s' % version}))
    return req


class VersionsTestCase(testtools.TestCase):

    def test_contiguous_from_1_0_to_1_39(self):
        expected = ['1.%d' % i for i in range(40)]
        self.assertEqual(expected, microversion.VERSIONS)
        self.assertEqual('1.0', microversion.min_version_string())
        self.assertEqual('1.39', microversion.max_version_string())

    def test_every_version_is_commented(self):
        with open(microversion.__file__) as f:
            lines = [line for line in f if line.startswith("    '1.")]
        self.assertEqual(40, len(lines))
        for line in lines:
            self.assertRegex(line, r"^    '1\.\d+',\s+# \S")

    def test_named_versions_are_listed(self):
        named = [value for name, value in vars(microversion).items()
                 if name.isupper() and isinstance(value, tuple)]
        self.assertGreater(len(named), 20)
        for version in named:
            self.assertIn('%d.%d' % version, microversion.VERSIONS)

    def test_extract(self):
        version = microversion.extract_version({})
        self.assertEqual((1, 0), version)
        version = microversion.extract_version(
            {'openstack-api-version': 'placement latest'})
        self.assertEqual((1, 39), version)
        self.assertTrue(version.matches((1, 23)))
        self.assertRaises(ValueError, microversion.extract_version,
                          {'openstack-api-version': 'placement 1.40'})
        self.assertRaises(TypeError, microversion.extract_version,
                          {'openstack-api-version': 'placement x'})


class VersionHandlerTestCase(testtools.TestCase):

    def test_variants(self):
        @microversion.version_handler((1, 2))
        def handler(req):
            return 'old'

        @microversion.version_handler((1, 7))  # noqa: F811
        def handler(req):  # noqa: F811
            return 'new'

        self.assertEqual('old', handler(_req('1.2')))
        self.assertEqual('old', handler(_req('1.6')))
        self.assertEqual('new', handler(_req('1.7')))
        self.assertEqual('new', handler(_req('1.39')))
        self.assertRaises(webob.exc.HTTPNotFound, handler, _req('1.1'))

    def test_newest(self):
        choices = ((microversion.CONSUMER_TYPES, 'v1.38'),
                   (microversion.ALLOCATIONS_DICT, 'v1.12'),
                   (microversion.ALLOCATION_OWNER, 'v1.8'))

        def at(version):
            return microversion.newest(microversion.request_version(
                _req(version)), choices)

        self.assertIsNone(at('1.7'))
        self.assertEqual('v1.8', at('1.8'))
        self.assertEqual('v1.8', at('1.11'))
        self.assertEqual('v1.12', at('1.12'))
        self.assertEqual('v1.12', at('1.37'))
        self.assertEqual('v1.38', at('1.38'))
        self.assertEqual('v1.38', at('1.39'))

    def test_status_code(self):
        @microversion.version_handler((1, 10), status_code=405)
        def other(req):
            return 'ok'

        self.assertRaises(webob.exc.HTTPMethodNotAllowed, other,
                          _req('1.9'))

    def test_version_type(self):
        self.assertIsInstance(_req('1.3').environ[
            microversion.MICROVERSION_ENVIRON], microversion_parse.Version)


class MiddlewareTestCase(testtools.TestCase):
    """The middleware's kept versions answer as a fresh parse does."""

    def setUp(self):
        super().setUp()
        self.seen = []

        def app(environ, start_response):
            self.seen.append(environ[microversion.MICROVERSION_ENVIRON])
            start_response('204 No Content', [])
            return [b'']
        self.middleware = microversion_middleware.MicroversionMiddleware(app)

    def _call(self, *headers):
        req = webob.Request.blank('/')
        if headers:
            # A WSGI server joins repeated headers with commas.
            req.headers['OpenStack-API-Version'] = ', '.join(headers)
        return req.get_response(self.middleware)

    def test_versions(self):
        for headers, expected in (
                ((), (1, 0)), (('placement 1.12',), (1, 12)),
                (('placement latest',), (1, 39)),
                (('compute 2.1', 'placement 1.30'), (1, 30)),
                (('placement 1.30, compute 2.1',), (1, 30)),
                (('compute 2.1',), (1, 0)),
                (('placement 1.12',), (1, 12))):
            resp = self._call(*headers)
            self.assertEqual(204, resp.status_int)
            self.assertEqual(expected, self.seen[-1])
            self.assertEqual(expected, microversion.extract_version(
                {'openstack-api-version': ', '.join(headers)}
                if headers else {}))
            self.assertEqual('placement %d.%d' % expected,
                             resp.headers['OpenStack-API-Version'])

    def test_errors_every_time(self):
        for _ in range(2):
            self.assertEqual(406, self._call('placement 1.99').status_int)
            self.assertEqual(400, self._call('placement x').status_int)
        self.assertEqual([], self.seen)

    def test_kept_versions_are_bounded(self):
        self.middleware.max_kept = 2
        for minor in range(5):
            self._call('placement 1.%d' % minor)
        self.assertEqual(2, len(self.middleware._versions))
        self.assertEqual([(1, m) for m in range(5)], self.seen)
