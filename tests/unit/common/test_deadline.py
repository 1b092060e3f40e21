"""``common.deadline``: the time limit and the watcher thread."""

import os
import socket
import threading
import time

from alloc_framework.common import deadline as deadline_mod
from alloc_framework.common import exception
from tests import base

OPTION = '[placement] candidates_deadline'


class DeadlineTestCase(base.TestCase):
    dialect_neutral = True

    def test_no_limit(self):
        deadline = deadline_mod.Deadline(0, OPTION)
        self.assertFalse(deadline.active)
        self.assertIsNone(deadline.remaining())
        self.assertFalse(deadline.stopped())
        deadline.check()
        calls = []
        with deadline.watch(lambda: calls.append(1)):
            pass
        self.assertEqual([], calls)

    def test_check_after_the_limit(self):
        deadline = deadline_mod.Deadline(0.05, OPTION)
        deadline.check()
        time.sleep(0.06)
        exc = self.assertRaises(exception.DeadlineExceeded, deadline.check)
        self.assertEqual(503, exc.code)
        self.assertEqual('The request was stopped after 0.05 seconds, the '
                         'limit set by [placement] candidates_deadline.',
                         str(exc))
        self.assertEqual(deadline_mod.DEADLINE, deadline.reason)

    def test_watcher_cancels_once_at_the_limit(self):
        deadline = deadline_mod.Deadline(0.1, OPTION)
        cancelled = threading.Event()
        calls = []

        def cancel():
            calls.append(time.monotonic())
            cancelled.set()
        with deadline.watch(cancel):
            self.assertTrue(cancelled.wait(10))
        self.assertEqual(1, len(calls))
        self.assertEqual(deadline_mod.DEADLINE, deadline.reason)

    def test_no_cancel_after_the_block(self):
        deadline = deadline_mod.Deadline(0.1, OPTION)
        calls = []
        with deadline.watch(lambda: calls.append(1)):
            pass
        time.sleep(0.2)
        self.assertEqual([], calls)
        # The deadline itself still passed.
        self.assertRaises(exception.DeadlineExceeded, deadline.check)

    def test_client_gone(self):
        ours, theirs = socket.socketpair()
        self.addCleanup(ours.close)
        deadline = deadline_mod.Deadline(0, OPTION, client=ours)
        self.assertTrue(deadline.active)
        cancelled = threading.Event()
        with deadline.watch(cancelled.set):
            theirs.close()
            self.assertTrue(cancelled.wait(10))
        self.assertEqual(deadline_mod.CLIENT_GONE, deadline.reason)
        self.assertRaises(exception.ClientGone, deadline.check)

    def test_client_sending_more_is_not_gone(self):
        # A pipelined request is not the end of the connection.
        ours, theirs = socket.socketpair()
        self.addCleanup(ours.close)
        self.addCleanup(theirs.close)
        deadline = deadline_mod.Deadline(0.2, OPTION, client=ours)
        with deadline.watch(lambda: None):
            theirs.sendall(b'GET / HTTP/1.1\r\n\r\n')
            time.sleep(0.3)
        self.assertEqual(deadline_mod.DEADLINE, deadline.reason)

    def test_one_thread_watches_every_block(self):
        # Blocks with different limits, in threads of their own: each is
        # cancelled at its own limit, by the one watcher of the process.
        fired = {}
        started = threading.Barrier(4)

        def block(limit):
            deadline = deadline_mod.Deadline(limit, OPTION)
            done = threading.Event()

            def cancel():
                fired[limit] = time.monotonic() - begin
                done.set()
            with deadline.watch(cancel):
                started.wait(10)
                done.wait(10)
        begin = time.monotonic()
        threads = [threading.Thread(target=block, args=(limit,))
                   for limit in (0.05, 0.2, 0.4)]
        for thread in threads:
            thread.start()
        started.wait(10)
        watchers = [t for t in threading.enumerate()
                    if t.name == 'deadline-watcher']
        for thread in threads:
            thread.join(10)
        self.assertEqual(1, len(watchers))
        self.assertEqual([0.05, 0.2, 0.4], sorted(fired))
        for limit, after in fired.items():
            self.assertGreaterEqual(after, limit)

    def test_slow_cancel_delays_no_other_block(self):
        slow = deadline_mod.Deadline(0.05, OPTION)
        quick = deadline_mod.Deadline(0.1, OPTION)
        release = threading.Event()
        quick_cancelled = threading.Event()
        slow_started = threading.Event()

        def slow_cancel():
            slow_started.set()
            release.wait(10)

        def slow_block():
            with slow.watch(slow_cancel):
                release.wait(10)
        thread = threading.Thread(target=slow_block)
        thread.start()
        self.assertTrue(slow_started.wait(10))
        with quick.watch(quick_cancelled.set):
            # The slow cancel still runs: the quick one is not held up.
            self.assertTrue(quick_cancelled.wait(10))
        release.set()
        thread.join(10)
        self.assertEqual(deadline_mod.DEADLINE, quick.reason)

    def test_forked_child_watches_with_its_own_thread(self):
        # The parent's watcher is running; the child starts its own.
        with deadline_mod.Deadline(30, OPTION).watch(lambda: None):
            pass
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                cancelled = threading.Event()
                with deadline_mod.Deadline(0.05, OPTION).watch(
                        cancelled.set):
                    if cancelled.wait(10):
                        code = 0
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        self.assertEqual(0, os.waitstatus_to_exitcode(status))
        # The parent's watcher still serves the parent.
        cancelled = threading.Event()
        with deadline_mod.Deadline(0.05, OPTION).watch(cancelled.set):
            self.assertTrue(cancelled.wait(10))
