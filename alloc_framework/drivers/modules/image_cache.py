"""A cache of firmware images on the conductor's disk, keyed by digest.

A firmware update that sends its image in many calls (a deferred action
rescheduled between them) downloads the image once, in its first call,
and reads it from here afterwards. Entries are files named after the
SHA-256 of their content, in one directory:

* an image is written to a ``.part`` file while its digest is computed,
  then renamed to its digest, so a file under a digest's name is always
  complete and matches it (the check happens once, when it is stored);
  a download that fails or does not match the digest expected is
  removed at once;
* the cache holds at most ``max_bytes``: storing an entry evicts the
  least recently used others (each read refreshes an entry's time) until
  it fits; the entry just stored is kept even alone over the bound, since
  the update that stored it needs it. ``.part`` files older than
  ``partial_age`` seconds (left by a process that died while writing)
  are removed then too.

Several threads and processes may share a directory: renames are atomic,
and an entry evicted under a reader is only a miss for it. The cache
keeps no state in memory.
"""

import errno
import hashlib
import os
import re
import tempfile
import time

_DIGEST = re.compile(r'^[0-9a-f]{64}$')
PARTIAL_SUFFIX = '.part'


class DigestMismatch(Exception):
    """The content stored does not have the digest expected."""

    def __init__(self, expected, actual):
        super().__init__('expected SHA-256 %s, got %s' % (expected, actual))
        self.expected = expected
        self.actual = actual


class CachedImage:
    """One entry: ``digest``, ``size``, and :meth:`read` of a slice."""

    def __init__(self, path, digest, size):
        self.path = path
        self.digest = digest
        self.size = size

    def read(self, offset, length):
        """``length`` bytes from ``offset`` (fewer at the end).

        :raises: OSError when the entry was evicted meanwhile.
        """
        with open(self.path, 'rb') as f:
            f.seek(offset)
            return f.read(length)


class ImageCache:
    """The cache in ``directory``, bounded to ``max_bytes``.

    :param partial_age: seconds after which a ``.part`` file is taken to
        be left by a dead writer and removed.
    """

    def __init__(self, directory, max_bytes, partial_age=3600):
        self.directory = directory
        self.max_bytes = max_bytes
        self.partial_age = partial_age

    def _path(self, digest):
        if not _DIGEST.match(digest or ''):
            raise ValueError('not a SHA-256 hex digest: %r' % (digest,))
        return os.path.join(self.directory, digest)

    def get(self, digest):
        """The entry of ``digest``, or None; a hit refreshes its time."""
        path = self._path(digest)
        try:
            os.utime(path)
            size = os.stat(path).st_size
        except FileNotFoundError:
            return None
        return CachedImage(path, digest, size)

    def add(self, chunks, expected=None):
        """Store the bytes ``chunks`` yields; returns the new entry.

        :param chunks: an iterable of bytes; whatever it raises is raised
            again, with nothing left on disk.
        :param expected: the SHA-256 the content must have, or None.
        :raises: DigestMismatch (nothing is stored then).
        """
        os.makedirs(self.directory, exist_ok=True)
        fd, partial = tempfile.mkstemp(dir=self.directory,
                                       suffix=PARTIAL_SUFFIX)
        try:
            digest = hashlib.sha256()
            size = 0
            with os.fdopen(fd, 'wb') as f:
                for chunk in chunks:
                    f.write(chunk)
                    digest.update(chunk)
                    size += len(chunk)
            digest = digest.hexdigest()
            if expected is not None and digest != expected:
                raise DigestMismatch(expected, digest)
            path = self._path(digest)
            os.replace(partial, path)
        except BaseException:
            _remove(partial)
            raise
        self.evict(keep=digest)
        return CachedImage(path, digest, size)

    def evict(self, keep=None):
        """Remove the least recently used entries beyond the bound, and
        ``.part`` files of dead writers; returns how many files went.

        :param keep: a digest never evicted (the entry in use).
        """
        now = time.time()
        entries = []
        removed = 0
        try:
            listing = list(os.scandir(self.directory))
        except FileNotFoundError:
            return 0
        for entry in listing:
            try:
                stat = entry.stat()
            except FileNotFoundError:
                continue
            if entry.name.endswith(PARTIAL_SUFFIX):
                if now - stat.st_mtime > self.partial_age:
                    removed += _remove(entry.path)
            elif _DIGEST.match(entry.name):
                entries.append((stat.st_mtime, stat.st_size, entry))
        total = sum(size for _mtime, size, _entry in entries)
        for _mtime, size, entry in sorted(entries, key=lambda e: e[0]):
            if total <= self.max_bytes:
                break
            if entry.name == keep:
                continue
            removed += _remove(entry.path)
            total -= size
        return removed


def _remove(path):
    """Remove ``path``; 1 when it was removed, 0 when already gone."""
    try:
        os.remove(path)
        return 1
    except OSError as exc:
        if exc.errno != errno.ENOENT:
            raise
        return 0
