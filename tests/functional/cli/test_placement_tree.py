"""``alloc resource provider tree show`` and ``list --over-capacity``
end to end, against our Placement and against upstream's.

Both commands read only the public API, so the same tests run against
the reference implementation (served on loopback, see
``tests/functional/drivers/allocation/placement_fixtures.py``).
"""

import os

import fixtures
from oslo_utils import uuidutils
import requests

from tests.functional.cli import base
from tests.functional.drivers.allocation import placement_fixtures

PROJECT = uuidutils.generate_uuid()
USER = uuidutils.generate_uuid()
AGG = uuidutils.generate_uuid()


class TreeTests:
    """The tests; a subclass says which Placement serves them.

    The data is written with plain HTTP requests (quicker than a command
    each); only the commands under test run through ``alloc``.
    """

    def api(self, method, path, body=None, status=200):
        resp = requests.request(
            method, os.environ['ALLOC_PLACEMENT_ENDPOINT'] + path,
            json=body, timeout=30,
            headers={'x-auth-token': 'admin',
                     'openstack-api-version': 'placement 1.39'})
        self.assertEqual(status, resp.status_code, resp.text)
        return resp.json() if resp.content else None

    def create(self, name, parent=None):
        return self.api('POST', '/resource_providers', {
            'name': name, 'parent_provider_uuid': parent})['uuid']

    def inventory(self, rp, **inventories):
        gen = self.api('GET', '/resource_providers/%s' % rp)['generation']
        self.api('PUT', '/resource_providers/%s/inventories' % rp, {
            'resource_provider_generation': gen,
            'inventories': inventories})

    def allocate(self, consumer, allocations, status=204):
        self.api('PUT', '/allocations/%s' % consumer, {
            'allocations': {rp: {'resources': resources}
                            for rp, resources in allocations.items()},
            'project_id': PROJECT, 'user_id': USER,
            'consumer_generation': None, 'consumer_type': 'INSTANCE'},
            status=status)

    def make_tree(self):
        """cn -> (cn_numa0 -> cn_numa0_pf0), cn_numa1; and another root.

        Children are created out of name order: the output sorts them.
        """
        self.cn = self.create('cn')
        self.numa1 = self.create('cn_numa1', self.cn)
        self.numa0 = self.create('cn_numa0', self.cn)
        self.pf0 = self.create('cn_numa0_pf0', self.numa0)
        self.other = self.create('other')
        self.inventory(self.cn, VCPU={'total': 8, 'reserved': 1})
        self.inventory(self.numa0, MEMORY_MB={'total': 1024,
                                              'allocation_ratio': 1.5})
        self.inventory(self.pf0, SRIOV_NET_VF={'total': 4})
        self.inventory(self.other, VCPU={'total': 2})
        self.api('PUT', '/resource_providers/%s/traits' % self.cn, {
            'resource_provider_generation': 1,
            'traits': ['HW_CPU_X86_AVX2', 'HW_CPU_X86_AVX']})
        self.api('PUT', '/resource_providers/%s/aggregates' % self.numa1, {
            'resource_provider_generation': 0, 'aggregates': [AGG]})
        self.consumer = uuidutils.generate_uuid()
        self.allocate(self.consumer, {self.cn: {'VCPU': 2},
                                      self.numa0: {'MEMORY_MB': 512},
                                      self.pf0: {'SRIOV_NET_VF': 1}})

    def test_tree_show_structured(self):
        self.make_tree()
        # Any provider of the tree, by name, shows the whole tree.
        tree = self.alloc('resource', 'provider', 'tree', 'show',
                          'cn_numa0_pf0')
        self.assertEqual(
            [('cn', 0, None), ('cn_numa0', 1, self.cn),
             ('cn_numa0_pf0', 2, self.numa0), ('cn_numa1', 1, self.cn)],
            [(p['name'], p['depth'], p['parent_provider_uuid'])
             for p in tree])
        self.assertEqual([self.cn, self.numa0, self.pf0, self.numa1],
                         [p['uuid'] for p in tree])
        root, numa0, pf0, numa1 = tree
        self.assertEqual(
            {'VCPU': {'total': 8, 'reserved': 1, 'min_unit': 1,
                      'max_unit': 2147483647, 'step_size': 1,
                      'allocation_ratio': 1.0, 'used': 2, 'capacity': 7}},
            root['inventories'])
        self.assertEqual(
            {'used': 512, 'capacity': 1536, 'total': 1024,
             'allocation_ratio': 1.5},
            {k: numa0['inventories']['MEMORY_MB'][k]
             for k in ('used', 'capacity', 'total', 'allocation_ratio')})
        self.assertEqual(1, pf0['inventories']['SRIOV_NET_VF']['used'])
        self.assertEqual({}, numa1['inventories'])
        self.assertEqual(['HW_CPU_X86_AVX', 'HW_CPU_X86_AVX2'],
                         root['traits'])
        self.assertEqual([], numa0['traits'])
        self.assertEqual([AGG], numa1['aggregates'])
        self.assertEqual([], root['aggregates'])
        for provider in tree:
            shown = self.alloc('resource', 'provider', 'show',
                               provider['uuid'])
            self.assertEqual(shown['generation'], provider['generation'])
        # By UUID, from the root, and as YAML: the same records.
        self.assertEqual(tree, self.alloc('resource', 'provider', 'tree',
                                          'show', self.cn))
        yaml_out = self.alloc('resource', 'provider', 'tree', 'show',
                              self.numa1, fmt='yaml').out
        self.assertIn('parent_provider_uuid: %s' % self.numa0, yaml_out)
        self.assertIn('depth: 2', yaml_out)

    def test_tree_show_table(self):
        self.make_tree()
        out = self.alloc('resource', 'provider', 'tree', 'show', self.pf0,
                         fmt='table').out
        for header in ('provider', 'uuid', 'generation', 'inventories',
                       'traits'):
            self.assertIn('| %s' % header, out)
        rows = [line for line in out.splitlines() if line.startswith('| ')]
        names = [row.split('|')[1].rstrip() for row in rows[1:]]
        # Rows top-down, the name indented by depth (an empty name is
        # the second line of a provider with several inventories).
        self.assertEqual(
            [' cn', '   cn_numa0', '     cn_numa0_pf0', '   cn_numa1'],
            [n for n in names if n])
        self.assertIn('VCPU: 2/8 (reserved 1)', out)
        self.assertIn('MEMORY_MB: 512/1024 (ratio 1.5)', out)
        self.assertIn('SRIOV_NET_VF: 1/4', out)
        self.assertIn('HW_CPU_X86_AVX, HW_CPU_X86_AVX2', out)
        self.assertNotIn('other', out)

    def test_tree_show_single_root(self):
        rp = self.create('alone')
        tree = self.alloc('resource', 'provider', 'tree', 'show', 'alone')
        self.assertEqual([{'uuid': rp, 'name': 'alone',
                           'parent_provider_uuid': None, 'depth': 0,
                           'generation': 0, 'inventories': {},
                           'traits': [], 'aggregates': []}], tree)

    def test_tree_show_unknown_provider(self):
        err = self.alloc_fails('resource', 'provider', 'tree', 'show',
                               'nowhere')
        self.assertIn("No resource provider with the name or UUID "
                      "'nowhere'", err)
        missing = uuidutils.generate_uuid()
        err = self.alloc_fails('resource', 'provider', 'tree', 'show',
                               missing)
        self.assertIn(missing, err)

    def test_tree_show_needs_1_14(self):
        self.create('old')
        err = self.alloc_fails('--os-placement-api-version', '1.13',
                               'resource', 'provider', 'tree', 'show',
                               'old')
        self.assertIn('requires --os-placement-api-version 1.14', err)

    def test_over_capacity(self):
        self.make_tree()
        self.assertEqual([], self.alloc('resource', 'provider', 'list',
                                        '--over-capacity'))
        second = uuidutils.generate_uuid()
        self.allocate(second, {self.cn: {'VCPU': 4},
                               self.other: {'VCPU': 2}})
        # Upstream behaviour: an inventory may shrink below its usage.
        self.alloc('resource', 'provider', 'inventory', 'set', 'cn',
                   '--resource', 'VCPU=8', '--resource', 'VCPU:reserved=4')
        self.inventory(self.other, VCPU={'total': 1})
        over = self.alloc('resource', 'provider', 'list',
                          '--over-capacity')
        self.assertEqual(
            [('cn', self.cn, {'VCPU': {'used': 6, 'capacity': 4}}),
             ('other', self.other, {'VCPU': {'used': 2, 'capacity': 1}})],
            sorted((p['name'], p['uuid'], p['over_capacity'])
                   for p in over))
        # Other filters narrow the listing as usual.
        self.assertEqual(['other'], [p['name'] for p in self.alloc(
            'resource', 'provider', 'list', '--over-capacity', '--name',
            'other')])
        self.assertEqual(['cn'], [p['name'] for p in self.alloc(
            'resource', 'provider', 'list', '--over-capacity', '--in-tree',
            self.pf0)])
        table = self.alloc('resource', 'provider', 'list', '--over-capacity',
                           '--name', 'cn', fmt='table').out
        self.assertIn('| over_capacity', table)
        self.assertIn('VCPU: 6 used, capacity 4', table)
        tree = self.alloc('resource', 'provider', 'tree', 'show', 'cn',
                          fmt='table').out
        self.assertIn('VCPU: 6/8 (reserved 4, over capacity 4)', tree)
        # No new allocation of the class fits until allocations go.
        self.allocate(uuidutils.generate_uuid(), {self.other: {'VCPU': 1}},
                      status=409)
        self.api('DELETE', '/allocations/%s' % second, status=204)
        self.assertEqual([], self.alloc('resource', 'provider', 'list',
                                        '--over-capacity'))


class TestOurs(TreeTests, base.PlacementCLITestCase):
    pass


class TestUpstream(TreeTests, base.CLITestCase):
    """The reference implementation, over HTTP on loopback."""

    def setUp(self):
        super().setUp()
        url = self.useFixture(placement_fixtures.UpstreamPlacement()).url
        self.useFixture(fixtures.EnvironmentVariable(
            'ALLOC_PLACEMENT_ENDPOINT', url))
        self.useFixture(fixtures.EnvironmentVariable(
            'OS_PLACEMENT_API_VERSION'))
        self.useFixture(fixtures.EnvironmentVariable('OS_AUTH_TYPE'))
