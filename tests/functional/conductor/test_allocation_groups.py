"""Allocation groups on conductors, on a real database.

Races between groups and single allocations for a small pool, and a
conductor killed in the middle of a group.
"""

import threading

import fixtures

from alloc_framework.common import exception
from alloc_framework.conductor import allocation_groups
from alloc_framework.conductor import allocations
from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import allocation as alloc_obj
from alloc_framework.objects.baremetal import allocation_group as group_obj
from alloc_framework.objects.baremetal import group_reservation
from tests import base
from tests.functional.conductor import conductors
from tests.functional.conductor import test_allocations
from tests.functional.objects.baremetal import factories as f


def wait_group(ctx, group_id, timeout=60):
    def processed():
        group = objects.AllocationGroup.get_by_id(ctx, group_id)
        return group if group.state != group_obj.ALLOCATING else None
    return base.wait_for(processed, 'group %s to be processed' % group_id,
                         timeout=timeout, interval=0.05)


def new_group(ctx, *counts, **kw):
    return objects.AllocationGroup(
        ctx, members=[{'count': c, 'resource_class': 'baremetal',
                       'traits': [], 'candidate_nodes': None}
                      for c in counts], **kw)


class TestGroupRaces(test_allocations.ConductorTestCase):
    """Groups and single allocations race for a pool too small for all."""

    def test_groups_and_singles_never_over_reserve(self):
        self.config(workers_pool_size=32, group='conductor')
        managers = [self.start_conductor('c1'), self.start_conductor('c2')]
        pool = 10
        for _ in range(pool):
            f.make_node(self.ctx)
        groups, singles = 4, 6
        barrier = threading.Barrier(groups + singles)
        failures, made = [], []

        def create_group(i):
            ctx = f.admin_context()
            try:
                barrier.wait(30)
                made.append(allocation_groups.create_allocation_group(
                    managers[i % 2], ctx, new_group(ctx, 2, 1)))
            except Exception as exc:
                failures.append(exc)

        def create_single(i):
            ctx = f.admin_context()
            try:
                barrier.wait(30)
                allocations.create_allocation(
                    managers[i % 2], ctx,
                    objects.Allocation(ctx, resource_class='baremetal'))
            except Exception as exc:
                failures.append(exc)

        threads = ([threading.Thread(target=create_group, args=(i,))
                    for i in range(groups)]
                   + [threading.Thread(target=create_single, args=(i,))
                      for i in range(singles)])
        for thread in threads:
            thread.start()
        for thread in threads:
            # Never a deadlock: every request ends.
            thread.join(120)
            self.assertFalse(thread.is_alive())
        self.assertEqual([], failures)
        done = [wait_group(self.ctx, g.id) for g in made]
        expected = singles + 3 * sum(g.state == group_obj.ACTIVE
                                     for g in done)
        standalone = [a for a in conductors.wait_processed(self.ctx, expected)
                      if not (a.extra or {}).get('allocation_group')]
        active_groups = [g for g in done if g.state == group_obj.ACTIVE]
        for group in done:
            if group.state == group_obj.ACTIVE:
                self.assertEqual(3, len(group.allocations))
            else:
                self.assertEqual([], group.allocations)
                self.assertIn('member', group.last_error)
        active_singles = [a for a in standalone
                          if a.state == alloc_obj.ACTIVE]
        reserved = 3 * len(active_groups) + len(active_singles)
        self.assertLessEqual(reserved, pool)
        nodes = objects.Node.list(self.ctx)
        owners = [n.instance_uuid for n in nodes if n.instance_uuid]
        # One allocation per reserved node, every allocation on one node.
        self.assertEqual(reserved, len(owners))
        self.assertEqual(len(owners), len(set(owners)))
        everything = objects.Allocation.list(self.ctx)
        self.assertEqual(sorted(owners),
                         sorted(a.uuid for a in everything
                                if a.state == alloc_obj.ACTIVE))
        # Nobody lost: a request failed only when the pool ran short.
        if reserved < pool - 2:
            self.assertEqual([], [g for g in done
                                  if g.state == group_obj.ERROR])


class _Killed(BaseException):
    """Stands for the death of the conductor's process mid-transaction."""


class TestConductorKilled(test_allocations.ConductorTestCase):

    def test_killed_mid_group_leaves_nothing_and_is_taken_over(self):
        dead = self.start_conductor('dead')
        for _ in range(4):
            f.make_node(self.ctx)
        claims = []
        dying = [True]
        original = group_reservation._claim

        def dying_claim(*args, **kwargs):
            claims.append(1)
            if dying[0] and len(claims) == 3:
                raise _Killed()
            return original(*args, **kwargs)

        self.useFixture(fixtures.MonkeyPatch(
            'alloc_framework.objects.baremetal.group_reservation._claim',
            dying_claim))
        group = new_group(self.ctx, 4)
        group.conductor_affinity = dead.conductor.id
        group.create(self.ctx)
        # The worker dies with two nodes claimed in its transaction.
        self.assertRaises(_Killed, dead.allocation_backend.allocate_group,
                          self.ctx, group)
        self.stop_conductor(dead, unregister=False)
        conductors.kill_heartbeat(dead.conductor.id)
        # Nothing partial: the transaction never committed.
        self.assertEqual([], objects.Allocation.list(self.ctx))
        self.assertEqual([], [n for n in objects.Node.list(self.ctx)
                              if n.instance_uuid])
        self.assertEqual(group_obj.ALLOCATING,
                         objects.AllocationGroup.get_by_id(
                             self.ctx, group.id).state)
        dying[0] = False
        live = self.start_conductor('live')
        self.assertEqual(1, allocation_groups.take_over_dead_groups(
            live, self.ctx))
        done = objects.AllocationGroup.get_by_id(self.ctx, group.id)
        self.assertEqual((group_obj.ACTIVE, live.conductor.id, 4),
                         (done.state, done.conductor_affinity,
                          len(done.allocations)))
        self.assertEqual(4, len([n for n in objects.Node.list(self.ctx)
                                 if n.instance_uuid]))
        self.assertEqual(0, allocation_groups.take_over_dead_groups(
            live, self.ctx))

    def test_resumed_on_restart(self):
        manager = self.start_conductor('c1')
        conductor_id = manager.conductor.id
        self.stop_conductor(manager)
        f.make_node(self.ctx)
        group = new_group(self.ctx, 1)
        group.conductor_affinity = conductor_id
        group.create(self.ctx)
        self.start_conductor('c1')
        self.assertEqual(group_obj.ACTIVE,
                         wait_group(self.ctx, group.id).state)

    def test_loser_of_a_take_over_writes_nothing(self):
        manager = self.start_conductor('c1')
        f.make_node(self.ctx)
        group = new_group(self.ctx, 1)
        group.conductor_affinity = manager.conductor.id
        group.create(self.ctx)
        objects.AllocationGroup.take_over(self.ctx, group.id,
                                          manager.conductor.id, 9999)
        self.assertRaises(exception.AllocationTakenOver,
                          manager.allocation_backend.allocate_group,
                          self.ctx, group)
        self.assertEqual([], objects.Allocation.list(self.ctx))

    def test_deleted_while_processing_leaves_nothing(self):
        manager = self.start_conductor('c1')
        f.make_node(self.ctx)
        group = new_group(self.ctx, 1)
        group.conductor_affinity = manager.conductor.id
        group.create(self.ctx)
        group_reservation.release_group(self.ctx, group)
        self.assertRaises(exception.AllocationGroupNotFound,
                          manager.allocation_backend.allocate_group,
                          self.ctx, group)
        self.assertEqual([], objects.Allocation.list(self.ctx))
        self.assertEqual([], [n for n in objects.Node.list(self.ctx)
                              if n.instance_uuid])
