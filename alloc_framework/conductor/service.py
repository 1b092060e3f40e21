"""The conductor as an oslo.service service.

``start()`` runs ``ConductorManager.init_host()`` (load plugins, register,
serve RPC, start the heartbeat and periodics) and ``stop()`` runs
``del_host()``; ``wait()`` returns once the service is stopped.

A command registers its conductors with ``register()`` in the launching
process, before the launcher starts the processes that serve: a host
name another live process holds stops the command there, once, instead
of in a serving process that the launcher would start again and again.
"""

import threading

from oslo_log import log
from oslo_service import service

from alloc_framework.conductor import manager as manager_mod
from alloc_framework.conductor import rpcapi
from alloc_framework.drivers.allocation import base as allocation_base
from alloc_framework.drivers import driver_factory

LOG = log.getLogger(__name__)


class ConductorService(service.ServiceBase):
    """Runs one :class:`ConductorManager` named ``host``."""

    def __init__(self, host, conf, manager=None, in_process_placement=None):
        self.host = host
        self.conf = conf
        self.manager = manager or manager_mod.ConductorManager(
            host, conf, in_process_placement=in_process_placement)
        self._stopped = threading.Event()

    def rename(self, host):
        """Serve as ``host`` instead (before ``start()`` only)."""
        self.host = host
        self.manager.host = host

    def check_config(self):
        """Load the plugins that ``start()`` loads, and drop them.

        The launcher starts services in child processes and starts a
        child again whenever it dies: called in the launching process,
        this stops the command on a configuration that can never start
        instead (an unknown hardware type, interface, allocation backend
        or RPC transport).

        :raises: DriverLoadError
        """
        driver_factory.DriverFactory(self.conf)
        allocation_base.load_backend(self.conf)
        rpcapi.load_transport(self.conf)

    def register(self, hosts=None):
        """Register conductors ``hosts`` (default: this one) for this service.

        The processes that then start as one of these hosts hold its
        registration. All or none: on an error the ones registered are
        released.

        :raises: ConductorAlreadyRegistered
        """
        try:
            for host in hosts or [self.host]:
                self.manager.register(host)
        except Exception:
            self.manager.release_registrations()
            raise

    def start_backend(self, hosts=None):
        """The allocation backend's start, in the launching process.

        Call it after :meth:`register`: the nodes of the registered
        ``hosts`` (default: this one) are synced, reshaping provider trees
        where needed, before any process serves; a failure releases the
        registrations and raises (the command stops with the message).
        What it loaded is dropped: the processes that serve load their
        own (nothing opened here is shared with them).

        :raises: ReshapeAtStartFailed
        """
        manager = self.manager
        try:
            manager.start_backend(hosts)
        except Exception:
            manager.release_registrations()
            raise
        finally:
            manager.allocation_backend = None
            manager.driver_factory = None

    def start(self):
        self._stopped.clear()
        self.manager.init_host()

    def stop(self, graceful=True):
        try:
            self.manager.del_host()
        finally:
            self._stopped.set()

    def wait(self):
        self._stopped.wait()

    def reset(self):
        pass


class ServiceGroup(service.ServiceBase):
    """Several services run as one, in one process.

    oslo.service's threading launcher runs each launched service in a
    process of its own; services that must share a process (the
    all-in-one server: APIs and a conductor reached in-process) are
    grouped here. They start in order and stop in reverse order.
    """

    def __init__(self, services):
        self.services = list(services)
        self._stopped = threading.Event()

    def start(self):
        self._stopped.clear()
        started = []
        try:
            for svc in self.services:
                svc.start()
                started.append(svc)
        except Exception:
            for svc in reversed(started):
                svc.stop()
            self._stopped.set()
            raise

    def stop(self, graceful=True):
        try:
            for svc in reversed(self.services):
                try:
                    svc.stop()
                except Exception:
                    LOG.exception('Error while stopping %s', svc)
        finally:
            self._stopped.set()

    def wait(self):
        self._stopped.wait()
        for svc in self.services:
            svc.wait()

    def reset(self):
        for svc in self.services:
            svc.reset()
