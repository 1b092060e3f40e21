"""Serve a WSGI application from an oslo.service service.

cheroot is a pure-Python, thread-pooled HTTP/1.1 server: no eventlet and no
monkey-patching, so it fits oslo.service's threading backend.

How a request is served, so that slow or idle clients do not delay others:

* A new or idle keep-alive connection waits in cheroot's selector and holds
  no thread until its client sends something.
* Then one of ``connection_threads`` threads reads the request line,
  headers and the whole body. All of it must arrive within
  ``read_deadline`` seconds, else the client gets 408 and the connection
  is closed: a client sending slowly holds a connection thread for that
  long at most, and there are many of those threads.
* Only a complete request enters the application, at most ``workers`` at
  a time (the interpreter runs one thread at a time: more would only add
  contention); its response is written to the client after it has left
  the application, so a client reading slowly holds no application slot.
  A response the application generates as it is sent (any iterable but
  a list or tuple: the allocation candidates of a large cloud) is the
  exception: it is written in its slot as it is generated, so that it is
  never held whole.
* A body larger than ``max_body_size`` is never read into memory: with a
  ``Content-Length`` over it, the application sees the headers and an
  empty body, and its size-limit middleware answers 413 in the API's
  own error format; a chunked body is cut off there with a plain 413.
  Either way the connection is closed.
* While the application runs, ``environ[CLIENT_CONNECTION]`` lets it
  watch the client's connection (``fileno()`` only: never read from or
  written to), so that work nobody waits for any more can be stopped
  (``common.deadline``). Other WSGI servers do not set it.
* Broken framing (``Content-Length`` with ``Transfer-Encoding``, a bad
  chunk, a body shorter than its length) is answered 400 here, before the
  application, and closes the connection; a client that went away is
  logged in one line, without a traceback.
"""

import io
import logging
import socket
import threading
import time

from cheroot import errors as cheroot_errors
from cheroot import makefile
from cheroot import server as cheroot_server
from cheroot import wsgi
from oslo_log import log
from oslo_service import service

LOG = log.getLogger(__name__)

# Larger request heads are refused (413/414): headers are read into memory.
MAX_REQUEST_HEADER_SIZE = 64 * 1024

# The WSGI environ key of the client's connection (a ClientConnection).
CLIENT_CONNECTION = 'alloc.client_connection'


class ClientConnection:
    """What the application may see of its client's socket: its number.

    Enough to wait for the client closing the connection (``poll``); the
    server alone reads and writes the socket.
    """

    def __init__(self, sock):
        self._fileno = sock.fileno()

    def fileno(self):
        return self._fileno


class ListenError(Exception):
    """The address to listen on is taken or invalid."""


def check_address(name, host, port, reuse_port=False):
    """Fail now if ``host``:``port`` cannot be listened on.

    The launcher serves from a child process that it restarts when it
    dies: a taken port would make it restart forever instead of stopping
    the command with a clear error.

    :raises: ListenError
    """
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        family, _type, _proto, _name, addr = infos[0]
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if reuse_port:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            sock.bind(addr)
    except OSError as exc:
        raise ListenError('%s cannot listen on %s:%s: %s'
                          % (name, host, port, exc.strerror or exc))


class _DeadlineSocketIO(socket.SocketIO):
    """A socket's raw reader that gives up at ``deadline`` (monotonic).

    Each read waits at most until the deadline (and at most the socket's
    own timeout); past it, reads raise ``TimeoutError``, which cheroot
    answers with 408 while it reads the request head.
    """

    deadline = None

    def readinto(self, buf):
        if self.deadline is None:
            return super().readinto(buf)
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError('timed out')
        sock = self._sock
        timeout = sock.gettimeout()
        sock.settimeout(remaining if timeout is None
                        else min(timeout, remaining))
        try:
            return super().readinto(buf)
        finally:
            sock.settimeout(timeout)


class _RequestReader(makefile.StreamReader):
    """cheroot's buffered socket reader over a :class:`_DeadlineSocketIO`."""

    def __init__(self, sock, mode='rb', bufsize=io.DEFAULT_BUFFER_SIZE):
        makefile.io.BufferedReader.__init__(
            self, _DeadlineSocketIO(sock, mode), bufsize)
        self.bytes_read = 0


def _makefile(sock, mode='r', bufsize=io.DEFAULT_BUFFER_SIZE):
    if 'r' in mode:
        return _RequestReader(sock, mode, bufsize)
    return makefile.StreamWriter(sock, mode, bufsize)


class _Connection(cheroot_server.HTTPConnection):
    """A connection whose every request must arrive within the deadline."""

    def __init__(self, server, sock, makefile=None):
        super().__init__(server, sock, makefile=_makefile)

    def communicate(self):
        self.rfile.raw.deadline = time.monotonic() + self.server.read_deadline
        try:
            return super().communicate()
        finally:
            self.rfile.raw.deadline = None


class _Gateway(wsgi.Gateway_10):
    """Read the whole request, then run the application in a free slot."""

    def respond(self):
        failure = self._read_body()
        if failure is not None:
            self._refuse(*failure)
            return
        req = self.req
        self.env[CLIENT_CONNECTION] = ClientConnection(req.conn.socket)
        with req.server.app_slots:
            response = req.server.wsgi_app(self.env, self.start_response)
            if not isinstance(response, (list, tuple)):
                # Generated as it is sent (a large answer the application
                # never holds whole): written while it is generated.
                try:
                    self._write_all(response)
                finally:
                    if hasattr(response, 'close'):
                        response.close()
                return
            try:
                # The application's response is in memory already; write
                # it once the slot is free.
                chunks = list(response)
            finally:
                if hasattr(response, 'close'):
                    response.close()
        self._write_all(chunks)

    def _write_all(self, chunks):
        try:
            for chunk in filter(None, chunks):
                if not isinstance(chunk, bytes):
                    raise ValueError('WSGI Applications must yield bytes')
                self.write(chunk)
        finally:
            self.req.ensure_headers_sent()

    def _client(self):
        return '%s %s from %s' % (self.env.get('REQUEST_METHOD'),
                                  self.env.get('PATH_INFO'),
                                  self.env.get('REMOTE_ADDR'))

    def _read_body(self):
        """Read the body into ``wsgi.input``.

        :returns: None, or ``(status, message)`` of the error that ends
            the request (``status`` None when the client went away).
        """
        req = self.req
        length = req.inheaders.get(b'Content-Length')
        if req.chunked_read and length is not None:
            # Which one frames the body? A proxy in front may have chosen
            # the other: refuse rather than guess (request smuggling).
            return ('400 Bad Request', 'A request may not have both '
                    'Content-Length and Transfer-Encoding.')
        if length is not None and not length.isdigit():
            return '400 Bad Request', 'Malformed Content-Length header.'
        limit = req.server.max_body_size
        if limit and length is not None and int(length) > limit:
            # The application refuses it from its headers (oslo.middleware's
            # size limit, in front of both APIs): never read the body, and
            # close the connection, whose rest is unread.
            req.close_connection = True
            self.env['wsgi.input'] = io.BytesIO(b'')
            return None
        if req.chunked_read:
            req.rfile.maxlen = limit
        try:
            body = req.rfile.read()
            if not req.chunked_read and len(body) < int(length or 0):
                LOG.info('%s: the client went away while sending the '
                         'body', self._client())
                return None, None
        except TimeoutError:
            LOG.info('%s: the request did not arrive within %g seconds',
                     self._client(), req.server.read_deadline)
            return ('408 Request Timeout', 'The request did not arrive '
                    'within %g seconds.' % req.server.read_deadline)
        except ValueError as exc:
            # cheroot's chunked reader: a bad chunk size or terminator.
            return '400 Bad Request', str(exc)
        except (cheroot_errors.MaxSizeExceeded, OSError) as exc:
            if 'Request Entity Too Large' in str(exc):
                return ('413 Request Entity Too Large', 'The request body '
                        'is too large.')
            LOG.info('%s: the client went away while sending the body: '
                     '%s', self._client(), exc)
            return None, None
        self.env['wsgi.input'] = io.BytesIO(body)
        if req.chunked_read:
            # The application sees an ordinary body of known length.
            self.env.pop('HTTP_TRANSFER_ENCODING', None)
            self.env['CONTENT_LENGTH'] = str(len(body))
        return None

    def _refuse(self, status, message):
        """Answer ``status`` (unless the client went away) and close."""
        self.req.close_connection = True
        if status is None:
            # Nothing more to send on this connection.
            self.req.ready = False
            return
        body = message.encode('utf-8')
        self.start_response(status, [
            ('Content-Type', 'text/plain; charset=utf-8'),
            ('Content-Length', str(len(body)))])
        try:
            self.write(body)
            self.req.ensure_headers_sent()
        except OSError as exc:
            self.req.ready = False
            LOG.info('%s: the client went away before the %s answer: %s',
                     self._client(), status[:3], exc)


class _Server(wsgi.Server):
    """cheroot's WSGI server with the serving model of this module."""

    ConnectionClass = _Connection

    def __init__(self, *args, app_slots, read_deadline, max_body_size,
                 **kwargs):
        super().__init__(*args, **kwargs)
        # Not cheroot's max_request_body_size: that answers a plain-text
        # 413 before the application could give its own error body.
        self.max_body_size = max_body_size
        self.gateway = _Gateway
        self.app_slots = threading.BoundedSemaphore(app_slots)
        self.read_deadline = read_deadline
        self.max_request_header_size = MAX_REQUEST_HEADER_SIZE

    def error_log(self, msg='', level=logging.INFO, traceback=False):
        # cheroot writes its own errors to stderr: send them to the log.
        LOG.log(level, '%s: %s', self.server_name, msg, exc_info=traceback)

    def process_conn(self, conn):
        if not getattr(conn, 'spoke', False):
            # Just accepted: wait in the selector, holding no thread, for
            # the client's first bytes (cheroot closes it after
            # ``timeout`` seconds of silence).
            conn.spoke = True
            self.put_conn(conn)
            return
        super().process_conn(conn)


class WSGIService(service.ServiceBase):
    """Runs ``app`` on ``host``:``port``, ``workers`` requests at a time.

    ``connection_threads`` threads (at least ``workers``) read requests
    and write responses; each request must arrive within
    ``read_deadline`` seconds, and bodies over ``max_body_size`` bytes
    (0: no limit) are not read (see the module's docstring).

    With ``reuse_port`` several processes listen on the same port
    (SO_REUSEPORT) and the kernel spreads new connections over them.

    :raises: ListenError when the address cannot be listened on.
    """

    def __init__(self, name, app, host, port, workers=8, reuse_port=False,
                 connection_threads=64, read_deadline=30, max_body_size=0,
                 announce=()):
        check_address(name, host, port, reuse_port=reuse_port)
        self.name = name
        # ``(label, path)`` of pages for people, logged with their URL
        # once listening (the dashboard).
        self.announce = tuple(announce)
        # cheroot's default listen backlog (5) resets bursts of clients.
        self.server = _Server((host, port), app,
                              numthreads=max(workers, connection_threads),
                              server_name=name, request_queue_size=1024,
                              reuse_port=reuse_port, app_slots=workers,
                              read_deadline=read_deadline,
                              max_body_size=max_body_size)
        # Keep-alive connections must not hold a worker thread forever.
        self.server.timeout = 30
        # cheroot closes a connection after its response once 10 idle
        # keep-alive connections are open, and counts them under a lock
        # at every response. Idle connections hold no worker thread (they
        # wait in cheroot's selector) and the timeout above closes them:
        # keep every client's connection, as a proxy in front would.
        self.server.keep_alive_conn_limit = None
        self._thread = None

    @classmethod
    def from_conf(cls, name, app, conf, group, reuse_port=False,
                  announce=()):
        """The service of an API configured by ``conf.<group>``.

        ``group`` is ``api`` or ``placement_api``: their ``host_ip``,
        ``port``, ``api_workers``, ``connection_threads`` and
        ``request_read_deadline``; bodies are limited by
        ``[oslo_middleware]max_request_body_size``, as in the APIs.

        :param announce: ``(label, path)`` pairs logged with their URL
            when the service listens.
        """
        opts = conf[group]
        return cls(name, app, opts.host_ip, opts.port,
                   workers=opts.api_workers, reuse_port=reuse_port,
                   connection_threads=opts.connection_threads,
                   read_deadline=opts.request_read_deadline,
                   max_body_size=(
                       conf.oslo_middleware.max_request_body_size),
                   announce=announce)

    @property
    def bound_port(self):
        """The port actually listened on (useful with port 0 in tests)."""
        return self.server.bind_addr[1]

    def start(self):
        self.server.prepare()
        LOG.info('%s listening on http://%s:%s', self.name,
                 self.server.bind_addr[0], self.server.bind_addr[1])
        for label, path in self.announce:
            LOG.info('%s: http://%s:%s%s', label, self.server.bind_addr[0],
                     self.server.bind_addr[1], path)
        self._thread = threading.Thread(target=self.server.serve,
                                        name=self.name, daemon=True)
        self._thread.start()

    def stop(self):
        self.server.stop()

    def wait(self):
        if self._thread is not None:
            self._thread.join()

    def reset(self):
        pass
