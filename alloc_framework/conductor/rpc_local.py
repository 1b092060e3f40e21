"""The ``local`` RPC transport: conductors in the same process.

For the all-in-one ``alloc-server`` and for tests. Arguments and results
go through the same serializer as over the wire, so the conductor never
shares mutable objects with the caller, and the context is rebuilt, so
the conductor's database transactions are its own.
"""

import threading

from oslo_log import log

from alloc_framework.common import context as af_context
from alloc_framework.common import exception
from alloc_framework.conductor import rpcapi
from alloc_framework.objects import base as obj_base

LOG = log.getLogger(__name__)

_MANAGERS = {}
_LOCK = threading.Lock()


def registered_hosts():
    """Host names of the managers serving in this process."""
    with _LOCK:
        return sorted(_MANAGERS)


class LocalTransport(rpcapi.Transport):
    """Direct calls into the ``ConductorManager`` of this process."""

    def __init__(self, conf):
        super().__init__(conf)
        self.serializer = obj_base.AllocObjectSerializer()

    def _manager(self, host):
        with _LOCK:
            manager = _MANAGERS.get(host)
            if manager is None and _MANAGERS:
                # The ring may name a conductor of another process (a row
                # left by a previous run whose heartbeat has not expired):
                # in-process, every local conductor can do the work.
                manager = next(iter(_MANAGERS.values()))
                LOG.debug('Conductor %(host)s is not in this process; '
                          'using %(other)s', {'host': host,
                                              'other': manager.host})
        if manager is None:
            raise exception.TemporaryFailure(
                'No conductor is running in this process.')
        return manager

    def call(self, context, host, method, **kwargs):
        manager = self._manager(host)
        ctx = af_context.RequestContext.from_dict(context.to_dict())
        args = {k: self.serializer.deserialize_entity(
                    ctx, self.serializer.serialize_entity(ctx, v))
                for k, v in kwargs.items()}
        result = getattr(manager, method)(ctx, **args)
        return self.serializer.deserialize_entity(
            context, self.serializer.serialize_entity(ctx, result))

    def start_server(self, manager):
        with _LOCK:
            _MANAGERS[manager.host] = manager

    def stop_server(self, manager):
        with _LOCK:
            if _MANAGERS.get(manager.host) is manager:
                del _MANAGERS[manager.host]
