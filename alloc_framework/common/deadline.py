"""A time limit for one request's work, and watching its client.

A :class:`Deadline` is made per request by the API (from an option such
as ``[placement] candidates_deadline``) and handed down to the code doing
the work, which asks :meth:`Deadline.check` between its phases. While a
database statement runs, :meth:`Deadline.watch` has a cancel function
called once, when the deadline passes or when the client closes its
connection, whichever comes first (``db.deadline`` cancels the statement
the way its database can). One watcher thread per process watches every
block in progress: starting a thread for each request cost about as
much CPU as a small request's database work.

The client's connection is watched when the server gives one
(``common.wsgi_service.CLIENT_CONNECTION``): an object with
``fileno()``. A closed connection is seen as the peer's end of stream
(``POLLRDHUP``), which Linux reports; elsewhere only the deadline stops
the work.

A leaf of ``common/``: it imports nothing of alloc_framework but
``common.exception``.
"""

import contextlib
import math
import os
import select
import threading
import time

from oslo_log import log

from alloc_framework.common import exception

LOG = log.getLogger(__name__)

# The reasons a request's work was stopped.
DEADLINE = 'deadline'
CLIENT_GONE = 'client gone'

_CLIENT_EVENTS = getattr(select, 'POLLRDHUP', 0)


class Deadline:
    """The time limit of one request's work, and why it was stopped.

    :param seconds: the limit from now; 0 (or None) means none.
    :param option: how operators set the limit (``[group] name``), named
        in the error.
    :param client: the client's connection (``fileno()``) to watch, or
        None.
    """

    def __init__(self, seconds, option, client=None):
        self.seconds = seconds or 0
        self.option = option
        self.expires = (time.monotonic() + self.seconds if self.seconds
                        else None)
        self.client = client if _CLIENT_EVENTS else None
        #: None, DEADLINE or CLIENT_GONE once the work must stop.
        self.reason = None

    @property
    def active(self):
        """Whether there is anything to enforce or watch at all."""
        return self.expires is not None or self.client is not None

    def remaining(self):
        """Seconds left (at least 0), or None without a limit."""
        if self.expires is None:
            return None
        return max(0.0, self.expires - time.monotonic())

    def stopped(self):
        """Whether the work must stop (sets ``reason`` when it passed)."""
        if self.reason is None and self.remaining() == 0:
            self.reason = DEADLINE
        return self.reason is not None

    def error(self):
        """The exception that tells why the work stopped."""
        if self.reason == CLIENT_GONE:
            return exception.ClientGone()
        return exception.DeadlineExceeded(limit=self.seconds,
                                          option=self.option)

    def check(self):
        """Raise the error of :meth:`error` if the work must stop.

        :raises: DeadlineExceeded, ClientGone
        """
        if self.stopped():
            raise self.error()

    @contextlib.contextmanager
    def watch(self, cancel):
        """Call ``cancel()`` once if the work must stop during the block.

        The process's watcher thread waits, without polling, for the
        deadline and for the client's end of stream of every block in
        progress. The block does not end while ``cancel`` runs, and
        ``cancel`` is never called after it ended: what it interrupts is
        still the block's.
        """
        if not self.active:
            yield
            return
        watch = _Watch(self, cancel)
        _WATCHER.add(watch)
        try:
            yield
        finally:
            _WATCHER.remove(watch)
            with watch.lock:
                watch.done = True


class _Watch:
    """One block of :meth:`Deadline.watch` in progress."""

    __slots__ = ('deadline', 'cancel', 'lock', 'done', 'fd')

    def __init__(self, deadline, cancel):
        self.deadline = deadline
        self.cancel = cancel
        # Held while cancel runs and when the block ends.
        self.lock = threading.Lock()
        self.done = False
        self.fd = (deadline.client.fileno()
                   if deadline.client is not None else None)

    def fire(self, reason):
        """Call ``cancel`` unless the block has ended."""
        with self.lock:
            if self.done:
                return
            if self.deadline.reason is None:
                self.deadline.reason = reason
            try:
                self.cancel()
            except Exception:
                LOG.exception('Could not interrupt the work of a '
                              'request (%s)', reason)


class _Watcher:
    """The thread of a process that watches every block in progress.

    Started on the first block of each process (a forked worker starts
    its own). It sleeps in ``poll()`` on the clients' connections and a
    pipe that wakes it when a block starts, until the nearest deadline.
    A watch that fires leaves the set, and its ``cancel`` runs in a
    thread of its own (``KILL QUERY`` opens a connection), so that one
    slow cancel delays no other block's.
    """

    def __init__(self):
        self._wake_r = self._wake_w = None
        self._forget()

    def _forget(self):
        """Start afresh, with no thread yet.

        Also called in the child of every fork: the parent's thread is
        not there, a lock another of its threads held at the fork must
        not be inherited held, and the parent's pipe is closed.
        """
        for fd in (self._wake_r, self._wake_w):
            if fd is not None:
                os.close(fd)
        self._wake_r = self._wake_w = None
        self._lock = threading.Lock()
        self._watches = set()

    def add(self, watch):
        with self._lock:
            if self._wake_w is None:
                self._start()
            self._watches.add(watch)
            wake_w = self._wake_w
        try:
            os.write(wake_w, b'x')
        except BlockingIOError:
            # The pipe is full of wake-ups the thread has yet to read.
            pass

    def remove(self, watch):
        # The thread drops it at its next look; no need to wake it.
        with self._lock:
            self._watches.discard(watch)

    def _start(self):
        """Start this process's thread (called with the lock held)."""
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_r, False)
        os.set_blocking(wake_w, False)
        self._wake_r, self._wake_w = wake_r, wake_w
        threading.Thread(target=self._run, args=(wake_r,),
                         name='deadline-watcher', daemon=True).start()

    def _take(self, watch):
        """Remove ``watch`` if it is still watched; whether it was."""
        with self._lock:
            if watch not in self._watches:
                return False
            self._watches.discard(watch)
            return True

    def _fire(self, watch, reason):
        if self._take(watch):
            threading.Thread(target=watch.fire, args=(reason,),
                             name='deadline-cancel', daemon=True).start()

    def _run(self, wake_r):
        while True:
            with self._lock:
                watches = list(self._watches)
            poller = select.poll()
            poller.register(wake_r, select.POLLIN)
            by_fd = {}
            timeout = None
            now = time.monotonic()
            for watch in watches:
                if watch.fd is not None:
                    poller.register(watch.fd, _CLIENT_EVENTS)
                    by_fd.setdefault(watch.fd, []).append(watch)
                expires = watch.deadline.expires
                if expires is not None:
                    left = max(0.0, expires - now)
                    timeout = left if timeout is None else min(timeout,
                                                               left)
            events = poller.poll(None if timeout is None
                                 else math.ceil(timeout * 1000))
            for fd, _event in events:
                if fd == wake_r:
                    try:
                        while os.read(wake_r, 4096):
                            pass
                    except BlockingIOError:
                        pass
                    continue
                for watch in by_fd.get(fd, ()):
                    self._fire(watch, CLIENT_GONE)
            now = time.monotonic()
            for watch in watches:
                expires = watch.deadline.expires
                if expires is not None and expires <= now:
                    self._fire(watch, DEADLINE)


_WATCHER = _Watcher()
os.register_at_fork(after_in_child=_WATCHER._forget)
