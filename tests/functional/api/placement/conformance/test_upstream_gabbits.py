"""Run the reference Placement implementation's gabbi tests against ours.

The ``openstack-placement`` package (a test requirement) ships the HTTP
level YAML tests of the reference implementation. They are not copied
into this project: they are read from the installed package at test time
and run in process against ``deploy.loadapp(conf)``, one suite per file,
with the fixtures of ``fixtures.py`` (same names, same data, built with
our own API).

Differences are explicit. ``EXCLUDED_FILES`` lists whole files that do
not apply yet, with the reason. ``KNOWN_DIFFERENCES`` lists, by file and
gabbi test name, every other upstream test we do not pass yet, with a
one-line reason: those tests run and are expected to fail. A listed test
that passes is reported as an unexpected success, which fails the run,
so the entry must be removed: the list can only shrink as the
implementation converges.
"""

import importlib.util
import os

from gabbi import handlers
from gabbi import suitemaker
from gabbi import utils
import testtools

from tests import base
from tests.functional.api.placement.conformance import fixtures

# Whole upstream files not run, with the reason (none at the moment).
EXCLUDED_FILES = {}

# Upstream tests we are known to fail: {file: {test name: reason}}. They
# run and must fail; remove an entry as soon as its test passes (none at
# the moment).
KNOWN_DIFFERENCES = {}


def gabbits_dir():
    """The gabbits directory of the installed reference package, or None.
    """
    spec = importlib.util.find_spec('placement')
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        path = os.path.join(location, 'tests', 'functional', 'gabbits')
        if os.path.isdir(path):
            return path
    return None


def _mark(filename, suite_dict):
    """Mark the known differences of ``filename`` as expected failures."""
    known = KNOWN_DIFFERENCES.get(filename, {})
    names = set()
    for test in suite_dict.get('tests', []):
        name = test.get('name')
        names.add(name)
        if name in known:
            test['xfail'] = True
    stale = set(known) - names
    if stale:
        raise ValueError('KNOWN_DIFFERENCES names tests not in %s: %s'
                         % (filename, sorted(stale)))


class _ReferenceMissing(testtools.TestCase):

    def test_reference_installed(self):
        msg = ('openstack-placement is not installed: '
               'pip install -r test-requirements.txt')
        if base.IN_CI:
            self.fail(msg)
        self.skipTest(msg)


def load_tests(loader, tests, pattern):
    path = gabbits_dir()
    if path is None:
        return loader.loadTestsFromTestCase(_ReferenceMissing)
    handler_objects = [h() for h in handlers.RESPONSE_HANDLERS]
    top = loader.suiteClass()
    unknown = set(KNOWN_DIFFERENCES) - set(os.listdir(path))
    if unknown:
        raise ValueError('KNOWN_DIFFERENCES names missing files: %s'
                         % sorted(unknown))
    for filename in sorted(os.listdir(path)):
        if not filename.endswith('.yaml') or filename in EXCLUDED_FILES:
            continue
        suite_dict = utils.load_yaml(
            yaml_file=os.path.join(path, filename))
        _mark(filename, suite_dict)
        top.addTest(suitemaker.test_suite_from_dict(
            loader, filename[:-len('.yaml')], suite_dict, path,
            # Any host name: the intercept answers in process.
            'placement.conformance.test', None, fixtures,
            fixtures.setup_app, handlers=handler_objects,
            test_loader_name=__name__))
    return top
