"""The MD5 ranges of a conductor's nodes agree with the hash ring."""

import hashlib

from oslo_utils import uuidutils
import testtools
from tooz import hashring

from alloc_framework.conductor import hash_ring


def _in(ranges, key):
    digest = hashlib.md5(key.encode('utf-8')).hexdigest()
    return any((low is None or digest >= low)
               and (high is None or digest < high)
               for low, high in ranges)


class OwnedRangesTestCase(testtools.TestCase):

    def _check(self, hosts, keys):
        ring = hashring.HashRing(hosts, partitions=hash_ring.PARTITIONS)
        ranges = {host: hash_ring.owned_ranges(ring, host)
                  for host in hosts}
        for key in keys:
            owner = next(iter(ring.get_nodes(key.encode('utf-8'))))
            self.assertEqual([owner],
                             [h for h in hosts if _in(ranges[h], key)],
                             key)
        return ranges

    def test_same_owner_as_the_ring(self):
        keys = [uuidutils.generate_uuid() for _ in range(3000)]
        for hosts in (['a', 'b'], ['c1', 'c2', 'c3'],
                      ['h%d' % i for i in range(7)]):
            ranges = self._check(hosts, keys)
            for host in hosts:
                bounds = [b for r in ranges[host] for b in r
                          if b is not None]
                self.assertEqual(sorted(bounds), bounds)
                self.assertTrue(all(len(b) == 32 for b in bounds))

    def test_keys_on_the_ring_points_and_the_ends(self):
        # The ring's own points, one below each and the extremes of the
        # hash space: the bounds are where off-by-one errors would be.
        ring = hashring.HashRing(['a', 'b', 'c'],
                                 partitions=hash_ring.PARTITIONS)
        points = ring._partitions
        hosts = ['a', 'b', 'c']
        ranges = {h: hash_ring.owned_ranges(ring, h) for h in hosts}
        digests = ([hash_ring._hex(p) for p in points]
                   + [hash_ring._hex(p - 1) for p in points]
                   + ['0' * 32, 'f' * 32])
        for digest in digests:
            owner = ring._ring[next((p for p in points
                                     if p > int(digest, 16)), points[0])]
            matching = [h for h in hosts if any(
                (low is None or digest >= low)
                and (high is None or digest < high)
                for low, high in ranges[h])]
            self.assertEqual([owner], matching, digest)

    def test_alone_or_absent(self):
        ring = hashring.HashRing(['only'], partitions=hash_ring.PARTITIONS)
        self.assertEqual([(None, None)],
                         hash_ring.owned_ranges(ring, 'only'))
        self.assertEqual([], hash_ring.owned_ranges(ring, 'other'))
