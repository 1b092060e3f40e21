"""The reshaper at the object level: inventories and allocations move
together or not at all."""

from alloc_framework.objects.placement import allocation as alloc_obj
from alloc_framework.objects.placement import exception
from alloc_framework.objects.placement import inventory as inv_obj
from alloc_framework.objects.placement import reshaper
from alloc_framework.objects.placement import resource_provider as rp_obj
from tests.functional.objects.placement import base

ROOT = 'aaaaaaaa-0000-4000-8000-000000000001'
CHILD = 'bbbbbbbb-0000-4000-8000-000000000002'
C1 = 'c1c1c1c1-0000-4000-8000-000000000001'
C2 = 'c2c2c2c2-0000-4000-8000-000000000002'


def allocs(consumer, allocations, generation):
    return alloc_obj.ConsumerAllocations(
        consumer, allocations, 'project', 'user',
        consumer_generation=generation, check_generation=True)


class ReshaperTestCase(base.PlacementDBTestCase):

    def setUp(self):
        super().setUp()
        self.root = rp_obj.create(self.context, 'root', uuid=ROOT)
        inv_obj.set_inventories(self.context, self.root, [
            inv_obj.Inventory('VCPU', 8), inv_obj.Inventory('DISK_GB', 100)])
        self.child = rp_obj.create(self.context, 'child', uuid=CHILD,
                                   parent_provider_uuid=ROOT)
        alloc_obj.replace_all(self.context, [
            allocs(C1, {ROOT: {'VCPU': 2, 'DISK_GB': 10}}, None),
            allocs(C2, {ROOT: {'VCPU': 3}}, None)])

    def gen(self, uuid):
        return rp_obj.get_by_uuid(self.context, uuid).generation

    def inventories(self, uuid):
        rp = rp_obj.get_by_uuid(self.context, uuid)
        return {inv.resource_class: inv.total for inv in
                inv_obj.get_all_by_resource_provider(self.context, rp)}

    def allocations(self, consumer):
        consumer, rows = alloc_obj.get_all_by_consumer_id(self.context,
                                                          consumer)
        return {(a.resource_provider.uuid, a.resource_class): a.used
                for a in rows}, consumer

    def move_vcpu(self, root_gen=None, child_gen=None, c1_gen=1, c2_gen=1):
        return reshaper.reshape(self.context, [
            reshaper.ProviderInventories(
                ROOT, self.gen(ROOT) if root_gen is None else root_gen,
                [inv_obj.Inventory('DISK_GB', 100)]),
            reshaper.ProviderInventories(
                CHILD, self.gen(CHILD) if child_gen is None else child_gen,
                [inv_obj.Inventory('VCPU', 8)]),
        ], [
            allocs(C1, {ROOT: {'DISK_GB': 10}, CHILD: {'VCPU': 2}}, c1_gen),
            allocs(C2, {CHILD: {'VCPU': 3}}, c2_gen),
        ])

    def test_move_inventory_and_allocations(self):
        root_gen, child_gen = self.gen(ROOT), self.gen(CHILD)
        self.move_vcpu()
        self.assertEqual({'DISK_GB': 100}, self.inventories(ROOT))
        self.assertEqual({'VCPU': 8}, self.inventories(CHILD))
        got, consumer = self.allocations(C1)
        self.assertEqual({(ROOT, 'DISK_GB'): 10, (CHILD, 'VCPU'): 2}, got)
        self.assertEqual(2, consumer.generation)
        got, _ = self.allocations(C2)
        self.assertEqual({(CHILD, 'VCPU'): 3}, got)
        self.assertGreater(self.gen(ROOT), root_gen)
        self.assertGreater(self.gen(CHILD), child_gen)

    def assertUnchanged(self):
        self.assertEqual({'VCPU': 8, 'DISK_GB': 100}, self.inventories(ROOT))
        self.assertEqual({}, self.inventories(CHILD))
        got, consumer = self.allocations(C1)
        self.assertEqual({(ROOT, 'VCPU'): 2, (ROOT, 'DISK_GB'): 10}, got)
        self.assertEqual(1, consumer.generation)

    def test_stale_provider_generation(self):
        self.assertRaises(exception.ResourceProviderConcurrentUpdateDetected,
                          self.move_vcpu, root_gen=self.gen(ROOT) - 1)
        self.assertUnchanged()

    def test_stale_consumer_generation(self):
        self.assertRaises(exception.ConsumerGenerationConflict,
                          self.move_vcpu, c2_gen=0)
        self.assertUnchanged()

    def test_unknown_provider_in_inventories(self):
        missing = 'dddddddd-0000-4000-8000-000000000004'
        exc = self.assertRaises(
            exception.ResourceProviderNotFound, reshaper.reshape,
            self.context,
            [reshaper.ProviderInventories(missing, 0, [])], [])
        self.assertIn(missing, str(exc))

    def test_removing_allocated_inventory_fails(self):
        # VCPU leaves the root but C2's VCPU allocation stays there.
        self.assertRaises(
            exception.InventoryInUse, reshaper.reshape, self.context,
            [reshaper.ProviderInventories(
                ROOT, self.gen(ROOT), [inv_obj.Inventory('DISK_GB', 100)])],
            [allocs(C1, {ROOT: {'DISK_GB': 10}}, 1)])
        self.assertUnchanged()

    def test_allocations_must_fit_new_inventory(self):
        self.assertRaises(
            exception.InvalidAllocationCapacityExceeded, reshaper.reshape,
            self.context,
            [reshaper.ProviderInventories(
                CHILD, self.gen(CHILD), [inv_obj.Inventory('VCPU', 4)]),
             reshaper.ProviderInventories(
                 ROOT, self.gen(ROOT), [inv_obj.Inventory('DISK_GB', 100)])],
            [allocs(C1, {ROOT: {'DISK_GB': 10}, CHILD: {'VCPU': 2}}, 1),
             allocs(C2, {CHILD: {'VCPU': 3}}, 1)])
        self.assertUnchanged()

    def test_empty_inventory_deletes(self):
        rp = rp_obj.create(self.context, 'spare',
                           uuid='eeeeeeee-0000-4000-8000-00000000000e')
        inv_obj.set_inventories(self.context, rp,
                                [inv_obj.Inventory('VCPU', 1)])
        reshaper.reshape(self.context, [reshaper.ProviderInventories(
            rp.uuid, self.gen(rp.uuid), [])], [])
        self.assertEqual({}, self.inventories(rp.uuid))
