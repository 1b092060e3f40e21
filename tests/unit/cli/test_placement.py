"""The Placement commands against a fake HTTP layer.

These check what each command sends (method, path, query, body, version
header) and how it shapes the answer; the end-to-end tests against the
real server live in tests/functional/cli.
"""

import io
import json
import os

import fixtures

from tests import base
from tests.unit.cli import fakes

RP = 'd0b4d4d9-23c3-4c37-9a7d-5f5c4d8e8a11'
RP2 = '1f0fa2a1-64a1-4a4e-8f5e-0e0f4f8e6b2c'
CONSUMER = '6a0b1f43-3d3c-4c38-8f43-27d6e4a0c9b7'


class TestPlacementCommands(base.TestCase):

    def setUp(self):
        super().setUp()
        self.http = self.useFixture(fakes.FakeHTTP())
        self.api = self.http.placement

    def test_provider_create_negotiates_latest_and_sends_token(self):
        self.api.add('POST', '/resource_providers', 200, {
            'uuid': RP, 'name': 'rp1', 'generation': 0,
            'root_provider_uuid': RP, 'parent_provider_uuid': None})
        out = fakes.run_json(self, ['resource', 'provider', 'create', 'rp1',
                                    '--uuid', RP])
        self.assertEqual({'uuid': RP, 'name': 'rp1', 'generation': 0,
                          'root_provider_uuid': RP,
                          'parent_provider_uuid': None}, out)
        req = self.api.last()
        self.assertEqual({'name': 'rp1', 'uuid': RP}, req['json'])
        self.assertEqual('placement 1.39',
                         req['headers']['OpenStack-API-Version'])
        self.assertEqual({'x-auth-token': 'admin'},
                         self.api.additional_headers)

    def test_provider_create_before_1_20_follows_location(self):
        self.api.add('POST', '/resource_providers', 201, None,
                     {'Location': '/resource_providers/' + RP})
        self.api.add('GET', '/resource_providers/' + RP, 200, {
            'uuid': RP, 'name': 'rp1', 'generation': 0})
        out = fakes.run_json(self, ['--os-placement-api-version', '1.10',
                                    'resource', 'provider', 'create', 'rp1'])
        self.assertEqual({'uuid': RP, 'name': 'rp1', 'generation': 0}, out)

    def test_parent_provider_needs_1_14(self):
        code, out, err = fakes.run(['--os-placement-api-version', '1.13',
                                    'resource', 'provider', 'create', 'x',
                                    '--parent-provider', RP])
        self.assertEqual(1, code)
        self.assertIn('--parent-provider requires '
                      '--os-placement-api-version 1.14', err)
        self.assertEqual([], self.api.requests)

    def test_provider_list_filters(self):
        self.api.add('GET', '/resource_providers', 200,
                     {'resource_providers': []})
        fakes.run_json(self, [
            'resource', 'provider', 'list', '--name', 'n',
            '--resource', 'VCPU=2', '--resource', 'DISK_GB=10',
            '--required', 'HW_CPU_X86_AVX', '--required', 'A,B',
            '--forbidden', 'CUSTOM_BAD', '--member-of', 'a1,a2',
            '--member-of', 'a3', '--in-tree', RP])
        params = self.api.last()['params']
        self.assertEqual({
            'name': 'n', 'resources': 'VCPU:2,DISK_GB:10',
            'required': ['in:A,B', 'HW_CPU_X86_AVX,!CUSTOM_BAD'],
            'member_of': ['in:a1,a2', 'in:a3'], 'in_tree': RP}, params)

    def test_server_error_message_and_code(self):
        self.api.add('GET', '/resource_providers/' + RP, 404, {
            'errors': [{'status': 404, 'title': 'Not Found',
                        'detail': 'No resource provider with uuid %s found'
                                  % RP,
                        'code': 'placement.undefined_code',
                        'request_id': 'req-1'}]})
        code, out, err = fakes.run(['resource', 'provider', 'show', RP])
        self.assertEqual(1, code)
        self.assertEqual('', out)
        self.assertIn('No resource provider with uuid %s found (HTTP 404) '
                      '(code: placement.undefined_code)' % RP, err)
        self.assertNotIn('Traceback', err)

    def test_inventory_set_replaces_with_generation(self):
        self.api.add('GET', '/resource_providers/' + RP, 200,
                     {'uuid': RP, 'generation': 3})
        self.api.add('PUT', '/resource_providers/%s/inventories' % RP, 200, {
            'resource_provider_generation': 4,
            'inventories': {'VCPU': {'total': 8, 'allocation_ratio': 16.0,
                                     'reserved': 0, 'min_unit': 1,
                                     'max_unit': 8, 'step_size': 1}}})
        out = fakes.run_json(self, [
            'resource', 'provider', 'inventory', 'set', RP,
            '--resource', 'VCPU=8', '--resource',
            'VCPU:allocation_ratio=16'])
        self.assertEqual({'resource_provider_generation': 3,
                          'inventories': {'VCPU': {
                              'total': 8, 'allocation_ratio': 16.0}}},
                         self.api.last('PUT')['json'])
        self.assertEqual([{'resource_class': 'VCPU',
                           'allocation_ratio': 16.0, 'max_unit': 8,
                           'min_unit': 1, 'reserved': 0, 'step_size': 1,
                           'total': 8}], out)

    def test_inventory_set_bad_field(self):
        code, _out, err = fakes.run([
            'resource', 'provider', 'inventory', 'set', RP,
            '--resource', 'VCPU:size=8'])
        self.assertEqual(1, code)
        self.assertIn("Unknown inventory field 'size'", err)

    def test_inventory_delete_all_needs_1_5(self):
        code, _out, err = fakes.run([
            '--os-placement-api-version', '1.4',
            'resource', 'provider', 'inventory', 'delete', RP])
        self.assertEqual(1, code)
        self.assertIn('requires --os-placement-api-version 1.5', err)

    def test_traits_need_1_6(self):
        code, _out, err = fakes.run(['--os-placement-api-version', '1.5',
                                     'trait', 'list'])
        self.assertEqual(1, code)
        self.assertIn('This command requires --os-placement-api-version '
                      '1.6 or greater (using 1.5)', err)

    def test_aggregate_set_old_body_form(self):
        self.api.add('PUT', '/resource_providers/%s/aggregates' % RP, 200,
                     {'aggregates': ['a2', 'a1']})
        out = fakes.run_json(self, [
            '--os-placement-api-version', '1.10', 'resource', 'provider',
            'aggregate', 'set', RP, '--aggregate', 'a1', '--aggregate',
            'a2'])
        self.assertEqual(['a1', 'a2'], self.api.last()['json'])
        self.assertEqual([{'uuid': 'a1'}, {'uuid': 'a2'}], out)

    def test_allocation_set_body(self):
        url = '/allocations/' + CONSUMER
        self.api.add('GET', url, 200, {'allocations': {},
                                       'consumer_generation': None})
        self.api.add('GET', url, 200, {
            'allocations': {RP: {'generation': 2,
                                 'resources': {'VCPU': 2}}},
            'consumer_generation': 1, 'project_id': 'p', 'user_id': 'u',
            'consumer_type': 'INSTANCE'})
        self.api.add('PUT', url, 204)
        out = fakes.run_json(self, [
            'resource', 'allocation', 'set', CONSUMER,
            '--allocation', 'rp=%s,VCPU=2' % RP, '--project-id', 'p',
            '--user-id', 'u', '--consumer-type', 'INSTANCE'])
        self.assertEqual({'allocations': {RP: {'resources': {'VCPU': 2}}},
                          'project_id': 'p', 'user_id': 'u',
                          'consumer_generation': None,
                          'consumer_type': 'INSTANCE'},
                         self.api.last('PUT')['json'])
        self.assertEqual([{'resource_provider': RP, 'generation': 2,
                           'resources': {'VCPU': 2}, 'project_id': 'p',
                           'user_id': 'u', 'consumer_type': 'INSTANCE'}],
                         out)

    def test_allocation_unset_one_provider(self):
        url = '/allocations/' + CONSUMER
        self.api.add('GET', url, 200, {
            'allocations': {RP: {'generation': 2, 'resources': {'VCPU': 2}},
                            RP2: {'generation': 1,
                                  'resources': {'DISK_GB': 5}}},
            'consumer_generation': 4, 'project_id': 'p', 'user_id': 'u',
            'consumer_type': 'INSTANCE'})
        self.api.add('PUT', url, 204)
        code, _out, err = fakes.run(['resource', 'allocation', 'unset',
                                     CONSUMER, '--provider', RP2])
        self.assertEqual(0, code, err)
        self.assertEqual({'allocations': {RP: {'resources': {'VCPU': 2}}},
                          'project_id': 'p', 'user_id': 'u',
                          'consumer_generation': 4,
                          'consumer_type': 'INSTANCE'},
                         self.api.last('PUT')['json'])

    def test_reshape_posts_body_read_from_stdin(self):
        body = {'inventories': {RP: {'resource_provider_generation': 1,
                                     'inventories': {}}},
                'allocations': {}}
        self.api.add('POST', '/reshaper', 204)
        self.useFixture(fixtures.MonkeyPatch(
            'sys.stdin', io.StringIO(json.dumps(body))))
        code, out, err = fakes.run(['resource', 'reshape', '--file', '-'])
        self.assertEqual(0, code, err)
        self.assertEqual('', out)
        self.assertEqual(body, self.api.last('POST')['json'])

    def test_allocation_batch_set_posts_file(self):
        body = {CONSUMER: {'allocations': {RP: {'resources': {'VCPU': 1}}},
                           'project_id': 'p', 'user_id': 'u',
                           'consumer_generation': None}}
        path = os.path.join(self.state_path, 'batch.json')
        with open(path, 'w') as f:
            json.dump(body, f)
        self.api.add('POST', '/allocations', 204)
        code, _out, err = fakes.run(['resource', 'allocation', 'batch',
                                     'set', '--file', path])
        self.assertEqual(0, code, err)
        self.assertEqual(body, self.api.last('POST')['json'])

    def test_allocation_bad_option(self):
        code, _out, err = fakes.run(['resource', 'allocation', 'set',
                                     CONSUMER, '--allocation', 'VCPU=2',
                                     '--project-id', 'p', '--user-id', 'u'])
        self.assertEqual(1, code)
        self.assertIn('--allocation expects rp=<uuid>', err)

    def test_usage_grouped_by_consumer_type(self):
        self.api.add('GET', '/usages', 200, {'usages': {
            'INSTANCE': {'consumer_count': 2, 'VCPU': 4}}})
        out = fakes.run_json(self, ['resource', 'usage', 'show', 'p'])
        self.assertEqual([{'consumer_type': 'INSTANCE',
                           'resource_class': 'VCPU', 'usage': 4,
                           'consumer_count': 2}], out)

    def test_usage_before_1_38(self):
        self.api.add('GET', '/usages', 200, {'usages': {'VCPU': 4}})
        out = fakes.run_json(self, ['--os-placement-api-version', '1.9',
                                    'resource', 'usage', 'show', 'p',
                                    '--user-id', 'u'])
        self.assertEqual([{'resource_class': 'VCPU', 'usage': 4}], out)
        self.assertEqual({'project_id': 'p', 'user_id': 'u'},
                         self.api.last()['params'])

    def test_table_output_formats_structures(self):
        self.api.add('GET', '/allocations/' + CONSUMER, 200, {
            'allocations': {RP: {'generation': 2,
                                 'resources': {'VCPU': 2}}},
            'project_id': 'p', 'user_id': 'u', 'consumer_type': 'X'})
        code, out, err = fakes.run(['resource', 'allocation', 'show',
                                    CONSUMER])
        self.assertEqual(0, code, err)
        self.assertIn('{"VCPU": 2}', out)

    def test_inventory_list_column_order(self):
        self.api.add('GET', '/resource_providers/%s/inventories' % RP, 200, {
            'inventories': {'VCPU': {'total': 8, 'allocation_ratio': 2.0,
                                     'reserved': 1, 'min_unit': 1,
                                     'max_unit': 4, 'step_size': 1}},
            'resource_provider_generation': 1})
        self.api.add('GET', '/resource_providers/%s/usages' % RP, 200, {
            'usages': {'VCPU': 3}, 'resource_provider_generation': 1})
        code, out, err = fakes.run(['resource', 'provider', 'inventory',
                                    'list', RP, '-f', 'value'])
        self.assertEqual(0, code, err)
        # resource_class allocation_ratio min_unit max_unit reserved
        # step_size total used
        self.assertEqual('VCPU 2.0 1 4 1 1 8 3\n', out)

    def test_tree_show_top_down_with_a_late_child(self):
        # The listing names a provider whose parent is not in it (the
        # tree changed meanwhile): it is shown as a root, not dropped.
        providers = [
            {'uuid': 'b', 'name': 'cn_b', 'parent_provider_uuid': 'r',
             'generation': 1},
            {'uuid': 'r', 'name': 'cn', 'parent_provider_uuid': None,
             'generation': 3},
            {'uuid': 'x', 'name': 'late', 'parent_provider_uuid': 'gone',
             'generation': 0},
            {'uuid': 'a', 'name': 'cn_a', 'parent_provider_uuid': 'r',
             'generation': 2},
            {'uuid': 'c', 'name': 'cn_a_0', 'parent_provider_uuid': 'a',
             'generation': 0}]
        self.api.add('GET', '/resource_providers', 200,
                     {'resource_providers': providers})
        for p in providers:
            url = '/resource_providers/' + p['uuid']
            self.api.add('GET', url + '/inventories', 200, {
                'inventories': {}, 'resource_provider_generation': 0})
            self.api.add('GET', url + '/usages', 200, {'usages': {}})
            self.api.add('GET', url + '/traits', 200, {'traits': []})
            self.api.add('GET', url + '/aggregates', 200,
                         {'aggregates': []})
        out = fakes.run_json(self, ['resource', 'provider', 'tree', 'show',
                                    RP])
        self.assertEqual({'in_tree': RP}, self.api.requests[0]['params'])
        self.assertEqual(
            [('cn', 0), ('cn_a', 1), ('cn_a_0', 2), ('cn_b', 1),
             ('late', 0)],
            [(p['name'], p['depth']) for p in out])
        # One listing, then four reads per provider.
        self.assertEqual(1 + 4 * len(providers), len(self.api.requests))
