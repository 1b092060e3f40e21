"""The spans of ids that searches of candidate roots covered
(``_WindowHints``): one per request, the requests seen last kept."""

from alloc_framework.objects.placement import allocation_candidate as ac
from tests import base


class WindowHintsTestCase(base.TestCase):

    def test_unknown_request(self):
        self.assertIsNone(ac._WindowHints().get(('shape', ())))

    def test_last_span_of_each_request(self):
        hints = ac._WindowHints()
        hints.remember('a', 100)
        hints.remember('b', 7)
        hints.remember('a', 40)
        self.assertEqual(40, hints.get('a'))
        self.assertEqual(7, hints.get('b'))

    def test_requests_seen_last_kept(self):
        hints = ac._WindowHints(kept=3)
        for key in 'abcd':
            hints.remember(key, 1)
        self.assertIsNone(hints.get('a'))
        # A request searched again counts as seen last.
        hints.remember('b', 2)
        hints.remember('e', 1)
        self.assertIsNone(hints.get('c'))
        self.assertEqual(2, hints.get('b'))
        self.assertEqual(1, hints.get('d'))
        self.assertEqual(1, hints.get('e'))

    def test_key_of_a_request(self):
        # Lists among the values (aggregates, trait ids) make a
        # hashable key; the same values in another order, the same key.
        first = ac._RootQuery(('shape',), {'rc_0': 1, 'room_aggs_0': [3, 4],
                                           'amount_0': 2})
        second = ac._RootQuery(('shape',), {'amount_0': 2, 'rc_0': 1,
                                            'room_aggs_0': [3, 4]})
        other = ac._RootQuery(('shape',), {'rc_0': 1, 'room_aggs_0': [3],
                                           'amount_0': 2})
        self.assertEqual(first.key, second.key)
        self.assertEqual({first.key: 1}, {second.key: 1})
        self.assertNotEqual(first.key, other.key)
