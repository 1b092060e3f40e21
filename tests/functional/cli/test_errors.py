"""How ``alloc`` reports the errors of both APIs: one line each, with the
status and the error code, and for a refused microversion the range the
server supports."""

from alloc_framework.api.baremetal import microversion as bm_version
from alloc_framework.api.placement import microversion as pl_version
from tests.functional.cli import base


def _lines(err):
    """The lines of the error report (the in-process server's own log
    lines reach the same stream in these tests)."""
    return [line for line in err.splitlines() if '(HTTP ' in line]


class TestPlacementErrors(base.PlacementCLITestCase):

    def test_conflict_is_one_line_with_its_code(self):
        self.alloc('resource', 'provider', 'create', 'dup')
        err = self.alloc_fails('resource', 'provider', 'create', 'dup')
        self.assertEqual(1, len(_lines(err)), err)
        self.assertIn('(HTTP 409) (code: placement.duplicate_name)', err)
        self.assertIn('dup', err)
        # The web framework's generic sentence is not the server's answer.
        self.assertNotIn('There was a conflict', err)

    def test_bad_request_is_one_line(self):
        rp = self.alloc('resource', 'provider', 'create', 'rp')['uuid']
        err = self.alloc_fails('resource', 'provider', 'inventory', 'set',
                               rp, '--resource', 'VCPU=-1')
        self.assertEqual(1, len(_lines(err)), err)
        self.assertIn('(HTTP 400)', err)
        self.assertNotIn('could not comply', err)

    def test_unsupported_version_names_the_range(self):
        err = self.alloc_fails('--os-placement-api-version', '1.200',
                               'resource', 'provider', 'list')
        self.assertEqual(1, len(_lines(err)), err)
        self.assertIn('(HTTP 406)', err)
        self.assertIn('1.200', err)
        self.assertIn('The supported version range is: [%s, %s].'
                      % (pl_version.min_version_string(),
                         pl_version.max_version_string()), err)


class TestBaremetalErrors(base.BaremetalCLITestCase):

    with_conductor = False

    def test_not_found_is_one_line(self):
        err = self.alloc_fails('baremetal', 'node', 'show', 'nope')
        self.assertEqual(1, len(_lines(err)), err)
        self.assertIn('(HTTP 404)', err)
        self.assertIn('nope', err)

    def test_unsupported_version_names_the_range(self):
        supported = '[%s, %s]' % (
            bm_version.version_string(bm_version.MIN_VERSION),
            bm_version.version_string(bm_version.MAX_VERSION))
        err = self.alloc_fails('--os-baremetal-api-version', '1.200',
                               'baremetal', 'node', 'list')
        self.assertEqual(1, len(_lines(err)), err)
        self.assertIn('(HTTP 406)', err)
        self.assertIn('Version 1.200 was requested but the minor version '
                      'is not supported by this service. The supported '
                      'version range is: %s.' % supported, err)
        err = self.alloc_fails('--os-baremetal-api-version', '2.1',
                               'baremetal', 'node', 'list')
        self.assertIn('Mutually exclusive versions requested. Version 2.1 '
                      'requested but not supported by this service. The '
                      'supported version range is: %s.' % supported, err)
