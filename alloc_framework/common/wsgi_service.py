"""Serve a WSGI application from an oslo.service service.

cheroot is a pure-Python, thread-pooled HTTP/1.1 server: no eventlet and no
monkey-patching, so it fits oslo.service's threading backend.
"""

import socket
import threading

from cheroot import wsgi
from oslo_log import log
from oslo_service import service

LOG = log.getLogger(__name__)


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


class WSGIService(service.ServiceBase):
    """Runs ``app`` on ``host``:``port`` with ``workers`` threads.

    With ``reuse_port`` several processes listen on the same port
    (SO_REUSEPORT) and the kernel spreads new connections over them.

    :raises: ListenError when the address cannot be listened on.
    """

    def __init__(self, name, app, host, port, workers=8, reuse_port=False):
        check_address(name, host, port, reuse_port=reuse_port)
        self.name = name
        # cheroot's default listen backlog (5) resets bursts of clients.
        self.server = wsgi.Server((host, port), app, numthreads=workers,
                                  server_name=name, request_queue_size=1024,
                                  reuse_port=reuse_port)
        # Keep-alive connections must not hold a worker thread forever.
        self.server.timeout = 30
        # cheroot closes a connection after its response once 10 idle
        # keep-alive connections are open, and counts them under a lock
        # at every response. Idle connections hold no worker thread (they
        # wait in cheroot's selector) and the timeout above closes them:
        # keep every client's connection, as a proxy in front would.
        self.server.keep_alive_conn_limit = None
        self._thread = None

    @property
    def bound_port(self):
        """The port actually listened on (useful with port 0 in tests)."""
        return self.server.bind_addr[1]

    def start(self):
        self.server.prepare()
        LOG.info('%s listening on http://%s:%s', self.name,
                 self.server.bind_addr[0], self.server.bind_addr[1])
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
