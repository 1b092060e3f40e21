"""The ``driver_info`` of IPMI nodes and bounded conversations with BMCs.

``driver_info`` keys are those of upstream ironic's IPMI interfaces:
``ipmi_address`` (required), ``ipmi_port`` (623), ``ipmi_username``
(the null user when absent) and ``ipmi_password``.

Every exchange with a BMC is a *conversation* (:func:`converse`): log in
with pyghmi, run the caller's commands, log out. It runs on a small
thread pool of its own and the conductor thread waits for it at most
``[ipmi]command_deadline`` seconds, so a BMC that never answers costs a
bounded time and ends in an ``IPMIFailure`` naming the BMC; pyghmi's own
retry timers (about 5 s to give up a log in, about 30 s for a session
that stops answering) then end the abandoned pool thread.

Conversations with one BMC (address and port) are serialized in the
process; one that cannot start before its caller's deadline never
starts.

Why a session per conversation: pyghmi caches logged-in sessions per
BMC, user and password and keeps them alive from its IO thread. A cached
session outlives the node lock, so two conductor threads (a power sync
and a firmware update) could interleave commands on it, and a password
changed on the node would meet a session opened with the old one. One
short session per driver call (a log in costs four round trips) keeps a
BMC's session state inside the node lock. pyghmi itself does all socket
IO in one daemon thread and is safe to call from several threads, each
on its own session.

pyghmi's IO thread waits with ``select.select()``, which refuses file
descriptors above 1023: in a conductor holding many connections (database
pools, RPC, BMC sessions) a new pyghmi socket gets such a descriptor, the
IO thread dies, and every BMC stops answering. Its module is given
:class:`_PollSelect` instead, the same call on ``poll()``, which has no
such limit.

pyghmi guards its registries of sessions to keep alive and sessions
waiting for an answer with two locks, taken in both orders: sending
holds the first and takes the second, while a thread whose wait timed
out holds the second and takes the first to mark its session broken.
Two conversations with BMCs that are slow to answer can so deadlock
each other and every later conversation in the process (seen with
pyghmi 1.6.19). Both names are given one reentrant lock instead, which
no order of taking can deadlock.

The threads running conversations are daemon threads: a conversation
the caller gave up on never keeps the process from ending.
"""

import concurrent.futures
import queue
import select
import threading
import time

from oslo_log import log

from alloc_framework.common import exception

LOG = log.getLogger(__name__)

# IPMI 2.0 limits (RAKP user name field, password key).
MAX_USERNAME = 16
MAX_PASSWORD = 20

# Threads running BMC conversations in this process. A conversation
# waiting for a free thread still counts against its caller's deadline.
IO_THREADS = 16

PROPERTIES = {
    'ipmi_address': 'Required. IP address or host name of the node\'s '
                    'BMC.',
    'ipmi_port': 'Optional. UDP port of the BMC (RMCP+). Default 623.',
    'ipmi_username': 'Optional. User name on the BMC, at most %d bytes. '
                     'Default: the null user.' % MAX_USERNAME,
    'ipmi_password': 'Optional. Password of that user, at most %d bytes. '
                     'Default: empty. Masked in API responses.'
                     % MAX_PASSWORD,
}

# What pyghmi says when the BMC refuses the credentials.
_REFUSED = ('Incorrect password provided', 'Unauthorized name',
            'Unauthorized role or privilege level requested')

_executor = None
_executor_lock = threading.Lock()
# (address, port) -> the lock of conversations with that BMC.
_locks = {}
_locks_lock = threading.Lock()


class BMCInfo:
    """Where and how to reach a node's BMC (never printed with secrets)."""

    def __init__(self, address, port, username, password):
        self.address = address
        self.port = port
        self.username = username
        self.password = password

    def __str__(self):
        return '%s:%d' % (self.address, self.port)

    __repr__ = __str__


def _text(info, key, limit=None):
    value = info.get(key)
    if value is None:
        return ''
    if not isinstance(value, str):
        raise exception.InvalidParameterValue(
            err='driver_info %s must be a string.' % key)
    if limit is not None and len(value.encode('utf-8')) > limit:
        raise exception.InvalidParameterValue(
            err='driver_info %s is longer than the %d bytes IPMI allows.'
                % (key, limit))
    return value


def parse_driver_info(node):
    """The BMC of ``node`` from its ``driver_info``.

    :raises: MissingParameterValue when ``ipmi_address`` is missing.
    :raises: InvalidParameterValue naming the wrong key.
    """
    info = node.driver_info or {}
    address = info.get('ipmi_address')
    if not address:
        raise exception.MissingParameterValue(
            err='Node %s has no driver_info ipmi_address, the address of '
                'its BMC.' % node.uuid)
    if not isinstance(address, str) or any(c.isspace() for c in address):
        raise exception.InvalidParameterValue(
            err='driver_info ipmi_address must be a host name or an IP '
                'address, not %r.' % (address,))
    port = info.get('ipmi_port', 623)
    try:
        port = int(port)
    except (TypeError, ValueError):
        port = None
    if port is None or not 1 <= port <= 65535:
        raise exception.InvalidParameterValue(
            err='driver_info ipmi_port must be an integer from 1 to '
                '65535, not %r.' % (info.get('ipmi_port'),))
    return BMCInfo(address, port,
                   _text(info, 'ipmi_username', MAX_USERNAME),
                   _text(info, 'ipmi_password', MAX_PASSWORD))


class _DaemonPool:
    """A fixed number of daemon threads running submitted calls.

    ``concurrent.futures.ThreadPoolExecutor`` joins its threads when the
    interpreter exits, so one conversation stuck inside the IPMI library
    would keep a stopped conductor (or a test process) alive. These
    threads are daemons; their results still travel as futures.
    """

    def __init__(self, size, name):
        self._calls = queue.SimpleQueue()
        self._size = size
        self._name = name
        self._threads = []
        self._lock = threading.Lock()

    def _run(self):
        while True:
            future, fn, args = self._calls.get()
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn(*args))
            except BaseException as exc:
                future.set_exception(exc)
            # Drop the references before waiting for the next call.
            future = fn = args = None

    def submit(self, fn, *args):
        future = concurrent.futures.Future()
        with self._lock:
            if len(self._threads) < self._size:
                thread = threading.Thread(
                    target=self._run, daemon=True,
                    name='%s_%d' % (self._name, len(self._threads)))
                thread.start()
                self._threads.append(thread)
        self._calls.put((future, fn, args))
        return future


def _pool():
    global _executor
    with _executor_lock:
        if _executor is None:
            _executor = _DaemonPool(IO_THREADS, 'ipmi-bmc')
        return _executor


class _PollSelect:
    """``select.select`` for readable sockets on ``poll()``.

    Only what pyghmi's IO thread asks: sockets to read, a timeout in
    seconds (None: no limit).
    """

    error = select.error

    @staticmethod
    def select(rlist, wlist, xlist, timeout=None):
        poller = select.poll()
        by_fd = {}
        for sock in rlist:
            fd = sock if isinstance(sock, int) else sock.fileno()
            by_fd[fd] = sock
            poller.register(fd, select.POLLIN | select.POLLPRI)
        ms = None if timeout is None else max(0, int(timeout * 1000))
        ready = [by_fd[fd] for fd, _event in poller.poll(ms) if fd in by_fd]
        return ready, [], []


def _mend_pyghmi():
    """Give pyghmi's session module a poll() select and one lock, and
    a failed session its reason before anyone sees it failed."""
    from pyghmi.ipmi.private import session
    session.select = _PollSelect
    # Before the first session exists, so no thread holds either lock
    # yet; idempotent afterwards.
    session.WAITING_SESSIONS = session.KEEPALIVE_SESSIONS
    if not getattr(session.Session._mark_broken, '_reason_first', False):
        session.Session._mark_broken = _reason_first(
            session.Session._mark_broken)


def _reason_first(mark_broken):
    """``Session._mark_broken`` storing the error before anything else.

    pyghmi 1.6's IO thread marks a failed log in broken (in its log
    out) and ends the log in, then stores the reason; the thread
    waiting for the log in can look in between and find no reason
    (``no attribute 'errormsg'``), which happened twice in a row for a
    refused password on a loaded machine. With the reason stored first,
    the waiter always finds it.
    """
    def _mark_broken(self, error=None):
        self.errormsg = error
        return mark_broken(self, error)
    _mark_broken._reason_first = True
    return _mark_broken


def _open(bmc):
    # Imported here: pyghmi starts its IO thread on first use only, but
    # its import is slow and only IPMI conductors need it.
    from pyghmi import exceptions as pyghmi_exc
    from pyghmi.ipmi import command
    _mend_pyghmi()
    for attempt in (1, 2):
        try:
            # As bytes: pyghmi files a session being set up under the
            # credentials it was given and forgets it under their
            # encoded form; given text, a session that failed or logged
            # out stayed filed and the next one for the same BMC got it
            # back, broken.
            return command.Command(bmc=bmc.address,
                                   userid=bmc.username.encode('utf-8'),
                                   password=bmc.password.encode('utf-8'),
                                   port=bmc.port)
        except AttributeError as exc:
            # pyghmi 1.6 marks a failed log in broken from its IO thread
            # before it stores why; the caller may see the one without
            # the other ("no attribute 'errormsg'"). _mend_pyghmi stores
            # the reason first; should another path of the library do
            # the same, the BMC answered: log in again to learn why.
            if 'errormsg' not in str(exc):
                raise
            LOG.debug('Log in to BMC %s failed without a reason; attempt '
                      '%d', bmc, attempt)
    raise pyghmi_exc.IpmiException('the log in failed twice without a '
                                   'reason from the IPMI library')


class _Expired(Exception):
    """The caller stopped waiting before the conversation could start."""


def _lock_for(bmc):
    with _locks_lock:
        return _locks.setdefault((bmc.address, bmc.port), threading.Lock())


def _conversation(bmc, work, deadline_at):
    # One conversation per BMC at a time in this process: pyghmi hands
    # the same session to every caller with the same credentials, and
    # one caller's log out would cut another's commands short. A
    # conversation whose caller gave up waiting never starts, so a
    # command the caller reported as failed is never sent late.
    lock = _lock_for(bmc)
    if not lock.acquire(timeout=max(deadline_at - time.monotonic(), 0)):
        raise _Expired()
    try:
        if time.monotonic() >= deadline_at:
            raise _Expired()
        client = _open(bmc)
        try:
            return work(client)
        finally:
            try:
                client.ipmi_session.logout()
            except Exception:
                # The answer is what matters; a BMC that drops the log
                # out expires the session itself.
                LOG.debug('Log out from BMC %s failed', bmc, exc_info=True)
    finally:
        lock.release()


def _explain(bmc, exc):
    """An IPMIFailure for a pyghmi error, and whether to retry it."""
    message = str(exc.args[0]) if exc.args and exc.args[0] else ''
    if any(m in message for m in _REFUSED):
        return exception.IPMIFailure(
            bmc=bmc, error='the BMC refused the credentials of user %r: '
                           '%s' % (bmc.username, message)), False
    if not message or message in ('timeout', 'Session no longer connected'):
        return exception.IPMIFailure(
            bmc=bmc, error='no answer from the BMC (check ipmi_address, '
                           'ipmi_port, ipmi_username and that the BMC is '
                           'reachable)'), True
    return exception.IPMIFailure(bmc=bmc, error=message), False


def converse(conf, bmc, work, what, retry=True):
    """Run ``work(client)`` on a fresh session with ``bmc``, bounded.

    :param conf: the service's ``ConfigOpts`` ([ipmi] options).
    :param bmc: a :class:`BMCInfo`.
    :param work: a function of a ``pyghmi.ipmi.command.Command``.
    :param what: what the conversation does, for error messages.
    :param retry: whether a conversation the BMC did not answer may be
        tried again (``[ipmi]command_retries``); False for commands that
        must not run twice.
    :returns: what ``work`` returns.
    :raises: IPMIFailure, or what ``work`` raises.
    """
    from pyghmi import exceptions as pyghmi_exc

    deadline = conf.ipmi.command_deadline
    attempts = 1 + (conf.ipmi.command_retries if retry else 0)
    failure = None
    for attempt in range(attempts):
        deadline_at = time.monotonic() + deadline
        future = _pool().submit(_conversation, bmc, work, deadline_at)
        try:
            return future.result(timeout=deadline)
        except (concurrent.futures.TimeoutError, _Expired):
            future.cancel()
            failure = exception.IPMIFailure(
                bmc=bmc, error='no answer within %s seconds while %s'
                               % (deadline, what))
            failure.no_answer = True
        except pyghmi_exc.IpmiException as exc:
            failure, again = _explain(bmc, exc)
            failure.message = '%s (while %s)' % (failure.message, what)
            failure.args = (failure.message,)
            failure.no_answer = again
            if not again:
                raise failure
        except exception.AllocFrameworkException:
            raise
        except Exception as exc:
            # A fault of the IPMI library (or ours), not an answer of the
            # BMC: the traceback goes to the log, a clear error up.
            LOG.exception('Unexpected error talking to BMC %s', bmc)
            raise exception.IPMIFailure(
                bmc=bmc, error='unexpected error while %s: %s: %s'
                % (what, type(exc).__name__, exc))
        LOG.warning('IPMI attempt %(n)d of %(all)d failed: %(error)s',
                    {'n': attempt + 1, 'all': attempts, 'error': failure})
    raise failure


def check(bmc, response, what):
    """The data of a pyghmi ``raw_command`` response.

    :raises: IPMIFailure when the BMC answered with an error.
    :raises: pyghmi's IpmiException when it did not answer (so that
        :func:`converse` may retry).
    """
    if response.get('error') == 'timeout':
        from pyghmi import exceptions as pyghmi_exc
        raise pyghmi_exc.IpmiException('timeout')
    if 'error' in response:
        code = response.get('code') or 0xff
        raise exception.IPMIFailure(
            bmc=bmc, error='%s failed: %s (completion code 0x%02x)'
            % (what, response['error'], code))
    return bytes(response.get('data') or b'')
