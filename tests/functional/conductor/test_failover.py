"""What the RPC client does when a conductor does not answer.

Three real conductors in the process, on a real database, reached through
the local transport; a wrapper makes chosen conductors silent the ways a
conductor that died (or is very slow) is silent over a message broker:
the call is lost before the conductor sees it, or the conductor does the
work and its answer is lost, or the call waits at the broker and reaches
the conductor later, after the client gave up.
"""

import functools
from unittest import mock

from oslo_utils import uuidutils

from alloc_framework.common import exception
from alloc_framework.conductor import rpc_local
from alloc_framework.conductor import rpcapi
from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import allocation as alloc_obj
from tests import base
from tests.functional.conductor import conductors
from tests.functional.objects.baremetal import factories as f

HOSTS = ('alpha', 'bravo', 'charlie')
# Lost before the conductor sees it; done but the answer lost; delivered
# to the conductor when the client calls another one.
LOST, ANSWER_LOST, LATE = 'lost', 'answer lost', 'late'


class SilentTransport(rpc_local.LocalTransport):
    """The local transport, with conductors that do not answer.

    ``silent`` maps a host to how its calls go wrong (LOST, ANSWER_LOST,
    LATE); ``calls`` lists the (host, method) of every call.
    """

    def __init__(self, conf):
        super().__init__(conf)
        self.silent = {}
        self.calls = []
        self._late = []

    def call(self, context, host, method, **kwargs):
        self.calls.append((host, method))
        late, self._late = self._late, []
        for delivery in late:
            try:
                delivery()
            except exception.AllocFrameworkException:
                pass  # nobody waits for this answer any more
        mode = self.silent.get(host)
        if mode is None:
            return super().call(context, host, method, **kwargs)
        if mode == ANSWER_LOST:
            try:
                super().call(context, host, method, **kwargs)
            except exception.AllocFrameworkException:
                pass
        elif mode == LATE:
            self._late.append(functools.partial(
                super().call, context, host, method, **kwargs))
        raise exception.ConductorNotAnswering(host=host)


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


class FailoverTestCase(base.DBTestCase):

    def setUp(self):
        super().setUp()
        self.config(rpc_transport='local', rpc_failover_timeout=5)
        self.config(check_allocations_interval=0, heartbeat_timeout=60,
                    hash_ring_reset_interval=15, group='conductor')
        self.ctx = f.admin_context()
        self.managers = {host: conductors.start(self, host)
                         for host in HOSTS}
        self.transport = SilentTransport(self.conf)
        self.rpc = rpcapi.ConductorAPI(self.conf, transport=self.transport)
        self.clock = Clock()
        self.rpc.unanswered = rpcapi.UnansweredHosts(self.conf,
                                                     clock=self.clock)
        for _ in range(3):
            f.make_node(self.ctx)

    def prefer(self, host):
        """Random choices take ``host`` whenever they may."""
        def choice(hosts):
            return host if host in hosts else sorted(hosts)[0]
        patcher = mock.patch.object(rpcapi.random, 'choice', choice)
        patcher.start()
        self.addCleanup(patcher.stop)

    def allocations(self):
        return objects.Allocation.list(self.ctx)

    def wait_active(self, uuid):
        def active():
            allocation = objects.Allocation.get_by_uuid(self.ctx, uuid)
            return allocation.state == alloc_obj.ACTIVE and allocation
        return base.wait_for(active, 'allocation %s to be active' % uuid)

    def create(self, **kw):
        return self.rpc.create_allocation(self.ctx, objects.Allocation(
            self.ctx, resource_class='baremetal', **kw))


class CreateAllocationTestCase(FailoverTestCase):

    def test_silent_conductor_is_replaced(self):
        self.prefer('alpha')
        self.transport.silent['alpha'] = LOST
        created = self.create()
        self.assertEqual([('alpha', 'create_allocation'),
                          ('bravo', 'create_allocation')],
                         self.transport.calls)
        self.assertEqual(self.managers['bravo'].conductor.id,
                         created.conductor_affinity)
        self.wait_active(created.uuid)
        self.assertEqual([created.uuid], [a.uuid for a in self.allocations()])
        self.assertEqual({'alpha'}, self.rpc.unanswered.hosts())

    def test_allocation_of_a_silent_conductor_is_the_answer(self):
        # The conductor created it and died before it answered: found
        # under the UUID fixed before the call, it is not created again.
        self.prefer('alpha')
        self.transport.silent['alpha'] = ANSWER_LOST
        created = self.create()
        self.assertEqual([('alpha', 'create_allocation')],
                         self.transport.calls)
        self.assertEqual(self.managers['alpha'].conductor.id,
                         created.conductor_affinity)
        self.wait_active(created.uuid)
        self.assertEqual(1, len(self.allocations()))

    def test_late_conductor_does_not_create_it_twice(self):
        # The first conductor gets the call after the client asked
        # another one: whichever comes second fails on the UUID, and the
        # answer is the allocation that exists.
        self.prefer('alpha')
        self.transport.silent['alpha'] = LATE
        created = self.create(name='once')
        self.assertEqual([('alpha', 'create_allocation'),
                          ('bravo', 'create_allocation')],
                         self.transport.calls)
        allocation, = self.allocations()
        self.assertEqual(allocation.uuid, created.uuid)
        # The late conductor's creation is the one that landed.
        self.assertEqual(self.managers['alpha'].conductor.id,
                         created.conductor_affinity)
        self.assertEqual('once', created.name)
        self.wait_active(created.uuid)

    def test_name_taken_before_stays_a_conflict(self):
        # The retry's duplicate name is the answer only when the first
        # conductor made the allocation.
        f.make_allocation(self.ctx, name='taken')
        self.prefer('alpha')
        self.transport.silent['alpha'] = LOST
        self.assertRaises(exception.AllocationDuplicateName, self.create,
                          name='taken')
        self.assertEqual(1, len(self.allocations()))

    def test_backfill_of_a_late_conductor_is_the_answer(self):
        self.prefer('alpha')
        self.transport.silent['alpha'] = LATE
        node = f.make_node(self.ctx, provision_state='active')
        created = self.create(node_id=node.id)
        self.assertEqual(alloc_obj.ACTIVE, created.state)
        self.assertEqual(node.id, created.node_id)
        self.assertEqual(1, len(self.allocations()))

    def test_client_uuid_of_an_earlier_allocation_stays_a_conflict(self):
        taken = f.make_allocation(self.ctx, resource_class='other')
        self.prefer('alpha')
        self.transport.silent['alpha'] = LOST
        exc = self.assertRaises(exception.AllocationAlreadyExists,
                                self.create, uuid=taken.uuid)
        self.assertEqual(409, exc.code)
        self.assertEqual([taken.uuid], [a.uuid for a in self.allocations()])

    def test_client_uuid_created_by_the_silent_conductor(self):
        uuid = uuidutils.generate_uuid()
        self.prefer('alpha')
        self.transport.silent['alpha'] = ANSWER_LOST
        created = self.create(uuid=uuid, name='mine', traits=['CUSTOM_X'],
                              extra={'a': 1})
        self.assertEqual(uuid, created.uuid)
        self.assertEqual([('alpha', 'create_allocation')],
                         self.transport.calls)

    def test_client_uuid_with_a_late_conductor(self):
        uuid = uuidutils.generate_uuid()
        self.prefer('alpha')
        self.transport.silent['alpha'] = LATE
        created = self.create(uuid=uuid)
        self.assertEqual(uuid, created.uuid)
        self.assertEqual(1, len(self.allocations()))

    def test_every_conductor_silent(self):
        for host in HOSTS:
            self.transport.silent[host] = LOST
        exc = self.assertRaises(exception.ConductorNotAnswering, self.create)
        self.assertEqual(503, exc.code)
        self.assertEqual(sorted(HOSTS),
                         sorted(host for host, _m in self.transport.calls))
        self.assertEqual([], self.allocations())
        self.assertEqual(set(HOSTS), self.rpc.unanswered.hosts())

    def test_attempts_are_bounded(self):
        conductors.start(self, 'delta')
        for host in HOSTS + ('delta',):
            self.transport.silent[host] = LOST
        self.assertRaises(exception.ConductorNotAnswering, self.create)
        self.assertEqual(rpcapi.CREATE_ATTEMPTS, len(self.transport.calls))

    def test_silent_conductor_is_avoided_until_it_must_be_dead(self):
        self.prefer('alpha')
        self.transport.silent['alpha'] = LOST
        self.create()
        del self.transport.silent['alpha']
        self.transport.calls[:] = []
        for _ in range(2):
            self.create()
        self.assertNotIn('alpha', [h for h, _m in self.transport.calls])
        # Remembered for heartbeat_timeout + hash_ring_reset_interval:
        # by then a dead conductor has left the ring.
        self.clock.now += 74
        self.assertEqual({'alpha'}, self.rpc.unanswered.hosts())
        self.clock.now += 1
        self.assertEqual(set(), self.rpc.unanswered.hosts())
        self.create()
        self.assertEqual(('alpha', 'create_allocation'),
                         self.transport.calls[-1])

    def test_silent_conductor_is_tried_when_no_other_is_left(self):
        self.prefer('alpha')
        for host in ('alpha', 'bravo'):
            self.transport.silent[host] = LOST
            self.rpc.unanswered.add(host)
        self.transport.silent['charlie'] = LOST
        self.assertRaises(exception.ConductorNotAnswering, self.create)
        # The one that answered lately first, then the others.
        self.assertEqual('charlie', self.transport.calls[0][0])
        # One that answers again is forgotten.
        self.transport.silent.clear()
        self.create()
        self.assertEqual(('alpha', 'create_allocation'),
                         self.transport.calls[-1])
        self.assertNotIn('alpha', self.rpc.unanswered.hosts())


class NodeCallsTestCase(FailoverTestCase):

    def setUp(self):
        super().setUp()
        self.node = f.make_node(self.ctx, provision_state='manageable')
        self.host = self.rpc.ring.get_host_for_node(self.node.uuid)

    def update(self):
        node = objects.Node.get_by_id(self.ctx, self.node.id)
        node.extra = {'at': self.clock.now}
        return self.rpc.update_node(self.ctx, node)

    def test_conductor_of_the_node_does_not_answer(self):
        self.transport.silent[self.host] = LOST
        exc = self.assertRaises(exception.ConductorNotAnswering, self.update)
        self.assertEqual(503, exc.code)
        self.assertEqual(
            'Conductor %s is not answering; its nodes move to another '
            'conductor within 76 s, please retry.' % self.host, str(exc))
        self.assertEqual([(self.host, 'update_node')], self.transport.calls)

        # Within rpc_failover_timeout of the silence: at once, no call.
        self.clock.now += 4
        exc = self.assertRaises(exception.ConductorNotAnswering, self.update)
        self.assertIn('within 72 s', str(exc))
        self.assertEqual(1, len(self.transport.calls))

        # Then a ping first, not the call: a call would wait at the
        # broker, to run if the conductor came back.
        self.clock.now += 1
        self.assertRaises(exception.ConductorNotAnswering,
                          self.rpc.change_node_power_state, self.ctx,
                          self.node.id, 'power on')
        self.assertEqual((self.host, 'ping'), self.transport.calls[-1])

        # The conductor is back: the ping is answered, the call goes.
        self.clock.now += 5
        del self.transport.silent[self.host]
        self.assertEqual({'at': self.clock.now}, self.update().extra)
        self.assertEqual([(self.host, 'ping'), (self.host, 'update_node')],
                         self.transport.calls[-2:])
        self.assertEqual(set(), self.rpc.unanswered.hosts())

    def test_a_silent_creation_makes_node_calls_fail_fast(self):
        self.prefer(self.host)
        self.transport.silent[self.host] = LOST
        self.create()
        calls = len(self.transport.calls)
        self.assertRaises(exception.ConductorNotAnswering,
                          self.rpc.do_provisioning_action, self.ctx,
                          self.node.id, 'provide')
        self.assertEqual(calls, len(self.transport.calls))

    def test_other_conductors_nodes_are_served(self):
        other = next(h for h in HOSTS if h != self.host)
        self.transport.silent[other] = LOST
        self.rpc.unanswered.add(other)
        self.assertEqual({'at': self.clock.now}, self.update().extra)
        self.assertEqual([(self.host, 'update_node')], self.transport.calls)

    def test_ping(self):
        self.assertEqual(self.host, self.rpc.transport.ping(self.ctx,
                                                            self.host))
