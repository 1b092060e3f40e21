"""The digest-keyed cache of firmware images on disk."""

import hashlib
import os
import time

from alloc_framework.drivers.modules import image_cache
from tests import base


def _sha(data):
    return hashlib.sha256(data).hexdigest()


class _Source:
    """Chunks of ``data``, counting how many times they were fetched."""

    def __init__(self, data, fail_after=None):
        self.data = data
        self.fail_after = fail_after
        self.fetches = 0

    def chunks(self):
        self.fetches += 1
        for start in range(0, len(self.data), 4):
            if self.fail_after is not None and start >= self.fail_after:
                raise IOError('the connection was reset')
            yield self.data[start:start + 4]


class TestImageCache(base.TestCase):

    def setUp(self):
        super().setUp()
        self.directory = os.path.join(self.state_path, 'images')
        self.cache = image_cache.ImageCache(self.directory, max_bytes=100)

    def _fetch(self, source, digest=None):
        """What an update does: the cache first, else download."""
        if digest is not None:
            cached = self.cache.get(digest)
            if cached is not None:
                return cached
        return self.cache.add(source.chunks(), expected=digest)

    def _files(self):
        return sorted(os.listdir(self.directory))

    def test_second_call_served_without_fetching(self):
        source = _Source(b'firmware image 1.0')
        first = self._fetch(source)
        self.assertEqual((_sha(source.data), len(source.data)),
                         (first.digest, first.size))
        second = self._fetch(source, digest=first.digest)
        self.assertEqual(1, source.fetches)
        self.assertEqual(b'image', second.read(9, 5))
        self.assertEqual(b'1.0', second.read(15, 100))
        self.assertEqual([first.digest], self._files())

    def test_evicts_least_recently_used_over_the_bound(self):
        old, used, new = (b'a' * 40, b'b' * 40, b'c' * 40)
        old_entry = self.cache.add([old])
        used_entry = self.cache.add([used])
        # Ages apart, then a read makes ``used`` the most recent.
        past = time.time() - 100
        os.utime(old_entry.path, (past, past))
        os.utime(used_entry.path, (past + 1, past + 1))
        self.assertIsNotNone(self.cache.get(used_entry.digest))
        new_entry = self.cache.add([new])
        self.assertEqual(sorted([used_entry.digest, new_entry.digest]),
                         self._files())
        self.assertIsNone(self.cache.get(old_entry.digest))

    def test_entry_in_use_kept_alone_over_the_bound(self):
        self.cache.add([b'small'])
        big = self.cache.add([b'x' * 150])
        self.assertEqual([big.digest], self._files())

    def test_failed_fetch_leaves_no_partial_file(self):
        source = _Source(b'0123456789abcdef', fail_after=8)
        self.assertRaises(IOError, self._fetch, source)
        self.assertEqual([], self._files())

    def test_digest_mismatch_stores_nothing(self):
        source = _Source(b'changed behind our back')
        exc = self.assertRaises(image_cache.DigestMismatch, self._fetch,
                                source, _sha(b'what the update saw'))
        self.assertEqual(_sha(source.data), exc.actual)
        self.assertEqual([], self._files())

    def test_partial_files_of_dead_writers_removed(self):
        os.makedirs(self.directory)
        stale = os.path.join(self.directory, 'dead.part')
        live = os.path.join(self.directory, 'live.part')
        for path in (stale, live):
            with open(path, 'wb') as f:
                f.write(b'half')
        past = time.time() - 7200
        os.utime(stale, (past, past))
        self.cache.add([b'image'])
        self.assertEqual(sorted([_sha(b'image'), 'live.part']),
                         self._files())

    def test_not_a_digest_refused(self):
        self.assertRaises(ValueError, self.cache.get, '../../etc/passwd')
