"""The marks of the classes over capacity follow every way there.

The readers of "providers over capacity" re-check only the marked
(provider, class) pairs, so each test compares their answer with the
truth computed here from every provider's usage and inventory, after
inventory shrinks, allocation deletes, a reshape and racing writers.
"""

import random
import threading
import uuid

import sqlalchemy as sa

from alloc_framework.common import context as af_context
from alloc_framework.db import migration
from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects import capacity
from alloc_framework.objects.placement import allocation as alloc_obj
from alloc_framework.objects.placement import attribute_cache
from alloc_framework.objects.placement import exception
from alloc_framework.objects.placement import inventory as inv_obj
from alloc_framework.objects.placement import reshaper
from alloc_framework.objects.placement import resource_provider as rp_obj
from alloc_framework.objects.placement import usage
from tests.functional.objects.placement import base

Inv = inv_obj.Inventory
MARK_TBL = models.OverCapacityMark.__table__


def claim(context, consumer, allocations):
    alloc_obj.replace_all(context, [alloc_obj.ConsumerAllocations(
        consumer, allocations, 'project', 'user')])


class OverCapacityMarksTestCase(base.PlacementDBTestCase):

    def provider(self, name, inventories, parent=None):
        rp = rp_obj.create(self.context, name, parent_provider_uuid=parent)
        inv_obj.set_inventories(self.context, rp, inventories)
        return rp

    def fresh(self, rp):
        return rp_obj.get_by_uuid(self.context, rp.uuid)

    def truth(self):
        """``{(provider uuid, class, used, capacity)}`` over capacity,
        from every provider's usage and inventory."""
        over = set()
        with self.db.engine.connect() as conn:
            uuids = conn.execute(sa.select(
                models.ResourceProvider.__table__.c.uuid)).scalars().all()
        for rp in [rp_obj.get_by_uuid(self.context, u) for u in uuids]:
            _gen, used = usage.get_all_by_resource_provider_uuid(
                self.context, rp.uuid)
            for inv in inv_obj.get_all_by_resource_provider(self.context,
                                                            rp):
                if used[inv.resource_class] > inv.capacity:
                    over.add((rp.uuid, inv.resource_class,
                              used[inv.resource_class], inv.capacity))
        return over

    def assertAgrees(self, expected_providers):
        truth = self.truth()
        listed = {(r.provider_uuid, r.resource_class, r.used, r.capacity)
                  for r in usage.over_capacity_providers(self.context)}
        self.assertEqual(truth, listed)
        self.assertEqual(expected_providers,
                         capacity.over_capacity_count(self.context))
        self.assertEqual(len({row[0] for row in truth}),
                         capacity.over_capacity_count(self.context))

    def marks(self):
        with self.db.engine.connect() as conn:
            return set(conn.execute(sa.select(
                MARK_TBL.c.resource_provider_id,
                MARK_TBL.c.resource_class_id)).all())

    def test_shrink_then_deletes_then_grow(self):
        cn1 = self.provider('cn1', [Inv('VCPU', 8), Inv('MEMORY_MB', 1024)])
        cn2 = self.provider('cn2', [Inv('VCPU', 8)])
        consumers = [str(uuid.uuid4()) for _ in range(3)]
        claim(self.context, consumers[0], {cn1.uuid: {'VCPU': 4,
                                                      'MEMORY_MB': 512}})
        claim(self.context, consumers[1], {cn1.uuid: {'VCPU': 3},
                                           cn2.uuid: {'VCPU': 6}})
        self.assertAgrees(0)
        self.assertEqual(set(), self.marks())
        # Shrunk below the usage: by the whole set, by one class.
        inv_obj.set_inventories(self.context, self.fresh(cn1), [
            Inv('VCPU', 8, reserved=2), Inv('MEMORY_MB', 256)])
        inv_obj.update_inventory(self.context, self.fresh(cn2),
                                 Inv('VCPU', 5))
        self.assertAgrees(2)
        self.assertEqual(3, len(self.marks()))
        # No room left: a claim of the class is refused, the count holds.
        self.assertRaises(exception.InvalidAllocationCapacityExceeded,
                          claim, self.context, consumers[2],
                          {cn2.uuid: {'VCPU': 1}})
        # A delete takes cn2 and cn1's VCPU back under capacity; the
        # marks stay (claims never write them) but count no more.
        alloc_obj.delete_all(self.context, consumers[1])
        self.assertAgrees(1)
        self.assertEqual(3, len(self.marks()))
        # The next inventory write of a provider re-marks it.
        inv_obj.update_inventory(self.context, self.fresh(cn2),
                                 Inv('VCPU', 6))
        self.assertEqual({cn1.id}, {rp_id for rp_id, _rc in self.marks()})
        inv_obj.set_inventories(self.context, self.fresh(cn1), [
            Inv('VCPU', 8), Inv('MEMORY_MB', 1024)])
        self.assertEqual(set(), self.marks())
        self.assertAgrees(0)

    def test_reshape_leaving_a_provider_over_capacity(self):
        root = self.provider('root', [Inv('VCPU', 8), Inv('DISK_GB', 100)])
        consumer, other = str(uuid.uuid4()), str(uuid.uuid4())
        claim(self.context, consumer, {root.uuid: {'VCPU': 6}})
        claim(self.context, other, {root.uuid: {'DISK_GB': 10}})
        # Shrunk first: root is marked for VCPU.
        inv_obj.update_inventory(self.context, self.fresh(root),
                                 Inv('VCPU', 4))
        self.assertAgrees(1)
        child = self.provider('child', [], parent=root.uuid)
        # The VCPU inventory moves to the child with its allocation, and
        # the root's DISK_GB shrinks below what another consumer keeps
        # allocated from it (accepted, as an inventory write is).
        reshaper.reshape(self.context, [
            reshaper.ProviderInventories(
                root.uuid, self.fresh(root).generation,
                [Inv('DISK_GB', 5)]),
            reshaper.ProviderInventories(
                child.uuid, self.fresh(child).generation,
                [Inv('VCPU', 8)]),
        ], [alloc_obj.ConsumerAllocations(
            consumer, {child.uuid: {'VCPU': 6}}, 'project', 'user',
            consumer_generation=1, check_generation=True)])
        self.assertEqual({(root.uuid, 'DISK_GB', 10, 5)}, self.truth())
        self.assertAgrees(1)
        self.assertEqual({(root.id, 'DISK_GB')},
                         {(rp_id, attribute_cache.rc_name(self.context, rc))
                          for rp_id, rc in self.marks()})

    def test_deleted_provider_takes_its_marks(self):
        rp = self.provider('cn1', [Inv('VCPU', 8)])
        consumer = str(uuid.uuid4())
        claim(self.context, consumer, {rp.uuid: {'VCPU': 4}})
        inv_obj.update_inventory(self.context, self.fresh(rp),
                                 Inv('VCPU', 2))
        alloc_obj.delete_all(self.context, consumer)
        self.assertEqual(1, len(self.marks()))
        rp_obj.destroy(self.context, self.fresh(rp))
        self.assertEqual(set(), self.marks())
        self.assertAgrees(0)

    def test_racing_claims_deletes_and_shrinks(self):
        # Claimers, deleters and an operator resizing inventories race on
        # a few providers; whatever the interleaving, the readers agree
        # with the usages and inventories once they are done.
        providers = [self.provider('cn%d' % i, [Inv('VCPU', 16)])
                     for i in range(3)]
        uuids = [rp.uuid for rp in providers]
        errors = []
        done = threading.Event()
        start = threading.Barrier(4)

        def claimer(seed):
            ctx = af_context.get_admin_context()
            rnd = random.Random(seed)
            mine = []
            start.wait()
            try:
                for _ in range(12):
                    if mine and rnd.random() < 0.3:
                        alloc_obj.delete_all(ctx, mine.pop())
                        continue
                    consumer = str(uuid.uuid4())
                    try:
                        claim(ctx, consumer,
                              {rnd.choice(uuids): {'VCPU': 2}})
                        mine.append(consumer)
                    except (exception.InvalidAllocationCapacityExceeded,
                            exception.ConcurrentUpdateDetected):
                        pass
            except Exception as exc:  # noqa: H201 reported below
                errors.append(exc)

        def operator():
            ctx = af_context.get_admin_context()
            rnd = random.Random(7)
            start.wait()
            try:
                while not done.is_set():
                    rp = rp_obj.get_by_uuid(ctx, rnd.choice(uuids))
                    try:
                        inv_obj.set_inventories(ctx, rp, [
                            Inv('VCPU', rnd.choice((2, 4, 8, 16)))])
                    except exception.ConcurrentUpdateDetected:
                        pass
            except Exception as exc:  # noqa: H201 reported below
                errors.append(exc)

        claimers = [threading.Thread(target=claimer, args=(seed,))
                    for seed in range(3)]
        resizer = threading.Thread(target=operator)
        for thread in claimers + [resizer]:
            thread.start()
        for thread in claimers:
            thread.join()
        done.set()
        resizer.join()
        self.assertEqual([], errors)
        truth = self.truth()
        self.assertAgrees(len({row[0] for row in truth}))

    def test_migration_marks_what_is_over_capacity_already(self):
        # A database of the revision before the marks, with a provider
        # over capacity, one full, and damaged data.
        full = self.provider('full', [Inv('VCPU', 4)])
        over = self.provider('over', [Inv('VCPU', 4, allocation_ratio=1.5)])
        bare = self.provider('bare', [Inv('VCPU', 4)])
        claim(self.context, str(uuid.uuid4()), {full.uuid: {'VCPU': 4},
                                                over.uuid: {'VCPU': 6}})
        inv_obj.update_inventory(self.context, self.fresh(over),
                                 Inv('VCPU', 4))
        self.allocate(bare, 'DISK_GB', 3)
        engine = self.db.engine

        def stamp(revision):
            with engine.begin() as conn:
                conn.exec_driver_sql(
                    "UPDATE alembic_version SET version_num = '%s'"
                    % revision)

        def restore():
            MARK_TBL.create(engine, checkfirst=True)
            stamp(migration.head())

        with engine.begin() as conn:
            conn.exec_driver_sql('DROP TABLE over_capacity_marks')
        stamp('0012')
        self.addCleanup(restore)
        migration.upgrade('0013', engine=engine)
        restore()
        marked = {(rp_id, attribute_cache.rc_name(self.context, rc))
                  for rp_id, rc in self.marks()}
        # The full one is marked too (a margin of one unit): re-checked,
        # it is not counted.
        self.assertEqual({(over.id, 'VCPU'), (bare.id, 'DISK_GB'),
                          (full.id, 'VCPU')}, marked)
        self.assertEqual({(over.uuid, 'VCPU', 6, 4)}, self.truth())
        self.assertEqual(
            {('bare', 'DISK_GB', 3, 0), ('over', 'VCPU', 6, 4)},
            {(r.provider_name, r.resource_class, r.used, r.capacity)
             for r in usage.over_capacity_providers(self.context)})
        self.assertEqual(2, capacity.over_capacity_count(self.context))
