"""Allocation processing by conductors, on a real database.

The conductors are real ``ConductorManager`` instances (local transport,
no RPC server); several of them in one process stand for several hosts.
"""

import threading

import fixtures

from alloc_framework.common import exception
from alloc_framework.conductor import allocations
from alloc_framework.conductor import rpcapi
from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import allocation as alloc_obj
from tests import base
from tests.functional.conductor import conductors
from tests.functional.objects.baremetal import factories as f


class ConductorTestCase(base.DBTestCase):

    def setUp(self):
        super().setUp()
        self.ctx = f.admin_context()
        self.config(check_allocations_interval=0, group='conductor')

    def start_conductor(self, host, **kw):
        return conductors.start(self, host, **kw)

    def stop_conductor(self, manager, unregister=True):
        conductors.stop(manager, unregister=unregister)

    def states(self):
        return sorted(a.state for a in objects.Allocation.list(self.ctx))


class TestCreateAllocation(ConductorTestCase):

    def test_backend_waits_on_the_conductor_stop_event(self):
        manager = self.start_conductor('c1')
        self.assertIs(manager.stop_event,
                      manager.allocation_backend.stop_event)
        self.assertFalse(manager.stop_event.is_set())

    def test_allocate_and_destroy(self):
        manager = self.start_conductor('c1')
        node = f.make_node(self.ctx, traits=['CUSTOM_A'])
        created = allocations.create_allocation(
            manager, self.ctx,
            objects.Allocation(self.ctx, resource_class='baremetal',
                               traits=['CUSTOM_A']))
        self.assertEqual(manager.conductor.id, created.conductor_affinity)
        done, = conductors.wait_processed(self.ctx, 1)
        self.assertEqual(alloc_obj.ACTIVE, done.state)
        self.assertEqual(node.id, done.node_id)
        node.refresh()
        self.assertEqual(done.uuid, node.instance_uuid)
        allocations.destroy_allocation(manager, self.ctx, done)
        node.refresh()
        self.assertIsNone(node.instance_uuid)
        self.assertEqual([], objects.Allocation.list(self.ctx))

    def test_error_names_the_filter(self):
        manager = self.start_conductor('c1')
        f.make_node(self.ctx, traits=['CUSTOM_A'])
        for kw, words in (
                ({'resource_class': 'gpu'}, 'resource class gpu'),
                ({'resource_class': 'baremetal', 'traits': ['CUSTOM_Z']},
                 'traits CUSTOM_Z')):
            a = allocations.create_allocation(
                manager, self.ctx, objects.Allocation(self.ctx, **kw))
            done = conductors.wait_allocation(self.ctx, a.id)
            self.assertEqual(alloc_obj.ERROR, done.state)
            self.assertIn(words, done.last_error)
            self.assertIsNone(done.node_id)

    def test_destroy_active_node_conflict(self):
        manager = self.start_conductor('c1')
        node = f.make_node(self.ctx)
        a = allocations.create_allocation(
            manager, self.ctx,
            objects.Allocation(self.ctx, resource_class='baremetal'))
        conductors.wait_processed(self.ctx, 1)
        node.refresh()
        node.provision_state = 'active'
        node.save()
        a.refresh()
        exc = self.assertRaises(exception.NodeIsAllocated,
                                allocations.destroy_allocation, manager,
                                self.ctx, a)
        self.assertEqual(409, exc.code)

    def test_backfill_is_synchronous_and_atomic(self):
        manager = self.start_conductor('c1')
        active = f.make_node(self.ctx, provision_state='active')
        done = allocations.create_allocation(
            manager, self.ctx,
            objects.Allocation(self.ctx, resource_class='baremetal',
                               node_id=active.id))
        self.assertEqual(alloc_obj.ACTIVE, done.state)
        self.assertEqual(active.id, done.node_id)
        available = f.make_node(self.ctx)
        exc = self.assertRaises(
            exception.InvalidParameterValue,
            allocations.create_allocation, manager, self.ctx,
            objects.Allocation(self.ctx, resource_class='baremetal',
                               node_id=available.id))
        self.assertEqual(400, exc.code)
        self.assertEqual(1, len(objects.Allocation.list(self.ctx)))

    def test_full_pool_refuses_and_leaves_nothing(self):
        self.config(workers_pool_size=2, group='conductor')
        manager = self.start_conductor('c1')
        release = threading.Event()
        self.addCleanup(release.set)
        running = threading.Semaphore(0)

        def block():
            running.release()
            release.wait(60)

        # Both workers busy, then the backlog full.
        blocked = [manager.spawn_worker(block) for _ in range(2)]
        for _ in range(2):
            running.acquire(timeout=30)
        try:
            while True:
                blocked.append(manager.spawn_worker(block))
        except exception.NoFreeConductorWorker:
            pass
        exc = self.assertRaises(
            exception.NoFreeConductorWorker, allocations.create_allocation,
            manager, self.ctx,
            objects.Allocation(self.ctx, resource_class='baremetal'))
        self.assertEqual(503, exc.code)
        self.assertEqual([], objects.Allocation.list(self.ctx))
        release.set()
        for future in blocked:
            future.result()

    def test_repeated_processing_keeps_the_reserved_node(self):
        # Two processings of one allocation by its own conductor: the
        # second finds the allocation's UUID on the first one's node. Its
        # failure must not turn the active allocation into an error.
        manager = self.start_conductor('c1')
        f.make_node(self.ctx)
        f.make_node(self.ctx)
        a = f.make_allocation(self.ctx,
                              conductor_affinity=manager.conductor.id)
        stale = objects.Allocation.get_by_id(self.ctx, a.id)
        allocations.do_allocate(manager, self.ctx, a)
        done = objects.Allocation.get_by_id(self.ctx, a.id)
        self.assertEqual(alloc_obj.ACTIVE, done.state)
        with self.assertLogs('alloc_framework.conductor.allocations',
                             'WARNING') as logs:
            allocations.do_allocate(manager, self.ctx, stale)
        self.assertIn('is no longer allocating', '\n'.join(logs.output))
        after = objects.Allocation.get_by_id(self.ctx, a.id)
        self.assertEqual(alloc_obj.ACTIVE, after.state)
        self.assertEqual(done.node_id, after.node_id)
        self.assertIsNone(after.last_error)
        reserved = [n for n in objects.Node.list(self.ctx)
                    if n.instance_uuid == a.uuid]
        self.assertEqual([done.node_id], [n.id for n in reserved])

    def test_failure_of_an_allocating_allocation_is_recorded(self):
        manager = self.start_conductor('c1')
        a = f.make_allocation(self.ctx,
                              conductor_affinity=manager.conductor.id)
        self.assertTrue(a.fail('no node'))
        after = objects.Allocation.get_by_id(self.ctx, a.id)
        self.assertEqual((alloc_obj.ERROR, 'no node', None),
                         (after.state, after.last_error, after.node_id))
        # Only once: an error allocation is no longer allocating.
        self.assertFalse(after.fail('again'))
        self.assertEqual('no node', objects.Allocation.get_by_id(
            self.ctx, a.id).last_error)

    def test_deleted_before_processing(self):
        manager = self.start_conductor('c1')
        node = f.make_node(self.ctx)
        a = f.make_allocation(self.ctx,
                              conductor_affinity=manager.conductor.id)
        objects.Allocation.get_by_id(self.ctx, a.id).destroy()
        allocations.do_allocate(manager, self.ctx, a)
        node.refresh()
        self.assertIsNone(node.instance_uuid)
        self.assertEqual([], objects.Allocation.list(self.ctx))


class TestConcurrency(ConductorTestCase):
    """50 simultaneous requests for 20 matching nodes, two conductors."""

    #: Simultaneous requests, and the matching nodes they compete for (a
    #: subclass may run a smaller load that shows the same).
    clients = 50
    matching_nodes = 20

    def test_fifty_requests_twenty_nodes(self):
        clients, matching = self.clients, self.matching_nodes
        self.config(workers_pool_size=64, group='conductor')
        managers = [self.start_conductor('c1'), self.start_conductor('c2')]
        nodes = [f.make_node(self.ctx) for _ in range(matching)]
        f.make_node(self.ctx, resource_class='other')
        f.make_node(self.ctx, maintenance=True)
        barrier = threading.Barrier(clients)
        failures = []

        def request(i):
            ctx = f.admin_context()
            try:
                barrier.wait()
                allocations.create_allocation(
                    managers[i % 2], ctx,
                    objects.Allocation(ctx, resource_class='baremetal',
                                       name='req-%d' % i))
            except Exception as exc:
                failures.append(exc)

        base.run_threads(request, clients)
        self.assertEqual([], failures)
        items = conductors.wait_processed(self.ctx, clients)
        active = [a for a in items if a.state == alloc_obj.ACTIVE]
        error = [a for a in items if a.state == alloc_obj.ERROR]
        self.assertEqual(matching, len(active))
        self.assertEqual(clients - matching, len(error))
        self.assertEqual(matching, len({a.node_id for a in active}))
        for a in error:
            self.assertIsNone(a.node_id)
            self.assertIn('resource class baremetal', a.last_error)
        by_node = {a.node_id: a for a in active}
        for node in nodes:
            node.refresh()
            self.assertEqual(by_node[node.id].uuid, node.instance_uuid)
            self.assertEqual(by_node[node.id].id, node.allocation_id)
            self.assertIsNone(node.reservation)


class TestResumeAndTakeOver(ConductorTestCase):

    def _orphan(self, conductor_id, **kw):
        return f.make_allocation(self.ctx, conductor_affinity=conductor_id,
                                 **kw)

    def test_resume_on_restart(self):
        manager = self.start_conductor('c1')
        conductor_id = manager.conductor.id
        self.stop_conductor(manager)
        node = f.make_node(self.ctx)
        # Recorded by c1 before it stopped, never processed.
        orphan = self._orphan(conductor_id)
        other = self._orphan(conductor_id + 1000)
        manager = self.start_conductor('c1')
        self.assertEqual(conductor_id, manager.conductor.id)
        done = conductors.wait_allocation(self.ctx, orphan.id)
        self.assertEqual(alloc_obj.ACTIVE, done.state)
        self.assertEqual(node.id, done.node_id)
        self.assertEqual(alloc_obj.ALLOCATING, objects.Allocation.get_by_id(
            self.ctx, other.id).state)

    def test_created_while_starting_is_not_resumed(self):
        # An allocation created through the conductor once it serves RPC
        # is processed by that request: the resume at start must not
        # process it a second time.
        manager = self.start_conductor('c1')
        conductor_id = manager.conductor.id
        self.stop_conductor(manager)
        node = f.make_node(self.ctx)
        orphan = self._orphan(conductor_id)
        arrived = []
        original = rpcapi.load_transport

        def load_transport(conf):
            transport = original(conf)
            start_server = transport.start_server

            def serve(manager):
                start_server(manager)
                # A request arrives the moment the server is up; its own
                # processing is left out here, as if it were still in its
                # worker while the conductor finishes starting.
                arrived.append(self._orphan(conductor_id))
            transport.start_server = serve
            return transport
        self.useFixture(fixtures.MockPatchObject(
            rpcapi, 'load_transport', load_transport))
        manager = self.start_conductor('c1')
        done = conductors.wait_allocation(self.ctx, orphan.id)
        self.assertEqual((alloc_obj.ACTIVE, node.id),
                         (done.state, done.node_id))
        # Stopping waits for the workers: had the resume taken the new
        # allocation too, it would have failed it (the only node is gone).
        self.stop_conductor(manager)
        self.assertEqual(alloc_obj.ALLOCATING, objects.Allocation.get_by_id(
            self.ctx, arrived[0].id).state)

    def test_dead_conductor_is_taken_over(self):
        dead = self.start_conductor('dead')
        dead_id = dead.conductor.id
        self.stop_conductor(dead, unregister=False)
        conductors.kill_heartbeat(dead_id)
        node = f.make_node(self.ctx)
        orphan = self._orphan(dead_id)
        live = self.start_conductor('live')
        self.assertEqual(1, allocations.take_over_dead_allocations(
            live, self.ctx))
        done = objects.Allocation.get_by_id(self.ctx, orphan.id)
        self.assertEqual(alloc_obj.ACTIVE, done.state)
        self.assertEqual(live.conductor.id, done.conductor_affinity)
        self.assertEqual(node.id, done.node_id)
        self.assertEqual(0, allocations.take_over_dead_allocations(
            live, self.ctx))

    def test_live_conductors_allocations_are_left_alone(self):
        busy = self.start_conductor('busy')
        orphan = self._orphan(busy.conductor.id)
        live = self.start_conductor('live')
        self.assertEqual(0, allocations.take_over_dead_allocations(
            live, self.ctx))
        self.assertEqual(busy.conductor.id, objects.Allocation.get_by_id(
            self.ctx, orphan.id).conductor_affinity)

    def test_only_one_of_many_takes_over(self):
        dead = self.start_conductor('dead')
        dead_id = dead.conductor.id
        self.stop_conductor(dead, unregister=False)
        conductors.kill_heartbeat(dead_id)
        for _ in range(5):
            f.make_node(self.ctx)
        orphans = [self._orphan(dead_id) for _ in range(5)]
        lives = [self.start_conductor('live-%d' % i) for i in range(3)]
        counts = []
        threads = [threading.Thread(
            target=lambda m: counts.append(
                allocations.take_over_dead_allocations(m, f.admin_context())),
            args=(m,)) for m in lives]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(5, sum(counts))
        items = [objects.Allocation.get_by_id(self.ctx, o.id)
                 for o in orphans]
        self.assertEqual({alloc_obj.ACTIVE}, {a.state for a in items})
        self.assertEqual(5, len({a.node_id for a in items}))

    def test_loser_of_a_take_over_writes_nothing(self):
        # A slow conductor still holds its object when another takes the
        # allocation over: its reservation must be rolled back.
        slow = self.start_conductor('slow')
        node = f.make_node(self.ctx)
        orphan = self._orphan(slow.conductor.id)
        stale = objects.Allocation.get_by_id(self.ctx, orphan.id)
        live = self.start_conductor('live')
        self.assertTrue(objects.Allocation.take_over(
            self.ctx, orphan.id, slow.conductor.id, live.conductor.id))
        allocations.do_allocate(slow, self.ctx, stale)
        fresh = objects.Allocation.get_by_id(self.ctx, orphan.id)
        self.assertEqual(alloc_obj.ALLOCATING, fresh.state)
        node.refresh()
        self.assertIsNone(node.instance_uuid)
