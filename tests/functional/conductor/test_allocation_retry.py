"""Retrying a failed allocation: ``error`` back to ``allocating``.

Real conductors on a real database (see ``test_allocations``): the retry
is a compare-and-swap on the state, keeps the allocation's UUID and name,
and a retried allocation whose conductor dies is taken over like any
other ``allocating`` one.
"""

import threading

from alloc_framework.common import exception
from alloc_framework.conductor import allocations
from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import allocation as alloc_obj
from tests.functional.conductor import conductors
from tests.functional.conductor import test_allocations as base
from tests.functional.objects.baremetal import factories as f


class TestRetryAllocation(base.ConductorTestCase):

    def _failed(self, manager, **kw):
        values = {'resource_class': 'baremetal', 'name': 'web-1'}
        values.update(kw)
        created = allocations.create_allocation(
            manager, self.ctx, objects.Allocation(self.ctx, **values))
        done = conductors.wait_allocation(self.ctx, created.id)
        self.assertEqual(alloc_obj.ERROR, done.state)
        return done

    def test_retry_finds_a_node_added_since(self):
        manager = self.start_conductor('c1')
        failed = self._failed(manager)
        self.assertIn('resource class baremetal', failed.last_error)
        node = f.make_node(self.ctx)
        retried = allocations.retry_allocation(manager, self.ctx, failed)
        self.assertEqual((failed.id, failed.uuid, 'web-1'),
                         (retried.id, retried.uuid, retried.name))
        self.assertEqual(alloc_obj.ALLOCATING, retried.state)
        self.assertIsNone(retried.last_error)
        done = conductors.wait_allocation(self.ctx, failed.id)
        self.assertEqual(alloc_obj.ACTIVE, done.state)
        self.assertEqual(node.id, done.node_id)
        self.assertIsNone(done.last_error)
        node.refresh()
        self.assertEqual(failed.uuid, node.instance_uuid)
        self.assertEqual(failed.id, node.allocation_id)

    def test_retry_that_fails_again_explains_again(self):
        manager = self.start_conductor('c1')
        failed = self._failed(manager, traits=['CUSTOM_Z'])
        f.make_node(self.ctx)
        allocations.retry_allocation(manager, self.ctx, failed)
        done = conductors.wait_allocation(self.ctx, failed.id)
        self.assertEqual(alloc_obj.ERROR, done.state)
        self.assertIn('traits CUSTOM_Z', done.last_error)
        self.assertIsNone(done.node_id)

    def test_only_error_is_retried(self):
        manager = self.start_conductor('c1')
        f.make_node(self.ctx)
        created = allocations.create_allocation(
            manager, self.ctx,
            objects.Allocation(self.ctx, resource_class='baremetal'))
        active = conductors.wait_allocation(self.ctx, created.id)
        self.assertEqual(alloc_obj.ACTIVE, active.state)
        exc = self.assertRaises(exception.AllocationNotRetryable,
                                allocations.retry_allocation, manager,
                                self.ctx, active)
        self.assertEqual(409, exc.code)
        self.assertIn('active', str(exc))
        pending = f.make_allocation(self.ctx,
                                    conductor_affinity=manager.conductor.id)
        self.assertRaises(exception.AllocationNotRetryable,
                          allocations.retry_allocation, manager, self.ctx,
                          pending)
        self.assertEqual(active.node_id, objects.Allocation.get_by_id(
            self.ctx, active.id).node_id)

    def test_concurrent_retries_process_once(self):
        failed = f.make_allocation(self.ctx, state=alloc_obj.ERROR,
                                   last_error='no node')
        results, errors = [], []
        start = threading.Barrier(4)

        def retry():
            start.wait(30)
            try:
                results.append(objects.Allocation.retry(
                    f.admin_context(), failed.id, None))
            except exception.AllocationNotRetryable as exc:
                errors.append(exc)

        threads = [threading.Thread(target=retry) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        self.assertEqual((1, 3), (len(results), len(errors)))
        self.assertEqual(alloc_obj.ALLOCATING, results[0].state)

    def test_retry_of_a_deleted_allocation_is_not_found(self):
        manager = self.start_conductor('c1')
        failed = self._failed(manager)
        objects.Allocation.get_by_id(self.ctx, failed.id).destroy()
        self.assertRaises(exception.AllocationNotFound,
                          allocations.retry_allocation, manager, self.ctx,
                          failed)

    def test_full_pool_leaves_it_failed_with_its_reason(self):
        self.config(workers_pool_size=2, group='conductor')
        manager = self.start_conductor('c1')
        failed = self._failed(manager)
        release = threading.Event()
        self.addCleanup(release.set)
        running = threading.Semaphore(0)

        def block():
            running.release()
            release.wait(60)

        blocked = [manager.spawn_worker(block) for _ in range(2)]
        for _ in range(2):
            running.acquire(timeout=30)
        try:
            while True:
                blocked.append(manager.spawn_worker(block))
        except exception.NoFreeConductorWorker:
            pass
        f.make_node(self.ctx)
        self.assertRaises(exception.NoFreeConductorWorker,
                          allocations.retry_allocation, manager, self.ctx,
                          failed)
        after = objects.Allocation.get_by_id(self.ctx, failed.id)
        self.assertEqual((alloc_obj.ERROR, failed.last_error),
                         (after.state, after.last_error))
        release.set()
        for future in blocked:
            future.result()

    def test_retried_allocation_of_a_dead_conductor_is_taken_over(self):
        dead = self.start_conductor('dead')
        dead_id = dead.conductor.id
        self.stop_conductor(dead, unregister=False)
        conductors.kill_heartbeat(dead_id)
        failed = f.make_allocation(self.ctx, state=alloc_obj.ERROR,
                                   last_error='no node')
        # The conductor that retried it died before processing it.
        objects.Allocation.retry(self.ctx, failed.id, dead_id)
        node = f.make_node(self.ctx)
        live = self.start_conductor('live')
        self.assertEqual(1, allocations.take_over_dead_allocations(
            live, self.ctx))
        done = objects.Allocation.get_by_id(self.ctx, failed.id)
        self.assertEqual((alloc_obj.ACTIVE, node.id, live.conductor.id),
                         (done.state, done.node_id, done.conductor_affinity))
