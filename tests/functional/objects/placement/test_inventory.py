"""Inventories, provider aggregates and provider traits (object level)."""

import logging

import fixtures
from oslo_db import exception as db_exc

from alloc_framework.db import api as db_api
from alloc_framework.objects.placement import aggregate
from alloc_framework.objects.placement import exception
from alloc_framework.objects.placement import inventory
from alloc_framework.objects.placement import resource_provider as rp_obj
from alloc_framework.objects.placement import resource_provider_trait
from tests.functional.objects.placement import base

Inv = inventory.Inventory
AGG_1 = '11111111-0000-4000-8000-000000000001'
AGG_2 = '22222222-0000-4000-8000-000000000002'


class InventoryTestCase(base.PlacementDBTestCase):

    def setUp(self):
        super().setUp()
        self.rp = rp_obj.create(self.context, 'cn1')

    def _classes(self):
        return {i.resource_class: i.total for i in
                inventory.get_all_by_resource_provider(self.context,
                                                       self.rp)}

    def test_defaults(self):
        inv = Inv('VCPU', 8)
        self.assertEqual(
            {'total': 8, 'reserved': 0, 'min_unit': 1,
             'max_unit': 2147483647, 'step_size': 1,
             'allocation_ratio': 1.0}, inv.as_dict())

    def test_set_replace_and_remove(self):
        result = inventory.set_inventories(self.context, self.rp, [
            Inv('VCPU', 8, allocation_ratio=16.0), Inv('DISK_GB', 100)])
        self.assertEqual(['DISK_GB', 'VCPU'],
                         [i.resource_class for i in result])
        self.assertEqual(1, self.rp.generation)
        inventory.set_inventories(self.context, self.rp, [
            Inv('VCPU', 4), Inv('MEMORY_MB', 1024)])
        self.assertEqual({'VCPU': 4, 'MEMORY_MB': 1024}, self._classes())
        self.assertEqual(2, rp_obj.get_by_uuid(
            self.context, self.rp.uuid).generation)
        inventory.set_inventories(self.context, self.rp, [])
        self.assertEqual({}, self._classes())

    def test_set_stale_generation(self):
        stale = rp_obj.get_by_uuid(self.context, self.rp.uuid)
        inventory.set_inventories(self.context, self.rp, [Inv('VCPU', 8)])
        self.assertRaises(
            exception.ResourceProviderConcurrentUpdateDetected,
            inventory.set_inventories, self.context, stale,
            [Inv('VCPU', 1)])
        self.assertEqual({'VCPU': 8}, self._classes())

    def test_deadlock_is_a_concurrent_update(self):
        inventory.set_inventories(self.context, self.rp, [Inv('VCPU', 8)])
        self.useFixture(fixtures.MockPatchObject(
            rp_obj, 'usages_by_class',
            side_effect=db_exc.DBDeadlock()))
        self.assertRaises(
            exception.ResourceProviderConcurrentUpdateDetected,
            inventory.set_inventories, self.context, self.rp,
            [Inv('VCPU', 4)])
        # The rolled back write leaves the generation as it was.
        self.assertEqual(1, self.rp.generation)
        self.assertEqual(1, rp_obj.get_by_uuid(
            self.context, self.rp.uuid).generation)

    def test_set_unknown_class(self):
        self.assertRaises(exception.ResourceClassNotFound,
                          inventory.set_inventories, self.context, self.rp,
                          [Inv('CUSTOM_NOPE', 1)])
        self.assertEqual(0, rp_obj.get_by_uuid(
            self.context, self.rp.uuid).generation)

    def _warnings(self):
        return self.useFixture(fixtures.FakeLogger(
            name=inventory.__name__, level=logging.WARNING))

    def test_allocated_class_cannot_be_removed(self):
        inventory.set_inventories(self.context, self.rp, [
            Inv('VCPU', 8), Inv('DISK_GB', 100)])
        self.allocate(self.rp, 'VCPU', 6)
        exc = self.assertRaises(
            exception.InventoryInUse, inventory.set_inventories,
            self.context, self.rp, [Inv('DISK_GB', 100)])
        self.assertIn('VCPU', str(exc))
        self.assertRaises(exception.InventoryInUse,
                          inventory.delete_inventory, self.context, self.rp,
                          'VCPU')
        self.assertRaises(exception.InventoryInUse,
                          inventory.set_inventories, self.context, self.rp,
                          [])
        self.assertEqual({'VCPU': 8, 'DISK_GB': 100}, self._classes())
        self.assertEqual(1, rp_obj.get_by_uuid(
            self.context, self.rp.uuid).generation)

    def test_shrinking_below_usage_is_accepted_with_a_warning(self):
        # As upstream: the provider is over capacity until allocations go.
        inventory.set_inventories(self.context, self.rp, [
            Inv('VCPU', 8), Inv('DISK_GB', 100)])
        self.allocate(self.rp, 'VCPU', 6)
        logger = self._warnings()
        inventory.set_inventories(self.context, self.rp, [
            Inv('VCPU', 5), Inv('DISK_GB', 100)])
        self.assertEqual({'VCPU': 5, 'DISK_GB': 100}, self._classes())
        self.assertEqual(2, self.rp.generation)
        self.assertIn('Resource provider %s is now over capacity for VCPU: '
                      '6 used, new capacity 5' % self.rp.uuid,
                      logger.output)
        self.assertNotIn('DISK_GB', logger.output)
        # Reserved and ratio count: (8 - 3) * 1.0 = 5 < 6.
        logger = self._warnings()
        inventory.set_inventories(self.context, self.rp, [
            Inv('VCPU', 8, reserved=3), Inv('DISK_GB', 1)])
        self.assertIn('6 used, new capacity 5', logger.output)
        # One class alone, through update_inventory.
        logger = self._warnings()
        inv = inventory.update_inventory(self.context, self.rp,
                                         Inv('VCPU', 4))
        self.assertEqual(4, inv.total)
        self.assertIn('6 used, new capacity 4', logger.output)

    def test_down_to_the_usage_does_not_warn(self):
        inventory.set_inventories(self.context, self.rp, [Inv('VCPU', 8)])
        self.allocate(self.rp, 'VCPU', 6)
        logger = self._warnings()
        # (3 - 0) * 2.0 = 6: exactly the usage.
        inventory.set_inventories(self.context, self.rp, [
            Inv('VCPU', 3, allocation_ratio=2.0)])
        inventory.update_inventory(self.context, self.rp, Inv('VCPU', 6))
        self.assertEqual({'VCPU': 6}, self._classes())
        self.assertEqual('', logger.output)

    def test_no_warning_when_the_change_rolls_back(self):
        inventory.set_inventories(self.context, self.rp, [
            Inv('VCPU', 8), Inv('DISK_GB', 100)])
        self.allocate(self.rp, 'VCPU', 6)
        logger = self._warnings()

        @db_api.writer
        def shrink_then_fail(context):
            inventory.set_inventories(context, self.rp, [
                Inv('VCPU', 2), Inv('DISK_GB', 100)])
            raise RuntimeError('later step failed')

        self.assertRaises(RuntimeError, shrink_then_fail, self.context)
        self.assertEqual({'VCPU': 8, 'DISK_GB': 100}, self._classes())
        self.assertEqual('', logger.output)

    def test_add_update_delete_one(self):
        inv = inventory.add_inventory(self.context, self.rp,
                                      Inv('VCPU', 8, max_unit=4))
        self.assertEqual(4, inv.max_unit)
        self.assertEqual(1, self.rp.generation)
        self.assertRaises(exception.InventoryExists,
                          inventory.add_inventory, self.context, self.rp,
                          Inv('VCPU', 8))
        inv = inventory.update_inventory(self.context, self.rp,
                                         Inv('VCPU', 16, reserved=2))
        self.assertEqual((16, 2), (inv.total, inv.reserved))
        self.assertRaises(exception.InventoryWithResourceClassNotFound,
                          inventory.update_inventory, self.context,
                          self.rp, Inv('DISK_GB', 16))
        inventory.delete_inventory(self.context, self.rp, 'VCPU')
        self.assertEqual({}, self._classes())
        self.assertRaises(exception.InventoryWithResourceClassNotFound,
                          inventory.delete_inventory, self.context,
                          self.rp, 'VCPU')
        self.assertRaises(exception.InventoryWithResourceClassNotFound,
                          inventory.delete_inventory, self.context,
                          self.rp, 'CUSTOM_NOPE')

    def test_validate(self):
        rp = self.rp
        inventory.validate([Inv('VCPU', 8, reserved=8)], rp)
        self.assertRaises(exception.InvalidInventoryCapacity,
                          inventory.validate, [Inv('VCPU', 8, reserved=8)],
                          rp, reserved_can_be_total=False)
        self.assertRaises(exception.InvalidInventoryCapacity,
                          inventory.validate, [Inv('VCPU', 8, reserved=9)],
                          rp)
        self.assertRaises(exception.InvalidInventory,
                          inventory.validate,
                          [Inv('VCPU', 8, min_unit=5, max_unit=4)], rp)


class AggregateTestCase(base.PlacementDBTestCase):

    def test_set_and_get(self):
        rp = rp_obj.create(self.context, 'cn1')
        other = rp_obj.create(self.context, 'cn2')
        self.assertEqual([], aggregate.get_aggregates_by_provider(
            self.context, rp))
        got = aggregate.set_aggregates(self.context, rp, [AGG_2, AGG_1])
        self.assertEqual([AGG_1, AGG_2], got)
        self.assertEqual(1, rp.generation)
        aggregate.set_aggregates(self.context, other, [AGG_1])
        aggregate.set_aggregates(self.context, rp, [AGG_2])
        self.assertEqual([AGG_2], aggregate.get_aggregates_by_provider(
            self.context, rp))
        self.assertEqual([AGG_1], aggregate.get_aggregates_by_provider(
            self.context, other))

    def test_generation(self):
        rp = rp_obj.create(self.context, 'cn1')
        stale = rp_obj.get_by_uuid(self.context, rp.uuid)
        aggregate.set_aggregates(self.context, rp, [AGG_1])
        self.assertRaises(
            exception.ResourceProviderConcurrentUpdateDetected,
            aggregate.set_aggregates, self.context, stale, [AGG_2])
        # Callers without generations (before 1.19) do not bump it.
        aggregate.set_aggregates(self.context, stale, [AGG_2],
                                 increment_generation=False)
        self.assertEqual(1, rp_obj.get_by_uuid(self.context,
                                               rp.uuid).generation)


class ProviderTraitTestCase(base.PlacementDBTestCase):

    def test_set_get_delete(self):
        rp = rp_obj.create(self.context, 'cn1')
        self.assertEqual([], resource_provider_trait.get_traits_by_provider(
            self.context, rp))
        got = resource_provider_trait.set_traits(
            self.context, rp, ['CUSTOM_FAST', 'HW_CPU_X86_AVX'])
        self.assertEqual(['CUSTOM_FAST', 'HW_CPU_X86_AVX'], got)
        got = resource_provider_trait.set_traits(
            self.context, rp, ['CUSTOM_SLOW', 'HW_CPU_X86_AVX'])
        self.assertEqual(['CUSTOM_SLOW', 'HW_CPU_X86_AVX'], got)
        self.assertEqual(2, rp.generation)
        resource_provider_trait.delete_traits(self.context, rp)
        self.assertEqual([], resource_provider_trait.get_traits_by_provider(
            self.context, rp))
        self.assertEqual(3, rp.generation)

    def test_unknown_and_stale(self):
        rp = rp_obj.create(self.context, 'cn1')
        exc = self.assertRaises(
            exception.TraitNotFound, resource_provider_trait.set_traits,
            self.context, rp, ['CUSTOM_FAST', 'CUSTOM_X', 'CUSTOM_Y'])
        self.assertIn('CUSTOM_X, CUSTOM_Y', str(exc))
        stale = rp_obj.get_by_uuid(self.context, rp.uuid)
        resource_provider_trait.set_traits(self.context, rp, [])
        self.assertRaises(
            exception.ResourceProviderConcurrentUpdateDetected,
            resource_provider_trait.set_traits, self.context, stale,
            ['CUSTOM_FAST'])
        self.assertRaises(
            exception.ResourceProviderConcurrentUpdateDetected,
            resource_provider_trait.delete_traits, self.context, stale)
