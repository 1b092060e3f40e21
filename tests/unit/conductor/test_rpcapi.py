"""The RPC client's memory of conductors that did not answer."""

from alloc_framework.conductor import rpcapi
from tests import base


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


class UnansweredHostsTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.config(heartbeat_timeout=20, hash_ring_reset_interval=5,
                    group='conductor')
        self.clock = Clock()
        self.hosts = rpcapi.UnansweredHosts(self.conf, clock=self.clock)

    def test_remembered_until_the_ring_must_have_moved(self):
        self.assertIsNone(self.hosts.seconds_left('a'))
        self.assertIsNone(self.hosts.seconds_since_missed('a'))
        self.hosts.add('a')
        self.assertEqual({'a'}, self.hosts.hosts())
        self.assertEqual(25, self.hosts.seconds_left('a'))
        self.clock.now += 24.5
        self.assertEqual(0.5, self.hosts.seconds_left('a'))
        self.clock.now += 0.5
        self.assertIsNone(self.hosts.seconds_left('a'))
        self.assertEqual(frozenset(), self.hosts.hosts())

    def test_another_miss_does_not_extend_but_is_recorded(self):
        # The deadline counts from the first miss: the conductor's
        # heartbeat stopped before it.
        self.hosts.add('a')
        self.clock.now += 10
        self.hosts.add('a')
        self.assertEqual(15, self.hosts.seconds_left('a'))
        self.assertEqual(0, self.hosts.seconds_since_missed('a'))
        self.clock.now += 3
        self.assertEqual(3, self.hosts.seconds_since_missed('a'))

    def test_a_miss_after_expiry_starts_again(self):
        self.hosts.add('a')
        self.clock.now += 30
        self.hosts.add('a')
        self.assertEqual(25, self.hosts.seconds_left('a'))

    def test_discard(self):
        self.hosts.add('a')
        self.hosts.add('b')
        self.hosts.discard('a')
        self.hosts.discard('nobody')
        self.assertEqual({'b'}, self.hosts.hosts())
        self.assertIsNone(self.hosts.seconds_since_missed('a'))
