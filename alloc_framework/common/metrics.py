"""Metrics emitters: gauges and timers, through a pluggable backend.

Emitters are entry points of the ``alloc_framework.metrics.emitters``
namespace, chosen by ``[metrics]backend`` and loaded once per service with
:func:`get_emitter` (through :mod:`alloc_framework.common.loader`, as
every plugin). ``noop`` (the default) sends nothing; ``statsd`` sends
the statsd line protocol over UDP (``<prefix>.<name>:<value>|g`` and
``|ms``), fire and forget: a missing daemon never slows the caller.
"""

import abc
import contextlib
import socket
import time

from oslo_log import log

from alloc_framework.common import loader

LOG = log.getLogger(__name__)

NAMESPACE = 'alloc_framework.metrics.emitters'


class MetricsEmitter(abc.ABC):
    """What an emitter implements.

    :param conf: the service's ``ConfigOpts`` (``[metrics]`` group).
    """

    def __init__(self, conf):
        self.prefix = conf.metrics.prefix

    def name(self, name):
        return '%s.%s' % (self.prefix, name) if self.prefix else name

    @abc.abstractmethod
    def send_gauge(self, name, value):
        """Send the current ``value`` of the gauge ``name``."""

    @abc.abstractmethod
    def send_timer(self, name, milliseconds):
        """Send one duration of ``name``."""

    @contextlib.contextmanager
    def timer(self, name):
        """Time the ``with`` block and send it as ``name``."""
        start = time.monotonic()
        try:
            yield
        finally:
            self.send_timer(name, (time.monotonic() - start) * 1000)


class NoopEmitter(MetricsEmitter):
    """Sends nothing."""

    def send_gauge(self, name, value):
        pass

    def send_timer(self, name, milliseconds):
        pass


class StatsdEmitter(MetricsEmitter):
    """Sends the statsd line protocol over UDP."""

    def __init__(self, conf):
        super().__init__(conf)
        self.address = (conf.metrics.statsd_host, conf.metrics.statsd_port)
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)

    def _send(self, line):
        try:
            self._socket.sendto(line.encode('utf-8'), self.address)
        except OSError as exc:
            LOG.debug('Could not send metric %(line)s to %(addr)s: %(exc)s',
                      {'line': line, 'addr': self.address, 'exc': exc})

    def send_gauge(self, name, value):
        self._send('%s:%s|g' % (self.name(name), value))

    def send_timer(self, name, milliseconds):
        self._send('%s:%d|ms' % (self.name(name), round(milliseconds)))


def get_emitter(conf):
    """The emitter ``[metrics]backend`` names, loaded.

    :raises: DriverLoadError when it cannot be loaded.
    """
    return loader.load_one(NAMESPACE, conf.metrics.backend, conf)
