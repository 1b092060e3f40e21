"""The microversion list and the version-gating helpers."""

import microversion_parse
import testtools
import webob
import webob.exc

from alloc_framework.api.placement import microversion


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
