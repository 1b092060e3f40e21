"""Filtering resource providers (``GET /resource_providers``)."""

from alloc_framework.objects.placement import aggregate
from alloc_framework.objects.placement import exception
from alloc_framework.objects.placement import inventory
from alloc_framework.objects.placement import provider_search
from alloc_framework.objects.placement import resource_provider as rp_obj
from alloc_framework.objects.placement import resource_provider_trait
from tests.functional.objects.placement import base

Inv = inventory.Inventory
AGG_A = 'aaaaaaaa-0000-4000-8000-00000000000a'
AGG_B = 'bbbbbbbb-0000-4000-8000-00000000000b'
AGG_C = 'cccccccc-0000-4000-8000-00000000000c'


class FilterTestCase(base.PlacementDBTestCase):

    def setUp(self):
        super().setUp()
        ctx = self.context
        self.rp1 = rp_obj.create(ctx, 'rp1')
        self.rp2 = rp_obj.create(ctx, 'rp2')
        self.rp3 = rp_obj.create(ctx, 'rp3',
                                 parent_provider_uuid=self.rp1.uuid)
        aggregate.set_aggregates(ctx, self.rp1, [AGG_A])
        aggregate.set_aggregates(ctx, self.rp2, [AGG_A, AGG_B])
        aggregate.set_aggregates(ctx, self.rp3, [AGG_C])
        resource_provider_trait.set_traits(ctx, self.rp1, ['CUSTOM_FAST'])
        resource_provider_trait.set_traits(ctx, self.rp2,
                                           ['CUSTOM_FAST', 'CUSTOM_SLOW'])
        resource_provider_trait.set_traits(ctx, self.rp3, ['CUSTOM_SLOW'])

    def _names(self, **filters):
        return [rp.name for rp in provider_search.get_all_by_filters(
            self.context, **filters)]

    def test_no_filter(self):
        rps = provider_search.get_all_by_filters(self.context)
        self.assertEqual(['rp1', 'rp2', 'rp3'], [rp.name for rp in rps])
        self.assertEqual(self.rp1.uuid, rps[2].parent_provider_uuid)
        self.assertEqual(self.rp1.uuid, rps[2].root_provider_uuid)
        self.assertEqual(2, rps[2].generation)

    def test_name_uuid(self):
        self.assertEqual(['rp2'], self._names(name='rp2'))
        self.assertEqual(['rp3'], self._names(uuid=self.rp3.uuid))
        self.assertEqual([], self._names(name='rp2', uuid=self.rp3.uuid))

    def test_in_tree(self):
        self.assertEqual(['rp1', 'rp3'], self._names(in_tree=self.rp3.uuid))
        self.assertEqual(['rp2'], self._names(in_tree=self.rp2.uuid))
        self.assertEqual([], self._names(
            in_tree='dddddddd-0000-4000-8000-000000000000'))

    def test_member_of(self):
        self.assertEqual(['rp1', 'rp2'], self._names(member_of=[{AGG_A}]))
        self.assertEqual(['rp2', 'rp3'],
                         self._names(member_of=[{AGG_B, AGG_C}]))
        self.assertEqual(['rp2'],
                         self._names(member_of=[{AGG_A}, {AGG_B, AGG_C}]))
        self.assertEqual(['rp1', 'rp3'], self._names(forbidden_aggs={AGG_B}))
        self.assertEqual(['rp1'], self._names(member_of=[{AGG_A}],
                                              forbidden_aggs={AGG_B}))
        self.assertEqual([], self._names(member_of=[{AGG_A}],
                                         forbidden_aggs={AGG_A}))

    def test_traits(self):
        self.assertEqual(['rp1', 'rp2'],
                         self._names(required_traits=[{'CUSTOM_FAST'}]))
        self.assertEqual(['rp2'], self._names(
            required_traits=[{'CUSTOM_FAST'}, {'CUSTOM_SLOW'}]))
        self.assertEqual(['rp1'], self._names(
            required_traits=[{'CUSTOM_FAST'}],
            forbidden_traits={'CUSTOM_SLOW'}))
        self.assertEqual(['rp1', 'rp2', 'rp3'], self._names(
            required_traits=[{'CUSTOM_FAST', 'CUSTOM_SLOW'}]))
        self.assertEqual(['rp3'], self._names(
            forbidden_traits={'CUSTOM_FAST'}))
        exc = self.assertRaises(exception.TraitNotFound,
                                provider_search.get_all_by_filters,
                                self.context,
                                required_traits=[{'CUSTOM_NOPE'}],
                                forbidden_traits={'CUSTOM_NADA'})
        self.assertIn('CUSTOM_NADA, CUSTOM_NOPE', str(exc))

    def test_resources(self):
        ctx = self.context
        inventory.set_inventories(ctx, self.rp1, [
            Inv('VCPU', 8, reserved=2, allocation_ratio=2.0),
            Inv('DISK_GB', 100, step_size=10, min_unit=10, max_unit=50)])
        inventory.set_inventories(ctx, self.rp2, [Inv('VCPU', 4)])
        # rp1 has 12 VCPU of capacity, rp2 4.
        self.assertEqual(['rp1', 'rp2'], self._names(resources={'VCPU': 4}))
        self.assertEqual(['rp1'], self._names(resources={'VCPU': 12}))
        self.assertEqual([], self._names(resources={'VCPU': 13}))
        self.allocate(self.rp1, 'VCPU', 10)
        self.assertEqual(['rp1', 'rp2'], self._names(resources={'VCPU': 2}))
        self.assertEqual(['rp2'], self._names(resources={'VCPU': 3}))
        # min_unit, max_unit and step_size apply to the amount.
        self.assertEqual(['rp1'], self._names(resources={'DISK_GB': 20}))
        self.assertEqual([], self._names(resources={'DISK_GB': 25}))
        self.assertEqual([], self._names(resources={'DISK_GB': 5}))
        self.assertEqual([], self._names(resources={'DISK_GB': 60}))
        self.assertEqual([], self._names(resources={'DISK_GB': 20,
                                                    'VCPU': 3}))
        self.assertRaises(exception.ResourceClassNotFound,
                          provider_search.get_all_by_filters, ctx,
                          resources={'CUSTOM_NOPE': 1})
