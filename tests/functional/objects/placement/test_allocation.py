"""Allocations, consumers and usages at the object level."""

import sqlalchemy as sa

from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects.placement import allocation as alloc_obj
from alloc_framework.objects.placement import consumer as consumer_obj
from alloc_framework.objects.placement import exception
from alloc_framework.objects.placement import inventory as inv_obj
from alloc_framework.objects.placement import resource_provider as rp_obj
from alloc_framework.objects.placement import usage as usage_obj
from tests.functional.objects.placement import base

RP1 = 'aaaaaaaa-0000-4000-8000-000000000001'
RP2 = 'bbbbbbbb-0000-4000-8000-000000000002'
C1 = 'c1c1c1c1-0000-4000-8000-000000000001'
C2 = 'c2c2c2c2-0000-4000-8000-000000000002'
PROJECT = 'project-1'
USER = 'user-1'


def request(consumer, allocations, generation=None, check=False,
            consumer_type=None, project=PROJECT, user=USER):
    return alloc_obj.ConsumerAllocations(
        consumer, allocations, project, user,
        consumer_generation=generation, check_generation=check,
        consumer_type=consumer_type)


class AllocationTestCase(base.PlacementDBTestCase):

    def setUp(self):
        super().setUp()
        self.rp1 = rp_obj.create(self.context, 'rp1', uuid=RP1)
        inv_obj.set_inventories(self.context, self.rp1, [
            inv_obj.Inventory('VCPU', 8, reserved=2, allocation_ratio=2.0),
            inv_obj.Inventory('MEMORY_MB', 1024, min_unit=64, max_unit=512,
                              step_size=64)])
        self.rp2 = rp_obj.create(self.context, 'rp2', uuid=RP2)
        inv_obj.set_inventories(self.context, self.rp2, [
            inv_obj.Inventory('DISK_GB', 100)])

    def generation(self, uuid):
        return rp_obj.get_by_uuid(self.context, uuid).generation

    def write(self, *requests, **kw):
        alloc_obj.replace_all(self.context, list(requests), **kw)

    def allocations_of(self, consumer):
        _, allocs = alloc_obj.get_all_by_consumer_id(self.context, consumer)
        return {(a.resource_provider.uuid, a.resource_class): a.used
                for a in allocs}

    def test_create_and_read(self):
        gen1, gen2 = self.generation(RP1), self.generation(RP2)
        self.write(request(C1, {RP1: {'VCPU': 2, 'MEMORY_MB': 128},
                                RP2: {'DISK_GB': 10}}))
        consumer, allocs = alloc_obj.get_all_by_consumer_id(self.context, C1)
        self.assertEqual(1, consumer.generation)
        self.assertEqual(PROJECT, consumer.project.external_id)
        self.assertEqual(USER, consumer.user.external_id)
        self.assertIsNone(consumer.consumer_type)
        self.assertEqual({(RP1, 'VCPU'): 2, (RP1, 'MEMORY_MB'): 128,
                          (RP2, 'DISK_GB'): 10}, self.allocations_of(C1))
        self.assertEqual(gen1 + 1, self.generation(RP1))
        self.assertEqual(gen2 + 1, self.generation(RP2))
        by_rp = {a.resource_provider.uuid: a.resource_provider.generation
                 for a in allocs}
        self.assertEqual({RP1: gen1 + 1, RP2: gen2 + 1}, by_rp)
        self.assertIsNotNone(allocs[0].created_at)

    def test_unknown_consumer_reads_empty(self):
        self.assertEqual((None, []), alloc_obj.get_all_by_consumer_id(
            self.context, C1))

    def test_replace_moves_and_bumps_old_provider(self):
        self.write(request(C1, {RP2: {'DISK_GB': 10}}))
        gen2 = self.generation(RP2)
        self.write(request(C1, {RP1: {'VCPU': 1}}))
        self.assertEqual({(RP1, 'VCPU'): 1}, self.allocations_of(C1))
        self.assertEqual(gen2 + 1, self.generation(RP2))
        consumer = consumer_obj.get_by_uuid(self.context, C1)
        self.assertEqual(2, consumer.generation)

    def test_replace_moves_without_delete_returning(self):
        # MySQL has no DELETE ... RETURNING: the old providers are read
        # by a SELECT before the delete.
        self.patch(self.db.engine.dialect, 'delete_returning', False)
        self.write(request(C1, {RP2: {'DISK_GB': 10}}))
        gen2 = self.generation(RP2)
        sent = self._statements(request(C1, {RP1: {'VCPU': 1}}))
        self.assertIn('SELECT DISTINCT', sent)
        self.assertEqual({(RP1, 'VCPU'): 1}, self.allocations_of(C1))
        self.assertEqual(gen2 + 1, self.generation(RP2))

    def test_capacity_is_total_minus_reserved_times_ratio(self):
        # (8 - 2) * 2.0 = 12
        self.write(request(C1, {RP1: {'VCPU': 12}}))
        self.assertRaises(exception.InvalidAllocationCapacityExceeded,
                          self.write, request(C2, {RP1: {'VCPU': 1}}))
        self.assertIsNone(alloc_obj.get_all_by_consumer_id(
            self.context, C2)[0])

    def test_capacity_counts_all_consumers_of_one_write(self):
        self.assertRaises(exception.InvalidAllocationCapacityExceeded,
                          self.write, request(C1, {RP1: {'VCPU': 7}}),
                          request(C2, {RP1: {'VCPU': 6}}))
        self.assertEqual({}, self.allocations_of(C1))

    def test_replacing_frees_own_usage(self):
        self.write(request(C1, {RP1: {'VCPU': 12}}))
        self.write(request(C1, {RP1: {'VCPU': 10}}))
        self.assertEqual({(RP1, 'VCPU'): 10}, self.allocations_of(C1))

    def test_constraints(self):
        for amount in (32, 576, 100):  # min_unit, max_unit, step_size
            self.assertRaises(
                exception.InvalidAllocationConstraintsViolated,
                self.write, request(C1, {RP1: {'MEMORY_MB': amount}}))
        self.write(request(C1, {RP1: {'MEMORY_MB': 512}}))

    def test_no_inventory_of_class(self):
        exc = self.assertRaises(exception.InvalidInventory, self.write,
                                request(C1, {RP2: {'VCPU': 1}}))
        self.assertIn(RP2, str(exc))

    def test_unknown_provider(self):
        missing = 'dddddddd-0000-4000-8000-000000000004'
        exc = self.assertRaises(exception.ResourceProviderNotFound,
                                self.write,
                                request(C1, {missing: {'VCPU': 1}}))
        self.assertIn(missing, str(exc))

    def test_unknown_resource_class(self):
        self.assertRaises(exception.ResourceClassNotFound, self.write,
                          request(C1, {RP1: {'CUSTOM_NOPE': 1}}))

    def test_many_consumers_atomic(self):
        self.write(request(C1, {RP1: {'VCPU': 2}}))
        # The second consumer does not fit: the first is left untouched.
        self.assertRaises(exception.InvalidAllocationCapacityExceeded,
                          self.write, request(C1, {RP2: {'DISK_GB': 5}}),
                          request(C2, {RP2: {'DISK_GB': 96}}))
        self.assertEqual({(RP1, 'VCPU'): 2}, self.allocations_of(C1))
        self.assertEqual(1, consumer_obj.get_by_uuid(
            self.context, C1).generation)
        self.write(request(C1, {RP2: {'DISK_GB': 5}}),
                   request(C2, {RP2: {'DISK_GB': 95}}))
        self.assertEqual({(RP2, 'DISK_GB'): 5}, self.allocations_of(C1))
        self.assertEqual({(RP2, 'DISK_GB'): 95}, self.allocations_of(C2))

    def test_consumer_generation(self):
        self.assertRaises(exception.ConsumerGenerationConflict, self.write,
                          request(C1, {RP1: {'VCPU': 1}}, generation=0,
                                  check=True))
        self.write(request(C1, {RP1: {'VCPU': 1}}, generation=None,
                           check=True))
        self.assertRaises(exception.ConsumerGenerationConflict, self.write,
                          request(C1, {RP1: {'VCPU': 2}}, generation=None,
                                  check=True))
        self.assertRaises(exception.ConsumerGenerationConflict, self.write,
                          request(C1, {RP1: {'VCPU': 2}}, generation=2,
                                  check=True))
        self.write(request(C1, {RP1: {'VCPU': 2}}, generation=1,
                           check=True))
        self.assertEqual(2, consumer_obj.get_by_uuid(
            self.context, C1).generation)
        # Without the check (before 1.28) any generation is accepted.
        self.write(request(C1, {RP1: {'VCPU': 3}}, generation=99))

    def test_empty_allocations_delete_consumer(self):
        self.write(request(C1, {RP1: {'VCPU': 1}}))
        gen1 = self.generation(RP1)
        self.write(request(C1, {}, generation=1, check=True))
        self.assertRaises(exception.ConsumerNotFound,
                          consumer_obj.get_by_uuid, self.context, C1)
        self.assertEqual(gen1 + 1, self.generation(RP1))
        # An empty write for an unknown consumer is a no-op.
        self.write(request(C2, {}, generation=None, check=True))

    def test_owner_and_type_update(self):
        self.write(request(C1, {RP1: {'VCPU': 1}}, consumer_type='INSTANCE'))
        self.write(request(C1, {RP1: {'VCPU': 1}}, project='p2', user='u2'))
        consumer = consumer_obj.get_by_uuid(self.context, C1)
        self.assertEqual(('p2', 'u2', 'INSTANCE'),
                         (consumer.project.external_id,
                          consumer.user.external_id, consumer.consumer_type))
        self.write(request(C1, {RP1: {'VCPU': 1}},
                           consumer_type='MIGRATION'))
        self.assertEqual('MIGRATION', consumer_obj.get_by_uuid(
            self.context, C1).consumer_type)

    def test_delete_all(self):
        self.write(request(C1, {RP1: {'VCPU': 1}, RP2: {'DISK_GB': 1}}))
        gen1 = self.generation(RP1)
        alloc_obj.delete_all(self.context, C1)
        self.assertEqual({}, self.allocations_of(C1))
        self.assertRaises(exception.ConsumerNotFound,
                          consumer_obj.get_by_uuid, self.context, C1)
        # Freeing usage leaves the generation alone, as upstream does.
        self.assertEqual(gen1, self.generation(RP1))
        self.assertRaises(exception.ConsumerNotFound, alloc_obj.delete_all,
                          self.context, C1)

    def test_by_resource_provider(self):
        self.write(request(C1, {RP1: {'VCPU': 1, 'MEMORY_MB': 64}}),
                   request(C2, {RP1: {'VCPU': 2}}))
        provider, allocs = alloc_obj.get_all_by_resource_provider(
            self.context, RP1)
        self.assertEqual(self.generation(RP1), provider.generation)
        got = {(a.consumer.uuid, a.resource_class): (a.used,
                                                     a.consumer.generation)
               for a in allocs}
        self.assertEqual({(C1, 'VCPU'): (1, 1), (C1, 'MEMORY_MB'): (64, 1),
                          (C2, 'VCPU'): (2, 1)}, got)
        self.assertRaises(exception.ResourceProviderNotFound,
                          alloc_obj.get_all_by_resource_provider,
                          self.context, 'dddddddd-0000-4000-8000-00000000000d')

    def test_stale_provider_generation_detected(self):
        ref = alloc_obj.ResourceProviderRef(self.rp1.id, RP1,
                                            self.generation(RP1) - 1)
        self.assertRaises(
            exception.ResourceProviderConcurrentUpdateDetected,
            alloc_obj.increment_generations, self.context, [ref])

    def test_retries_exhausted_is_concurrent_update(self):
        # Another writer bumps the provider between our read and our swap
        # on every attempt.
        real = alloc_obj._lock_providers

        def stale(context, uuids):
            result, _bumped = real(context, uuids)
            for ref in result.values():
                ref.generation -= 1
            return result, False
        self.patch(alloc_obj, '_lock_providers', stale)
        self.assertRaises(exception.ResourceProviderConcurrentUpdateDetected,
                          self.write, request(C1, {RP1: {'VCPU': 1}}),
                          retries=2)
        self.assertEqual({}, self.allocations_of(C1))

    def test_retry_succeeds_after_conflict(self):
        real = alloc_obj._lock_providers
        calls = []

        def stale_once(context, uuids):
            result, bumped = real(context, uuids)
            calls.append(1)
            if len(calls) == 1:
                for ref in result.values():
                    ref.generation -= 1
                bumped = False
            return result, bumped
        self.patch(alloc_obj, '_lock_providers', stale_once)
        self.write(request(C1, {RP1: {'VCPU': 1}}))
        self.assertEqual(2, len(calls))
        self.assertEqual({(RP1, 'VCPU'): 1}, self.allocations_of(C1))

    def test_released_provider_stale_generation_detected(self):
        # C1 moves from RP2 to RP1: RP2 only loses allocations, so its
        # generation is not read by the lock; it is still swapped.
        self.write(request(C1, {RP2: {'DISK_GB': 10}}))
        gen2 = self.generation(RP2)
        real = alloc_obj._generations
        read = []

        def stale(context, rp_ids):
            result = real(context, rp_ids)
            read.extend(result)
            for ref in result.values():
                ref.generation -= 1
            return result
        self.patch(alloc_obj, '_generations', stale)
        self.assertRaises(exception.ResourceProviderConcurrentUpdateDetected,
                          self.write, request(C1, {RP1: {'VCPU': 1}},
                                              generation=1, check=True),
                          retries=1)
        self.assertEqual([self.rp2.id, self.rp2.id], read)
        self.assertEqual({(RP2, 'DISK_GB'): 10}, self.allocations_of(C1))
        self.assertEqual(gen2, self.generation(RP2))

        self.patch(alloc_obj, '_generations', real)
        self.write(request(C1, {RP1: {'VCPU': 1}}, generation=1, check=True))
        self.assertEqual({(RP1, 'VCPU'): 1}, self.allocations_of(C1))
        self.assertEqual(gen2 + 1, self.generation(RP2))
        consumer, _ = alloc_obj.get_all_by_consumer_id(self.context, C1)
        self.assertEqual(2, consumer.generation)

    def _statements(self, *requests):
        """The statements that writing ``requests`` sends, in order."""
        sent = []

        def record(conn, cursor, statement, *args):
            words = statement.split(None, 2)
            if words[0].upper() not in ('BEGIN', 'COMMIT', 'ROLLBACK',
                                        'SAVEPOINT', 'RELEASE', 'PRAGMA'):
                sent.append(' '.join(words[:2]).upper())

        engine = self.db.engine
        sa.event.listen(engine, 'before_cursor_execute', record)
        try:
            self.write(*requests)
        finally:
            sa.event.remove(engine, 'before_cursor_execute', record)
        return sent

    def _lock_statements(self):
        """The statements locking the providers, and the generation swap
        after the writes, on this test's database."""
        if self.db.engine.dialect.update_returning:
            # The lock bumps the generation and returns it.
            return ['UPDATE RESOURCE_PROVIDERS'], []
        # The lock reads the generations; the swap comes last.
        return ['SELECT RESOURCE_PROVIDERS.ID,'], ['UPDATE RESOURCE_PROVIDERS']

    def test_claim_statements(self):
        # A project and user that exist already, as for most claims.
        self.write(request(C2, {RP2: {'DISK_GB': 1}},
                           consumer_type='INSTANCE'))
        sent = self._statements(request(
            C1, {RP1: {'VCPU': 1, 'MEMORY_MB': 64}},
            consumer_type='INSTANCE'))
        lock, swap = self._lock_statements()
        # A new consumer has no allocations to delete: no DELETE.
        expected = (
            ['SELECT CONSUMER.ID,']  # the consumer, if any, and owner ids
            + lock
            + ['SELECT INVENTORIES.RESOURCE_PROVIDER_ID,',  # capacity
               'INSERT INTO',  # the consumer, at generation 1
               'INSERT INTO']  # the allocations
            + swap)
        self.assertEqual(expected, sent)
        consumer, _ = alloc_obj.get_all_by_consumer_id(self.context, C1)
        self.assertEqual(1, consumer.generation)
        self.assertEqual('INSTANCE', consumer.consumer_type)
        self.assertEqual({(RP1, 'VCPU'): 1, (RP1, 'MEMORY_MB'): 64},
                         self.allocations_of(C1))

    def test_replace_statements(self):
        # An existing consumer: its old allocations are deleted first.
        self.write(request(C1, {RP1: {'VCPU': 1}}, consumer_type='INSTANCE'))
        consumer, _ = alloc_obj.get_all_by_consumer_id(self.context, C1)
        sent = self._statements(request(
            C1, {RP1: {'VCPU': 2}}, generation=consumer.generation,
            check=True, consumer_type='INSTANCE'))
        lock, _swap = self._lock_statements()
        delete = ['DELETE FROM']  # its old allocations, with providers
        if not self.db.engine.dialect.delete_returning:
            delete[:0] = ['SELECT DISTINCT']
        self.assertEqual(['SELECT CONSUMER.ID,'] + lock + delete,
                         sent[:len(lock) + len(delete) + 1])
        self.assertEqual({(RP1, 'VCPU'): 2}, self.allocations_of(C1))


class UsageTestCase(base.PlacementDBTestCase):

    def setUp(self):
        super().setUp()
        self.rp1 = rp_obj.create(self.context, 'rp1', uuid=RP1)
        inv_obj.set_inventories(self.context, self.rp1, [
            inv_obj.Inventory('VCPU', 64),
            inv_obj.Inventory('MEMORY_MB', 4096),
            inv_obj.Inventory('DISK_GB', 100)])

    def write(self, consumer, resources, project=PROJECT, user=USER,
              consumer_type=None):
        alloc_obj.replace_all(self.context, [request(
            consumer, {RP1: resources}, project=project, user=user,
            consumer_type=consumer_type)])

    def test_provider_usages(self):
        gen, usages = usage_obj.get_all_by_resource_provider_uuid(
            self.context, RP1)
        self.assertEqual({'VCPU': 0, 'MEMORY_MB': 0, 'DISK_GB': 0}, usages)
        self.write(C1, {'VCPU': 2, 'MEMORY_MB': 256})
        self.write(C2, {'VCPU': 1})
        gen2, usages = usage_obj.get_all_by_resource_provider_uuid(
            self.context, RP1)
        self.assertEqual({'VCPU': 3, 'MEMORY_MB': 256, 'DISK_GB': 0},
                         usages)
        self.assertEqual(gen + 2, gen2)
        self.assertRaises(exception.ResourceProviderNotFound,
                          usage_obj.get_all_by_resource_provider_uuid,
                          self.context, RP2)

    def test_project_user_usages(self):
        self.write(C1, {'VCPU': 2, 'MEMORY_MB': 256}, user='u1')
        self.write(C2, {'VCPU': 1}, user='u2')
        self.write('c3c3c3c3-0000-4000-8000-000000000003', {'VCPU': 4},
                   project='other')
        self.assertEqual({'VCPU': 3, 'MEMORY_MB': 256},
                         usage_obj.get_all_by_project_user(
                             self.context, PROJECT))
        self.assertEqual({'VCPU': 1}, usage_obj.get_all_by_project_user(
            self.context, PROJECT, user_id='u2'))
        self.assertEqual({}, usage_obj.get_all_by_project_user(
            self.context, 'nobody'))

    def test_by_consumer_type(self):
        self.write(C1, {'VCPU': 2, 'MEMORY_MB': 256},
                   consumer_type='INSTANCE')
        self.write(C2, {'VCPU': 1}, consumer_type='INSTANCE', user='u2')
        self.write('c3c3c3c3-0000-4000-8000-000000000003', {'DISK_GB': 5},
                   consumer_type='MIGRATION')
        self.write('c4c4c4c4-0000-4000-8000-000000000004', {'VCPU': 4})
        get = usage_obj.get_by_consumer_type
        self.assertEqual({
            'INSTANCE': {'VCPU': 3, 'MEMORY_MB': 256, 'consumer_count': 2},
            'MIGRATION': {'DISK_GB': 5, 'consumer_count': 1},
            'unknown': {'VCPU': 4, 'consumer_count': 1},
        }, get(self.context, PROJECT))
        self.assertEqual({'all': {'VCPU': 7, 'MEMORY_MB': 256,
                                  'DISK_GB': 5, 'consumer_count': 4}},
                         get(self.context, PROJECT, consumer_type='all'))
        self.assertEqual({'unknown': {'VCPU': 4, 'consumer_count': 1}},
                         get(self.context, PROJECT, consumer_type='unknown'))
        self.assertEqual({'MIGRATION': {'DISK_GB': 5, 'consumer_count': 1}},
                         get(self.context, PROJECT,
                             consumer_type='MIGRATION'))
        self.assertEqual({}, get(self.context, PROJECT,
                                 consumer_type='NOPE'))
        self.assertEqual({}, get(self.context, 'nobody',
                                 consumer_type='all'))
        self.assertEqual({'INSTANCE': {'VCPU': 2, 'MEMORY_MB': 256,
                                       'consumer_count': 1}},
                         get(self.context, PROJECT, user_id=USER,
                             consumer_type='INSTANCE'))

    def test_projects_and_users_are_shared(self):
        self.write(C1, {'VCPU': 1})
        self.write(C2, {'VCPU': 1})
        with self.db.engine.connect() as conn:
            count = conn.execute(sa.select(sa.func.count()).select_from(
                models.Project.__table__)).scalar()
        self.assertEqual(1, count)
