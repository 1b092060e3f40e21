"""``alloc resource reshape`` and ``alloc resource allocation batch set``
end to end, with their request bodies read from JSON files."""

import json
import os

from oslo_utils import uuidutils

from tests.functional.cli import base

PROJECT = uuidutils.generate_uuid()
USER = uuidutils.generate_uuid()


class _FileBodyMixin:

    def write_json(self, name, data):
        path = os.path.join(self.state_path, name)
        with open(path, 'w') as f:
            f.write(data if isinstance(data, str) else json.dumps(data))
        return path

    def provider(self, name, *extra):
        return self.alloc('resource', 'provider', 'create', name,
                          *extra)['uuid']

    def inventory(self, rp, *resources):
        args = []
        for r in resources:
            args += ['--resource', r]
        self.alloc('resource', 'provider', 'inventory', 'set', rp, *args)

    def usages(self, rp):
        return {r['resource_class']: r['usage'] for r in self.alloc(
            'resource', 'provider', 'usage', 'show', rp)}


class TestAllocationBatchSet(_FileBodyMixin, base.PlacementCLITestCase):

    def test_batch_set_writes_every_consumer(self):
        rp = self.provider('compute')
        self.inventory(rp, 'VCPU=8', 'MEMORY_MB=1024')
        c1, c2 = uuidutils.generate_uuid(), uuidutils.generate_uuid()
        body = {c: {'allocations': {rp: {'resources': {'VCPU': n}}},
                    'project_id': PROJECT, 'user_id': USER,
                    'consumer_generation': None,
                    'consumer_type': 'INSTANCE'}
                for c, n in ((c1, 2), (c2, 3))}
        path = self.write_json('batch.json', body)
        self.alloc('resource', 'allocation', 'batch', 'set', '--file', path,
                   fmt=None)
        self.assertEqual({'VCPU': 5, 'MEMORY_MB': 0}, self.usages(rp))
        rows = self.alloc('resource', 'allocation', 'show', c2)
        self.assertEqual([{'VCPU': 3}], [r['resources'] for r in rows])
        self.assertEqual([PROJECT], [r['project_id'] for r in rows])

    def test_batch_set_over_capacity_conflicts(self):
        rp = self.provider('small')
        self.inventory(rp, 'VCPU=1')
        consumer = uuidutils.generate_uuid()
        path = self.write_json('batch.json', {consumer: {
            'allocations': {rp: {'resources': {'VCPU': 4}}},
            'project_id': PROJECT, 'user_id': USER,
            'consumer_generation': None, 'consumer_type': 'INSTANCE'}})
        err = self.alloc_fails('resource', 'allocation', 'batch', 'set',
                               '--file', path)
        self.assertIn('(HTTP 409)', err)
        self.assertIn('placement.', err)
        self.assertEqual({'VCPU': 0}, self.usages(rp))

    def test_non_json_file(self):
        path = self.write_json('bad.json', '{not json')
        err = self.alloc_fails('resource', 'allocation', 'batch', 'set',
                               '--file', path)
        self.assertIn('bad.json is not valid JSON', err)

    def test_unreadable_file(self):
        err = self.alloc_fails('resource', 'allocation', 'batch', 'set',
                               '--file', '/nonexistent/batch.json')
        self.assertIn('Cannot read /nonexistent/batch.json', err)

    def test_needs_1_13(self):
        path = self.write_json('batch.json', {})
        err = self.alloc_fails('--os-placement-api-version', '1.12',
                               'resource', 'allocation', 'batch', 'set',
                               '--file', path)
        self.assertIn('1.13', err)


class TestReshape(_FileBodyMixin, base.PlacementCLITestCase):
    """Reshape is a service operation: the server here accepts the
    ``admin`` noauth token for it through a policy file override."""

    def server_options(self):
        policy = os.path.join(self.state_path, 'policy.yaml')
        with open(policy, 'w') as f:
            f.write('"placement:reshaper:reshape": "role:admin"\n')
        return dict(super().server_options(),
                    oslo_policy={'policy_file': policy})

    def test_reshape_moves_inventory_and_allocations(self):
        root = self.provider('root')
        self.inventory(root, 'VCPU=8', 'MEMORY_MB=1024')
        consumer = uuidutils.generate_uuid()
        self.alloc('resource', 'allocation', 'set', consumer,
                   '--allocation', 'rp=%s,VCPU=2,MEMORY_MB=128' % root,
                   '--project-id', PROJECT, '--user-id', USER,
                   '--consumer-type', 'INSTANCE')
        child = self.provider('child', '--parent-provider', root)
        gens = {rp: self.alloc('resource', 'provider', 'show',
                               rp)['generation'] for rp in (root, child)}
        body = {
            'inventories': {
                root: {'resource_provider_generation': gens[root],
                       'inventories': {'MEMORY_MB': {'total': 1024}}},
                child: {'resource_provider_generation': gens[child],
                        'inventories': {'VCPU': {'total': 8}}},
            },
            'allocations': {consumer: {
                'allocations': {root: {'resources': {'MEMORY_MB': 128}},
                                child: {'resources': {'VCPU': 2}}},
                'project_id': PROJECT, 'user_id': USER,
                'consumer_generation': 1, 'consumer_type': 'INSTANCE'}},
        }
        path = self.write_json('reshape.json', body)
        self.alloc('resource', 'reshape', '--file', path, fmt=None)
        self.assertEqual({'MEMORY_MB': 128}, self.usages(root))
        self.assertEqual({'VCPU': 2}, self.usages(child))
        self.assertEqual(['MEMORY_MB'], [r['resource_class'] for r in
                                         self.alloc('resource', 'provider',
                                                    'inventory', 'list',
                                                    root)])

    def test_reshape_stale_generation_conflicts(self):
        root = self.provider('root')
        self.inventory(root, 'VCPU=8')
        path = self.write_json('reshape.json', {
            'inventories': {root: {'resource_provider_generation': 99,
                                   'inventories': {}}},
            'allocations': {}})
        err = self.alloc_fails('resource', 'reshape', '--file', path)
        self.assertIn('(HTTP 409)', err)
        self.assertIn('placement.concurrent_update', err)
        self.assertEqual({'VCPU': 0}, self.usages(root))

    def test_non_json_file(self):
        path = self.write_json('reshape.json', 'inventories: {}')
        err = self.alloc_fails('resource', 'reshape', '--file', path)
        self.assertIn('reshape.json is not valid JSON', err)

    def test_needs_1_30(self):
        path = self.write_json('reshape.json', {})
        err = self.alloc_fails('--os-placement-api-version', '1.29',
                               'resource', 'reshape', '--file', path)
        self.assertIn('1.30', err)


class TestReshapeDefaultPolicy(_FileBodyMixin, base.PlacementCLITestCase):

    def test_default_admin_token_is_refused(self):
        path = self.write_json('reshape.json', {'inventories': {},
                                                'allocations': {}})
        err = self.alloc_fails('resource', 'reshape', '--file', path)
        self.assertIn('(HTTP 403)', err)
