"""The bare metal version list: the one description of each version."""

import os
import re

import testtools

from alloc_framework.api.baremetal import microversion

_DOC = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir,
                    os.pardir, os.pardir, 'doc', 'source', 'baremetal-api.rst')


class VersionsTestCase(testtools.TestCase):

    def test_named_versions_are_listed(self):
        named = {name: value for name, value in vars(microversion).items()
                 if name.isupper() and isinstance(value, int)}
        self.assertGreater(len(named), 30)
        for name, minor in named.items():
            self.assertIn(minor, microversion.VERSIONS, name)

    def test_every_version_is_described(self):
        for minor, what in microversion.VERSIONS.items():
            self.assertIsInstance(what, str)
            self.assertTrue(what.strip(), minor)

    def test_documented_table_lists_the_same_versions(self):
        # The user documentation renders VERSIONS as a table: the same
        # versions, the initial one aside (it is the range's minimum).
        with open(_DOC, encoding='utf-8') as stream:
            text = stream.read()
        documented = {int(minor) for minor in
                      re.findall(r'^1\.(\d+) {2,}\S', text, re.MULTILINE)}
        self.assertEqual(set(microversion.VERSIONS) - {1}, documented)
        self.assertIn('The supported range is **%s to %s**.' % (
            microversion.version_string(microversion.MIN_VERSION),
            microversion.version_string(microversion.MAX_VERSION)), text)

    def test_unchanged_versions_are_documented_as_absent(self):
        # Versions that change only resources that are not served are in
        # the range, never in VERSIONS, and named in the documentation.
        with open(_DOC, encoding='utf-8') as stream:
            text = stream.read()
        absent = text[text.index('Deliberately absent'):]
        for minor in microversion.UNCHANGED:
            self.assertNotIn(minor, microversion.VERSIONS)
            self.assertLess(minor, microversion.MAX_VERSION[1] + 1)
            self.assertIn('1.%d' % minor, absent)
