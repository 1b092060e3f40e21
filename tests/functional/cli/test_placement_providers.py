"""Resource providers, inventories, traits, aggregates, allocations and
usages through ``alloc resource ...`` end to end."""

from oslo_utils import uuidutils

from tests.functional.cli import base

INVENTORY_KEYS = {'resource_class', 'allocation_ratio', 'max_unit',
                  'min_unit', 'reserved', 'step_size', 'total'}


class TestResourceProviderCommands(base.PlacementCLITestCase):

    def create(self, name, *extra):
        return self.alloc('resource', 'provider', 'create', name, *extra)

    def test_create_list_show_set_delete(self):
        root = self.create('root')
        self.assertEqual({'uuid', 'name', 'generation',
                          'root_provider_uuid', 'parent_provider_uuid'},
                         set(root))
        self.assertEqual(root['uuid'], root['root_provider_uuid'])
        self.assertIsNone(root['parent_provider_uuid'])
        child_uuid = uuidutils.generate_uuid()
        child = self.create('child', '--uuid', child_uuid,
                            '--parent-provider', root['uuid'])
        self.assertEqual(child_uuid, child['uuid'])
        self.assertEqual(root['uuid'], child['parent_provider_uuid'])
        self.assertEqual(root['uuid'], child['root_provider_uuid'])

        listed = self.alloc('resource', 'provider', 'list')
        self.assertEqual({'root', 'child'}, {p['name'] for p in listed})
        self.assertEqual(
            ['child'], [p['name'] for p in self.alloc(
                'resource', 'provider', 'list', '--name', 'child')])
        self.assertEqual(2, len(self.alloc('resource', 'provider', 'list',
                                           '--in-tree', child_uuid)))

        shown = self.alloc('resource', 'provider', 'show', child_uuid)
        self.assertEqual(child, shown)
        renamed = self.alloc('resource', 'provider', 'set', child_uuid,
                             '--name', 'renamed')
        self.assertEqual('renamed', renamed['name'])

        err = self.alloc_fails('resource', 'provider', 'delete',
                               root['uuid'])
        self.assertIn('(HTTP 409)', err)
        self.assertIn('placement.resource_provider.cannot_delete_parent',
                      err)
        self.alloc('resource', 'provider', 'delete', child_uuid, fmt=None)
        self.alloc('resource', 'provider', 'delete', root['uuid'], fmt=None)
        self.assertEqual([], self.alloc('resource', 'provider', 'list'))
        err = self.alloc_fails('resource', 'provider', 'show', child_uuid)
        self.assertIn('(HTTP 404)', err)

    def test_old_microversion_columns(self):
        rp = self.alloc('--os-placement-api-version', '1.10', 'resource',
                        'provider', 'create', 'old')
        self.assertEqual({'uuid', 'name', 'generation'}, set(rp))

    def test_duplicate_name(self):
        self.create('dup')
        err = self.alloc_fails('resource', 'provider', 'create', 'dup')
        self.assertIn('(HTTP 409)', err)
        self.assertIn('placement.duplicate_name', err)

    def test_inventory_commands(self):
        rp = self.create('compute')['uuid']
        rows = self.alloc('resource', 'provider', 'inventory', 'set', rp,
                          '--resource', 'VCPU=8',
                          '--resource', 'VCPU:allocation_ratio=4',
                          '--resource', 'MEMORY_MB=4096')
        by_rc = {r['resource_class']: r for r in rows}
        self.assertEqual({'VCPU', 'MEMORY_MB'}, set(by_rc))
        self.assertEqual(INVENTORY_KEYS, set(by_rc['VCPU']))
        self.assertEqual(8, by_rc['VCPU']['total'])
        self.assertEqual(4.0, by_rc['VCPU']['allocation_ratio'])

        # --amend keeps MEMORY_MB; a plain set would drop it.
        rows = self.alloc('resource', 'provider', 'inventory', 'set', rp,
                          '--amend', '--resource', 'DISK_GB=100')
        self.assertEqual({'VCPU', 'MEMORY_MB', 'DISK_GB'},
                         {r['resource_class'] for r in rows})
        dry = self.alloc('resource', 'provider', 'inventory', 'set', rp,
                         '--dry-run', '--resource', 'VCPU=1')
        self.assertEqual(['VCPU'], [r['resource_class'] for r in dry])

        listed = self.alloc('resource', 'provider', 'inventory', 'list', rp)
        self.assertEqual({'VCPU', 'MEMORY_MB', 'DISK_GB'},
                         {r['resource_class'] for r in listed})
        self.assertEqual({0}, {r['used'] for r in listed})

        one = self.alloc('resource', 'provider', 'inventory', 'class',
                         'set', rp, 'VCPU', '--total', '16',
                         '--reserved', '2')
        self.assertEqual(16, one['total'])
        self.assertEqual(2, one['reserved'])
        shown = self.alloc('resource', 'provider', 'inventory', 'show', rp,
                           'VCPU')
        self.assertEqual(16, shown['total'])
        self.assertEqual(0, shown['used'])

        self.alloc('resource', 'provider', 'inventory', 'delete', rp,
                   '--resource-class', 'DISK_GB', fmt=None)
        self.assertEqual({'VCPU', 'MEMORY_MB'}, {
            r['resource_class'] for r in self.alloc(
                'resource', 'provider', 'inventory', 'list', rp)})
        self.alloc('resource', 'provider', 'inventory', 'delete', rp,
                   fmt=None)
        self.assertEqual([], self.alloc('resource', 'provider', 'inventory',
                                        'list', rp))
        err = self.alloc_fails('resource', 'provider', 'inventory', 'show',
                               rp, 'VCPU')
        self.assertIn('(HTTP 404)', err)

    def test_inventory_set_aggregate(self):
        agg = uuidutils.generate_uuid()
        rps = [self.create('rp%d' % i)['uuid'] for i in range(2)]
        for rp in rps:
            self.alloc('resource', 'provider', 'aggregate', 'set', rp,
                       '--aggregate', agg)
        rows = self.alloc('resource', 'provider', 'inventory', 'set', agg,
                          '--aggregate', '--resource', 'VCPU=4')
        self.assertEqual(sorted(rps),
                         sorted(r['resource_provider'] for r in rows))

    def test_provider_traits(self):
        rp = self.create('traits')['uuid']
        self.alloc('trait', 'create', 'CUSTOM_GOLD', fmt=None)
        rows = self.alloc('resource', 'provider', 'trait', 'set', rp,
                          '--trait', 'CUSTOM_GOLD', '--trait',
                          'HW_CPU_X86_AVX')
        self.assertEqual([{'name': 'CUSTOM_GOLD'},
                          {'name': 'HW_CPU_X86_AVX'}], rows)
        self.assertEqual(rows, self.alloc('resource', 'provider', 'trait',
                                          'list', rp))
        associated = self.alloc('trait', 'list', '--associated')
        self.assertEqual([{'name': 'CUSTOM_GOLD'},
                          {'name': 'HW_CPU_X86_AVX'}], associated)
        required = self.alloc('resource', 'provider', 'list', '--required',
                              'CUSTOM_GOLD')
        self.assertEqual([rp], [p['uuid'] for p in required])
        self.assertEqual([], self.alloc('resource', 'provider', 'list',
                                        '--forbidden', 'CUSTOM_GOLD'))
        self.alloc('resource', 'provider', 'trait', 'delete', rp, fmt=None)
        self.assertEqual([], self.alloc('resource', 'provider', 'trait',
                                        'list', rp))
        err = self.alloc_fails('resource', 'provider', 'trait', 'set', rp,
                               '--trait', 'CUSTOM_MISSING')
        self.assertIn('(HTTP 400)', err)
        self.assertIn('CUSTOM_MISSING', err)

    def test_aggregates(self):
        rp = self.create('agg')['uuid']
        aggs = sorted(uuidutils.generate_uuid() for _ in range(2))
        rows = self.alloc('resource', 'provider', 'aggregate', 'set', rp,
                          '--aggregate', aggs[0], '--aggregate', aggs[1])
        self.assertEqual([{'uuid': a} for a in aggs], rows)
        self.assertEqual(rows, self.alloc('resource', 'provider',
                                          'aggregate', 'list', rp))
        member = self.alloc('resource', 'provider', 'list', '--member-of',
                            aggs[0])
        self.assertEqual([rp], [p['uuid'] for p in member])
        # An old generation is refused instead of overwriting.
        err = self.alloc_fails('resource', 'provider', 'aggregate', 'set',
                               rp, '--aggregate', aggs[0],
                               '--generation', '0')
        self.assertIn('(HTTP 409)', err)
        self.assertIn('placement.concurrent_update', err)
        old = self.alloc('--os-placement-api-version', '1.10', 'resource',
                         'provider', 'aggregate', 'set', rp)
        self.assertEqual([], old)

    def test_allocations_and_usages(self):
        rp = self.create('host')['uuid']
        rp2 = self.create('host2')['uuid']
        for uuid in (rp, rp2):
            self.alloc('resource', 'provider', 'inventory', 'set', uuid,
                       '--resource', 'VCPU=8', '--resource',
                       'MEMORY_MB=1024')
        consumer = uuidutils.generate_uuid()
        project = uuidutils.generate_uuid()
        user = uuidutils.generate_uuid()
        rows = self.alloc('resource', 'allocation', 'set', consumer,
                          '--allocation', 'rp=%s,VCPU=2,MEMORY_MB=256' % rp,
                          '--allocation', 'rp=%s,VCPU=1' % rp2,
                          '--project-id', project, '--user-id', user,
                          '--consumer-type', 'INSTANCE')
        by_rp = {r['resource_provider']: r for r in rows}
        self.assertEqual({rp, rp2}, set(by_rp))
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 256},
                         by_rp[rp]['resources'])
        self.assertEqual(project, by_rp[rp]['project_id'])
        self.assertEqual('INSTANCE', by_rp[rp]['consumer_type'])
        self.assertEqual(rows, self.alloc('resource', 'allocation', 'show',
                                          consumer))

        # Capacity left: rp has 6 VCPU free, rp2 has 7.
        fits = self.alloc('resource', 'provider', 'list', '--resource',
                          'VCPU=7')
        self.assertEqual([rp2], [p['uuid'] for p in fits])
        usage = self.alloc('resource', 'provider', 'usage', 'show', rp)
        self.assertEqual([{'resource_class': 'MEMORY_MB', 'usage': 256},
                          {'resource_class': 'VCPU', 'usage': 2}], usage)
        shown = self.alloc('resource', 'provider', 'show', rp,
                           '--allocations')
        self.assertEqual([consumer], list(shown['allocations']))
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 256},
                         shown['allocations'][consumer]['resources'])
        total = self.alloc('resource', 'usage', 'show', project)
        self.assertEqual([
            {'consumer_type': 'INSTANCE', 'resource_class': 'MEMORY_MB',
             'usage': 256, 'consumer_count': 1},
            {'consumer_type': 'INSTANCE', 'resource_class': 'VCPU',
             'usage': 3, 'consumer_count': 1}], total)
        old = self.alloc('--os-placement-api-version', '1.9', 'resource',
                         'usage', 'show', project, '--user-id', user)
        self.assertEqual([{'resource_class': 'MEMORY_MB', 'usage': 256},
                          {'resource_class': 'VCPU', 'usage': 3}], old)

        # Over capacity: the server's refusal reaches the user.
        err = self.alloc_fails(
            'resource', 'allocation', 'set', uuidutils.generate_uuid(),
            '--allocation', 'rp=%s,VCPU=100' % rp, '--project-id', project,
            '--user-id', user, '--consumer-type', 'INSTANCE')
        self.assertIn('(HTTP 409)', err)

        rows = self.alloc('resource', 'allocation', 'unset', consumer,
                          '--provider', rp2)
        self.assertEqual([rp], [r['resource_provider'] for r in rows])
        rows = self.alloc('resource', 'allocation', 'unset', consumer,
                          '--resource-class', 'MEMORY_MB')
        self.assertEqual([{'VCPU': 2}], [r['resources'] for r in rows])
        self.assertEqual([], self.alloc('resource', 'allocation', 'unset',
                                        consumer))
        self.assertEqual({0}, {r['usage'] for r in self.alloc(
            'resource', 'provider', 'usage', 'show', rp)})

    def test_allocation_delete_and_osc_placement_names(self):
        rp = self.create('host3')['uuid']
        self.alloc('resource', 'provider', 'inventory', 'set', rp,
                   '--resource', 'VCPU=4')
        consumer = uuidutils.generate_uuid()
        rows = self.alloc('resource', 'provider', 'allocation', 'set',
                          consumer, '--allocation', 'rp=%s,VCPU=1' % rp,
                          '--project-id', 'p', '--user-id', 'u',
                          '--consumer-type', 'INSTANCE')
        self.assertEqual([rp], [r['resource_provider'] for r in rows])
        self.assertEqual(rows, self.alloc('resource', 'provider',
                                          'allocation', 'show', consumer))
        # Unsetting another provider's allocations leaves these alone.
        self.assertEqual([rp], [r['resource_provider'] for r in self.alloc(
            'resource', 'provider', 'allocation', 'unset', consumer,
            '--provider', uuidutils.generate_uuid())])
        self.alloc('resource', 'allocation', 'delete', consumer, fmt=None)
        self.assertEqual([], self.alloc('resource', 'allocation', 'show',
                                        consumer))
        self.alloc('resource', 'allocation', 'set', consumer,
                   '--allocation', 'rp=%s,VCPU=1' % rp, '--project-id',
                   'p', '--user-id', 'u', '--consumer-type', 'INSTANCE')
        self.alloc('resource', 'provider', 'allocation', 'delete', consumer,
                   fmt=None)
        self.assertEqual([], self.alloc('resource', 'allocation', 'show',
                                        consumer))
        err = self.alloc_fails('resource', 'allocation', 'delete', consumer)
        self.assertIn('(HTTP 404)', err)


class TestProvidersByName(base.PlacementCLITestCase):
    """``alloc resource provider ...`` takes a provider's name where it
    takes its UUID."""

    def test_commands_take_names(self):
        root = self.alloc('resource', 'provider', 'create', 'root')
        child = self.alloc('resource', 'provider', 'create', 'child',
                           '--parent-provider', 'root')
        self.assertEqual(root['uuid'], child['parent_provider_uuid'])
        self.assertEqual(child, self.alloc('resource', 'provider', 'show',
                                           'child'))
        self.assertEqual(
            {'root', 'child'},
            {p['name'] for p in self.alloc('resource', 'provider', 'list',
                                           '--in-tree', 'child')})
        rows = self.alloc('resource', 'provider', 'inventory', 'set',
                          'child', '--resource', 'VCPU=4')
        self.assertEqual(['VCPU'], [r['resource_class'] for r in rows])
        self.assertEqual(
            ['VCPU'], [r['resource_class'] for r in self.alloc(
                'resource', 'provider', 'inventory', 'list', 'child')])
        self.assertEqual(4, self.alloc('resource', 'provider', 'inventory',
                                       'show', 'child', 'VCPU')['total'])
        self.alloc('resource', 'provider', 'trait', 'set', 'child',
                   '--trait', 'HW_CPU_X86_AVX2')
        self.assertEqual(
            [{'name': 'HW_CPU_X86_AVX2'}],
            self.alloc('resource', 'provider', 'trait', 'list', 'child'))
        agg = uuidutils.generate_uuid()
        self.alloc('resource', 'provider', 'aggregate', 'set', 'child',
                   '--aggregate', agg)
        self.assertEqual([{'uuid': agg}], self.alloc(
            'resource', 'provider', 'aggregate', 'list', 'child'))
        self.assertEqual([{'resource_class': 'VCPU', 'usage': 0}],
                         self.alloc('resource', 'provider', 'usage', 'show',
                                    'child'))
        renamed = self.alloc('resource', 'provider', 'set', 'child',
                             '--name', 'leaf', '--parent-provider', 'root')
        self.assertEqual(child['uuid'], renamed['uuid'])
        self.alloc('resource', 'provider', 'inventory', 'delete', 'leaf',
                   '--resource-class', 'VCPU', fmt=None)
        self.alloc('resource', 'provider', 'trait', 'delete', 'leaf',
                   fmt=None)
        self.alloc('resource', 'provider', 'delete', 'leaf', fmt=None)
        self.alloc('resource', 'provider', 'delete', 'root', fmt=None)
        self.assertEqual([], self.alloc('resource', 'provider', 'list'))

    def test_unknown_name_is_a_clear_error(self):
        err = self.alloc_fails('resource', 'provider', 'show', 'nobody')
        self.assertIn("No resource provider with the name or UUID 'nobody'",
                      err)
        # A UUID is sent as it is: the server answers for it.
        err = self.alloc_fails('resource', 'provider', 'show',
                               uuidutils.generate_uuid())
        self.assertIn('(HTTP 404)', err)
