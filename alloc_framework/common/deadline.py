"""A time limit for one request's work, and watching its client.

A :class:`Deadline` is made per request by the API (from an option such
as ``[placement] candidates_deadline``) and handed down to the code doing
the work, which asks :meth:`Deadline.check` between its phases. While a
database statement runs, :meth:`Deadline.watch` runs a watcher thread
that calls a cancel function once, when the deadline passes or when the
client closes its connection, whichever comes first (``db.deadline``
cancels the statement the way its database can).

The client's connection is watched when the server gives one
(``common.wsgi_service.CLIENT_CONNECTION``): an object with
``fileno()``. A closed connection is seen as the peer's end of stream
(``POLLRDHUP``), which Linux reports; elsewhere only the deadline stops
the work.

A leaf of ``common/``: it imports nothing of alloc_framework but
``common.exception``.
"""

import contextlib
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

        A watcher thread waits, without polling, for the deadline, for
        the client's end of stream and for the end of the block. The
        block does not end while ``cancel`` runs, and ``cancel`` is never
        called after it ended: what it interrupts is still the block's.
        """
        if not self.active:
            yield
            return
        lock = threading.Lock()
        state = {'done': False}
        wake_r, wake_w = os.pipe()

        def fire(reason):
            with lock:
                if state['done']:
                    return
                if self.reason is None:
                    self.reason = reason
                try:
                    cancel()
                except Exception:
                    LOG.exception('Could not interrupt the work of a '
                                  'request (%s)', reason)

        def wait():
            poller = select.poll()
            poller.register(wake_r, select.POLLIN)
            if self.client is not None:
                poller.register(self.client.fileno(), _CLIENT_EVENTS)
            remaining = self.remaining()
            timeout = None if remaining is None else remaining * 1000
            events = poller.poll(timeout)
            if any(fd == wake_r for fd, _ev in events):
                return
            if events:
                fire(CLIENT_GONE)
            else:
                fire(DEADLINE)

        watcher = threading.Thread(target=wait, name='deadline-watcher',
                                   daemon=True)
        watcher.start()
        try:
            yield
        finally:
            with lock:
                state['done'] = True
            os.write(wake_w, b'x')
            watcher.join()
            os.close(wake_r)
            os.close(wake_w)
