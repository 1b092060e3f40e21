"""ReportClient's logic without a Placement: the diff, errors, the cache."""

import json

from keystoneauth1 import exceptions as ks_exc
import requests
import testtools

from alloc_framework.placement_client import exception
from alloc_framework.placement_client import provider_tree
from alloc_framework.placement_client import report

ROOT = 'c0ffee00-0000-4000-8000-000000000001'
CHILD = 'c0ffee00-0000-4000-8000-000000000002'
GRANDCHILD = 'c0ffee00-0000-4000-8000-000000000003'
NEW = 'c0ffee00-0000-4000-8000-000000000004'
NEW_CHILD = 'c0ffee00-0000-4000-8000-000000000005'


def response(status, body=None):
    resp = requests.Response()
    resp.status_code = status
    resp._content = json.dumps(body).encode() if body is not None else b''
    return resp


class FakeAdapter:
    """Answers from a table ``{(method, url): response or exception}``."""

    def __init__(self, answers):
        self.answers = answers
        self.calls = []

    def request(self, url, method, **kwargs):
        self.calls.append((method, url, kwargs))
        answer = self.answers[(method, url)]
        if isinstance(answer, Exception):
            raise answer
        return answer


def tree_of(*providers):
    """A ProviderTree of ``(uuid, name, parent, inventory, traits)``."""
    tree = provider_tree.ProviderTree()
    for uuid, name, parent, inventory, traits in providers:
        if parent is None:
            tree.new_root(name, uuid, generation=1)
        else:
            tree.new_child(name, parent, uuid=uuid, generation=1)
        tree.update_inventory(uuid, inventory)
        tree.update_traits(uuid, traits)
    return tree


class DiffTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.old = tree_of(
            (ROOT, 'node', None, {'VCPU': {'total': 8}}, ['CUSTOM_OLD']),
            (CHILD, 'numa0', ROOT, {'CUSTOM_KNOWN': {'total': 1}}, []),
            (GRANDCHILD, 'gpu0', CHILD, {}, []))

    def test_no_change(self):
        diff = report.diff_trees(self.old, tree_of(
            (ROOT, 'node', None, {'VCPU': {'total': 8, 'reserved': 0}},
             ['CUSTOM_OLD']),
            (CHILD, 'numa0', ROOT, {'CUSTOM_KNOWN': {'total': 1}}, []),
            (GRANDCHILD, 'gpu0', CHILD, {}, [])))
        self.assertEqual(report.TreeDiff([], [], [], [], [], [], [], []),
                         diff)

    def test_changes(self):
        new = tree_of(
            (ROOT, 'node-renamed', None, {'VCPU': {'total': 4}},
             ['CUSTOM_OLD', 'CUSTOM_NEW', 'HW_CPU_X86_AVX2']),
            (NEW, 'numa1', ROOT, {'CUSTOM_KNOWN': {'total': 1},
                                  'CUSTOM_FRESH': {'total': 1}}, []),
            (NEW_CHILD, 'numa1-gpu', NEW, {}, []))
        new.update_aggregates(NEW_CHILD, [ROOT])
        diff = report.diff_trees(self.old, new)
        self.assertEqual([NEW, NEW_CHILD], diff.created)
        self.assertEqual([ROOT], diff.renamed)
        self.assertEqual([GRANDCHILD, CHILD], diff.removed)
        self.assertEqual([ROOT, NEW], diff.inventories)
        self.assertEqual([ROOT], diff.traits)
        self.assertEqual([NEW_CHILD], diff.aggregates)
        # Only custom names the old tree does not use.
        self.assertEqual(['CUSTOM_FRESH'], diff.resource_classes)
        self.assertEqual(['CUSTOM_NEW'], diff.custom_traits)


class ClientTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        listed = {'resource_providers': [
            {'uuid': ROOT, 'name': 'node', 'generation': 3,
             'parent_provider_uuid': None, 'root_provider_uuid': ROOT}]}
        path = '/resource_providers/%s' % ROOT
        self.adapter = FakeAdapter({
            ('GET', '/resource_providers'): response(200, listed),
            ('GET', path + '/inventories'): response(200, {
                'inventories': {}, 'resource_provider_generation': 3}),
            ('GET', path + '/traits'): response(200, {
                'traits': [], 'resource_provider_generation': 3}),
            ('GET', path + '/aggregates'): response(200, {
                'aggregates': [], 'resource_provider_generation': 3}),
        })
        self.client = report.ReportClient(self.adapter)
        self.tree = self.client.get_provider_tree_and_ensure_root(None, ROOT)

    def test_every_request_has_the_microversion(self):
        self.assertEqual(4, len(self.adapter.calls))
        for _method, _url, kwargs in self.adapter.calls:
            self.assertEqual('placement 1.36',
                             kwargs['headers']['OpenStack-API-Version'])
        self.assertEqual({'in_tree': ROOT}, self.adapter.calls[0][2][
            'params'])
        self.assertEqual(3, self.tree.data(ROOT).generation)

    def _fail(self, answer, allocations=None):
        self.adapter.answers[
            ('PUT', '/resource_providers/%s/traits' % ROOT)] = answer
        self.tree.update_traits(ROOT, ['HW_CPU_X86_AVX2'])
        return self.assertRaises(
            exception.PlacementClientError,
            self.client.update_from_provider_tree, None, self.tree,
            allocations)

    def test_conflict(self):
        exc = self._fail(response(409, {'errors': [{
            'code': 'placement.concurrent_update', 'detail': 'generation'}]}))
        self.assertIsInstance(exc, exception.ProviderUpdateConflict)
        self.assertEqual('PUT', exc.cause.method)
        self.assertEqual('/resource_providers/%s/traits' % ROOT,
                         exc.cause.url)
        self.assertEqual('generation', exc.cause.detail)
        for word in ('PUT', '409', 'placement.concurrent_update',
                     'generation'):
            self.assertIn(word, str(exc.cause))
        # Forgotten: the next copy is read from Placement again.
        self.adapter.calls = []
        self.client.get_provider_tree_and_ensure_root(None, ROOT)
        self.assertEqual(4, len(self.adapter.calls))

    def test_other_error_without_a_body_of_placement(self):
        exc = self._fail(response(502))
        self.assertIsInstance(exc, exception.ProviderUpdateFailed)
        self.assertIsNone(exc.cause.code)
        self.assertEqual(502, exc.cause.status)

    def test_transport_error(self):
        exc = self._fail(ks_exc.ConnectFailure('no route'))
        self.assertIsInstance(exc, exception.ProviderUpdateFailed)
        self.assertIsInstance(exc.cause, ks_exc.ConnectFailure)

    def test_failure_with_allocations_is_a_reshape_failure(self):
        self.adapter.answers[('POST', '/reshaper')] = response(400, {
            'errors': [{'code': 'placement.undefined_code'}]})
        self.tree.update_inventory(ROOT, {'VCPU': {'total': 1}})
        exc = self.assertRaises(
            exception.ReshapeFailed, self.client.update_from_provider_tree,
            None, self.tree, {})
        self.assertEqual(400, exc.cause.status)
        self.assertEqual(('POST', '/reshaper'), self.adapter.calls[-1][:2])

    def test_unknown_root(self):
        self.tree.new_root('other', NEW)
        self.assertRaises(ValueError, self.client.update_from_provider_tree,
                          None, self.tree)
        self.assertRaises(ValueError,
                          self.client.get_allocations_for_provider_tree,
                          None, 'other')

    def test_reshape_needed(self):
        self.assertIsInstance(exception.ReshapeNeeded(),
                              exception.PlacementClientError)
        self.assertIn('allocations', str(exception.ReshapeNeeded()))
        self.assertEqual('GPUs move', str(exception.ReshapeNeeded(
            'GPUs move')))
