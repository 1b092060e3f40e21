"""The fleet-wide capacity queries, on every database."""

import sqlalchemy as sa

from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects import baremetal as objects
from alloc_framework.objects import capacity
from alloc_framework.objects.placement import attribute_cache
from alloc_framework.objects.placement import inventory
from alloc_framework.objects.placement import resource_provider as rp_obj
from alloc_framework.objects.placement import usage
from tests.functional.objects.baremetal import factories as f
from tests.functional.objects.placement import base

Inv = inventory.Inventory
C1 = 'c0ffee00-0000-4000-8000-000000000001'
C2 = 'c0ffee00-0000-4000-8000-000000000002'


class CapacityTestCase(base.PlacementDBTestCase):

    def provider(self, name, inventories):
        rp = rp_obj.create(self.context, name)
        inventory.set_inventories(self.context, rp, inventories)
        return rp

    def count_statements(self, func):
        """Run ``func()`` and return ``(its result, statements run)``."""
        statements = []

        def _count(conn, cursor, statement, *args):
            statements.append(statement)

        sa.event.listen(self.db.engine, 'before_cursor_execute', _count)
        try:
            result = func()
        finally:
            sa.event.remove(self.db.engine, 'before_cursor_execute', _count)
        return result, len(statements)

    def test_empty(self):
        self.assertEqual([], capacity.placement_capacity(self.context))
        self.assertEqual(0, capacity.over_capacity_count(self.context))
        self.assertEqual({}, capacity.nodes_by_state(self.context))
        self.assertEqual({}, capacity.allocations_by_state(self.context))
        self.assertEqual({},
                         capacity.deferred_actions_by_state(self.context))

    def test_placement_capacity(self):
        cn1 = self.provider('cn1', [
            Inv('VCPU', 8, reserved=2, allocation_ratio=4.0),
            Inv('MEMORY_MB', 1024, reserved=512)])
        cn2 = self.provider('cn2', [
            Inv('VCPU', 5, reserved=0, allocation_ratio=1.5),
            Inv('CUSTOM_GOLD', 3)])
        self.allocate(cn1, 'VCPU', 10, consumer=C1)
        self.allocate(cn2, 'VCPU', 3, consumer=C2)
        self.allocate(cn1, 'MEMORY_MB', 256, consumer=C1)
        # VCPU: (8 - 2) * 4.0 = 24 and int((5 - 0) * 1.5) = 7, per
        # inventory, not int(37.5) from the sums.
        self.assertEqual(
            [('CUSTOM_GOLD', 3, 0, 0, 3),
             ('MEMORY_MB', 1024, 512, 256, 512),
             ('VCPU', 13, 2, 13, 31)],
            capacity.placement_capacity(self.context))
        vcpu = capacity.placement_capacity(self.context)[-1]
        self.assertEqual(18, vcpu.free)

    def test_usage_without_inventory(self):
        rp = self.provider('cn1', [Inv('VCPU', 4)])
        self.allocate(rp, 'DISK_GB', 7, consumer=C1)
        self.assertEqual(
            [('DISK_GB', 0, 0, 7, 0), ('VCPU', 4, 0, 0, 4)],
            capacity.placement_capacity(self.context))

    def test_over_capacity_count_agrees_with_the_list(self):
        cn1 = self.provider('cn1', [Inv('VCPU', 8), Inv('DISK_GB', 100)])
        cn2 = self.provider('cn2', [Inv('VCPU', 4)])
        fine = self.provider('cn3', [Inv('VCPU', 8)])
        self.allocate(cn1, 'VCPU', 6, consumer=C1)
        self.allocate(cn1, 'DISK_GB', 50, consumer=C1)
        self.allocate(cn2, 'VCPU', 4, consumer=C2)
        self.allocate(fine, 'VCPU', 8, consumer=C2)
        self.assertEqual(0, capacity.over_capacity_count(self.context))
        # cn1 over in two classes counts once; cn2 over in one.
        inventory.set_inventories(self.context, cn1, [
            Inv('VCPU', 8, reserved=3), Inv('DISK_GB', 40)])
        inventory.update_inventory(self.context, cn2,
                                   Inv('VCPU', 4, reserved=1))
        self.assertEqual(2, capacity.over_capacity_count(self.context))
        self.assertEqual(
            2, len({r.provider_uuid for r in
                    usage.over_capacity_providers(self.context)}))

    def test_over_capacity_rule_with_ratio_reserved_and_damage(self):
        # int((10 - 3) * 1.5) = 10: 10 used is not over, 11 is.
        edge = self.provider('edge', [Inv('VCPU', 20)])
        over = self.provider('over', [Inv('VCPU', 20)])
        self.allocate(edge, 'VCPU', 6, consumer=C1)
        self.allocate(edge, 'VCPU', 4, consumer=C2)
        self.allocate(over, 'VCPU', 11, consumer=C1)
        for rp in (edge, over):
            inventory.set_inventories(self.context, rp, [
                Inv('VCPU', 10, reserved=3, allocation_ratio=1.5)])
        # A class without inventory (only damaged data has it: written
        # here by hand) counts against 0 once the provider's inventory
        # is next written; 0 used does not count.
        bare = self.provider('bare', [Inv('VCPU', 4)])
        self.allocate(bare, 'DISK_GB', 1, consumer=C1)
        zero = self.provider('zero', [Inv('VCPU', 4)])
        self.allocate(zero, 'DISK_GB', 0, consumer=C1)
        for rp in (bare, zero):
            inventory.set_inventories(self.context, rp, [Inv('VCPU', 4)])
        # Allocations of a provider that is gone count nowhere.
        with self.db.engine.begin() as conn:
            conn.execute(models.Allocation.__table__.insert().values(
                resource_provider_id=zero.id + 1000, consumer_id=C2,
                resource_class_id=attribute_cache.rc_id(
                    self.context, 'VCPU'), used=5))
            conn.execute(models.OverCapacityMark.__table__.insert().values(
                resource_provider_id=zero.id + 1000,
                resource_class_id=attribute_cache.rc_id(
                    self.context, 'VCPU')))
        listed = usage.over_capacity_providers(self.context)
        self.assertEqual([('bare', 'DISK_GB', 1, 0), ('over', 'VCPU', 11, 10)],
                         sorted((r.provider_name, r.resource_class, r.used,
                                 r.capacity) for r in listed))
        self.assertEqual(2, capacity.over_capacity_count(self.context))

    def test_capacity_leaves_out_unknown_class_ids(self):
        rp = self.provider('cn1', [Inv('VCPU', 4)])
        self.allocate(rp, 'VCPU', 1, consumer=C1)
        with self.db.engine.begin() as conn:
            conn.execute(models.Allocation.__table__.insert().values(
                resource_provider_id=rp.id, consumer_id=C2,
                resource_class_id=99999, used=3))
        self.assertEqual([('VCPU', 4, 0, 1, 4)],
                         capacity.placement_capacity(self.context))

    def test_baremetal_counts(self):
        ctx = f.admin_context()
        n1 = f.make_node(ctx)
        f.make_node(ctx)
        f.make_node(ctx, resource_class='gpu')
        f.make_node(ctx, provision_state='active')
        f.make_node(ctx, provision_state='enroll', resource_class=None)
        self.assertEqual(
            {('available', 'baremetal'): 2, ('available', 'gpu'): 1,
             ('active', 'baremetal'): 1, ('enroll', None): 1},
            capacity.nodes_by_state(self.context))
        f.make_allocation(ctx)
        f.make_allocation(ctx)
        f.make_allocation(ctx, state='error')
        self.assertEqual({'allocating': 2, 'error': 1},
                         capacity.allocations_by_state(self.context))
        actions = [objects.DeferredAction.new(ctx, n1.id, 'task.driver.x')
                   for _ in range(3)]
        for action in actions:
            action.create()
        tbl = models.DeferredAction.__table__
        with self.db.engine.begin() as conn:
            conn.execute(tbl.update().where(tbl.c.uuid == actions[0].uuid)
                         .values(state='FAILED'))
            conn.execute(tbl.update().where(tbl.c.uuid == actions[1].uuid)
                         .values(state='COMPLETED',
                                 deleted_at=sa.func.now()))
        self.assertEqual({'CREATED': 1, 'FAILED': 1},
                         capacity.deferred_actions_by_state(self.context))

    def _all(self):
        return (capacity.placement_capacity(self.context),
                capacity.over_capacity_count(self.context),
                capacity.nodes_by_state(self.context),
                capacity.allocations_by_state(self.context),
                capacity.deferred_actions_by_state(self.context))

    def _grow(self, start, count):
        ctx = f.admin_context()
        for i in range(start, start + count):
            rp = self.provider('cn%d' % i, [Inv('VCPU', 8),
                                            Inv('MEMORY_MB', 2048)])
            self.allocate(rp, 'VCPU', 5,
                          consumer='c0ffee00-0000-4000-8000-%012d' % i)
            # Shrunk below its usage: every provider is over capacity.
            inventory.update_inventory(self.context, rp, Inv('VCPU', 4))
            f.make_node(ctx, resource_class='rc%d' % (i % 3))
            f.make_allocation(ctx)

    def test_statements_do_not_grow_with_the_fleet(self):
        self._grow(0, 2)
        small, small_count = self.count_statements(self._all)
        self._grow(2, 12)
        big, big_count = self.count_statements(self._all)
        self.assertEqual(small_count, big_count)
        self.assertEqual(2, small[1])
        self.assertEqual(14, big[1])
        self.assertEqual(('VCPU', 56, 0, 70, 56), big[0][-1])
