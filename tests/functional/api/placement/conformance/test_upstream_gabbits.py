"""Run the reference Placement implementation's gabbi tests against ours.

The ``openstack-placement`` package (a test requirement) ships the HTTP
level YAML tests of the reference implementation. They are not copied
into this project: they are read from the installed package at test time
and run in process against ``deploy.loadapp(conf)``, one suite per file,
with the fixtures of ``fixtures.py`` (same names, same data, built with
our own API).

Differences are explicit. ``EXCLUDED_FILES`` lists whole files that do
not apply yet, with the reason. Requests to ``/allocation_candidates`` in
the other files are skipped for the same reason. ``KNOWN_DIFFERENCES``
lists, by file and gabbi test name, every other upstream test we do not
pass yet, with a one-line reason: those tests run and are expected to
fail. A listed test that passes is reported as an unexpected success,
which fails the run, so the entry must be removed: the list can only
shrink as the implementation converges.
"""

import importlib.util
import os

from gabbi import handlers
from gabbi import suitemaker
from gabbi import utils
import testtools

from tests import base
from tests.functional.api.placement.conformance import fixtures

_AC = ('GET /allocation_candidates is the next issue, not implemented '
       'yet')

# Whole upstream files not run, with the reason.
EXCLUDED_FILES = {
    'allocation-candidates.yaml': _AC,
    'allocation-candidates-any-traits.yaml': _AC,
    'allocation-candidates-any-traits-groups.yaml': _AC,
    'allocation-candidates-bug-1792503.yaml': _AC,
    'allocation-candidates-legacy-rbac.yaml': _AC,
    'allocation-candidates-mappings-numa.yaml': _AC,
    'allocation-candidates-mappings-sharing.yaml': _AC,
    'allocation-candidates-member-of.yaml': _AC,
    'allocation-candidates-policy.yaml': _AC,
    'allocation-candidates-root-required.yaml': _AC,
    'allocation-candidates-secure-rbac.yaml': _AC,
    # Every request of these three is an allocation candidates query.
    'granular.yaml': _AC,
    'granular-same-subtree.yaml': _AC,
    'same-subtree-deep.yaml': _AC,
}

# Upstream tests we are known to fail: {file: {test name: reason}}. They
# run and must fail; remove an entry as soon as its test passes.
KNOWN_DIFFERENCES = {
    'with-allocations.yaml': {
        'change inventory despite capacity exceeded':
            'by design (issue 3): 409 placement.inventory.inuse when usage '
            'would exceed the new capacity; upstream only logs a warning',
    },
}


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


_DEPENDS_ON_AC = ('uses the response of an allocation candidates request, '
                  'which is skipped')
# Substitutions that read the previous test's response.
_PRIOR_REFS = ('$RESPONSE', '$LAST_URL', '$LOCATION', '$HEADERS', '$COOKIE',
               '$URL')


def _mark(filename, suite_dict):
    """Mark the known differences and the out-of-scope requests.

    Requests to /allocation_candidates are skipped, and so are the tests
    that read their responses (``$HISTORY['name']``, or ``$RESPONSE`` and
    the like right after one).
    """
    known = KNOWN_DIFFERENCES.get(filename, {})
    names = set()
    skipped = set()
    prior_skipped = False
    for test in suite_dict.get('tests', []):
        name = test.get('name')
        names.add(name)
        text = str(test)
        url = test.get('url') or next(
            (v for k, v in test.items() if k.isupper()), '')
        history = [n for n in skipped if "$HISTORY['%s']" % n in text]
        reads_prior = (prior_skipped and '$HISTORY' not in text and
                       any(ref in text for ref in _PRIOR_REFS))
        if '/allocation_candidates' in str(url):
            test['skip'] = _AC
        elif history or reads_prior:
            test['skip'] = _DEPENDS_ON_AC
        elif name in known:
            test['xfail'] = True
        prior_skipped = bool(test.get('skip'))
        if prior_skipped:
            skipped.add(name)
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
