"""The ``oslo`` RPC transport: oslo.messaging, for example over RabbitMQ.

Conductors listen on the topic ``alloc_framework.conductor`` with their
host name as server; the client addresses one conductor at a time. The
broker is ``[DEFAULT]transport_url`` (e.g.
``rabbit://guest:guest@127.0.0.1:5672/``). Exceptions of
``alloc_framework.common.exception`` raised by a conductor are
raised again in the caller, with their HTTP code.

A conductor that died does not answer, and the broker does not tell: its
calls would wait for ``[DEFAULT]rpc_response_timeout`` (60 s). Calls are
therefore monitored (oslo.messaging's ``call_monitor_timeout``): the
conductor sends a heartbeat every ``[DEFAULT]rpc_failover_timeout / 2``
seconds while it works on a call, and a call with neither an answer nor a
heartbeat for ``rpc_failover_timeout`` seconds raises
``ConductorNotAnswering``; ``rpc_response_timeout`` still bounds the
whole call. A conductor that is alive but slow keeps its calls, so no
work is sent twice because of a slow answer. What it costs: the server
starts a watchdog thread per call, small beside the round trip through
the broker (measured in ``doc/source/conductor.rst``).
"""

import threading

from oslo_log import log
import oslo_messaging as messaging

from alloc_framework.common import context as af_context
from alloc_framework.common import exception
from alloc_framework.conductor import rpcapi
from alloc_framework.objects.baremetal import base as obj_base

LOG = log.getLogger(__name__)

# The second module is the exceptions' home before they moved to
# common/ (now a deprecated alias): a conductor of the previous release
# names it during a rolling upgrade.
ALLOWED_EXMODS = [exception.__name__,
                  'alloc_framework.objects.baremetal.exception']
# Delivery attempts before a call fails instead of waiting for a broker
# that is down.
CALL_RETRY = 2


class ContextSerializer(messaging.Serializer):
    """Versioned objects plus the request context."""

    def __init__(self):
        self._base = obj_base.AllocObjectSerializer()

    def serialize_entity(self, context, entity):
        return self._base.serialize_entity(context, entity)

    def deserialize_entity(self, context, entity):
        return self._base.deserialize_entity(context, entity)

    def serialize_context(self, context):
        return context.to_dict()

    def deserialize_context(self, context):
        return af_context.RequestContext.from_dict(context)


class _Endpoint:
    """Exposes the manager's RPC methods to oslo.messaging."""

    target = messaging.Target(version=rpcapi.RPC_API_VERSION)

    METHODS = ('create_node', 'update_node', 'destroy_node',
               'change_node_power_state', 'do_provisioning_action',
               'continue_node_deploy', 'continue_node_clean',
               'continue_node_service',
               'add_node_traits', 'remove_node_traits',
               'set_boot_device', 'get_boot_device',
               'get_supported_boot_devices', 'validate_driver_interfaces',
               'get_driver_details', 'get_driver_properties',
               'create_allocation', 'retry_allocation',
               'create_allocation_group', 'destroy_allocation_group',
               'destroy_allocation', 'ping')

    def __init__(self, manager):
        self._manager = manager
        for name in self.METHODS:
            setattr(self, name, self._wrap(name))

    def _wrap(self, name):
        method = getattr(self._manager, name)

        # Domain errors are answers, not server failures: oslo.messaging
        # then sends them back without logging a traceback.
        @messaging.expected_exceptions(exception.AllocFrameworkException)
        def call(ctxt, **kwargs):
            return method(ctxt, **kwargs)
        call.__name__ = name
        return call


def _local_copy(exc):
    """The domain exception as if raised here.

    oslo.messaging rebuilds a remote exception as a subclass named
    ``<Class>_Remote`` whose message carries the conductor's traceback.
    The API derives stable error codes from class names and must not leak
    tracebacks: rebuild the original class with the original message.
    """
    cls = type(exc)
    if not cls.__name__.endswith('_Remote'):
        return exc
    original = cls.__bases__[0]
    return original(exc.message, **exc.kwargs)


def check_options(conf):
    """Refuse a failover timeout that would never fire.

    :raises: ValueError
    """
    if conf.rpc_failover_timeout >= conf.rpc_response_timeout:
        raise ValueError(
            '[DEFAULT]rpc_failover_timeout (%s) must be smaller than '
            '[DEFAULT]rpc_response_timeout (%s)'
            % (conf.rpc_failover_timeout, conf.rpc_response_timeout))


class OsloTransport(rpcapi.Transport):
    """RPC over oslo.messaging.

    :raises: ValueError when the options are inconsistent (see
        :func:`check_options`).
    """

    def __init__(self, conf):
        check_options(conf)
        super().__init__(conf)
        self.serializer = ContextSerializer()
        self._transport = None
        self._client = None
        self._servers = {}
        self._lock = threading.Lock()

    @property
    def transport(self):
        with self._lock:
            if self._transport is None:
                self._transport = messaging.get_rpc_transport(
                    self.conf, allowed_remote_exmods=ALLOWED_EXMODS)
            return self._transport

    @property
    def client(self):
        transport = self.transport
        with self._lock:
            if self._client is None:
                target = messaging.Target(topic=rpcapi.TOPIC,
                                          version=rpcapi.RPC_API_VERSION)
                self._client = messaging.get_rpc_client(
                    transport, target, serializer=self.serializer)
            return self._client

    def call(self, context, host, method, **kwargs):
        cctxt = self.client.prepare(
            server=host, retry=CALL_RETRY,
            call_monitor_timeout=self.conf.rpc_failover_timeout)
        return self._call(cctxt, context, host, method, kwargs)

    def ping(self, context, host):
        # The whole call, not only the silence, is bounded: a ping that
        # the conductor did not take in time expires at the broker.
        cctxt = self.client.prepare(
            server=host, retry=CALL_RETRY,
            timeout=self.conf.rpc_failover_timeout)
        return self._call(cctxt, context, host, 'ping', {})

    def _call(self, cctxt, context, host, method, kwargs):
        try:
            return cctxt.call(context, method, **kwargs)
        except exception.AllocFrameworkException as exc:
            raise _local_copy(exc) from None
        except messaging.MessagingTimeout as exc:
            LOG.warning('RPC %(method)s to conductor %(host)s got no '
                        'answer: %(exc)s', {'method': method, 'host': host,
                                            'exc': exc})
            raise exception.ConductorNotAnswering(host=host)
        except messaging.MessageDeliveryFailure as exc:
            # The broker, not the conductor: another conductor would not
            # do better.
            LOG.warning('RPC %(method)s to conductor %(host)s failed: '
                        '%(exc)s', {'method': method, 'host': host,
                                    'exc': exc})
            raise exception.TemporaryFailure(
                'Conductor %s did not answer, please retry.' % host)

    def start_server(self, manager):
        target = messaging.Target(topic=rpcapi.TOPIC, server=manager.host)
        server = messaging.get_rpc_server(
            self.transport, target, [_Endpoint(manager)],
            executor='threading', serializer=self.serializer)
        server.start()
        with self._lock:
            self._servers[manager.host] = server
        LOG.info('Conductor %s serving RPC on topic %s', manager.host,
                 rpcapi.TOPIC)

    def stop_server(self, manager):
        with self._lock:
            server = self._servers.pop(manager.host, None)
        if server is not None:
            server.stop()
            server.wait()

    def cleanup(self):
        """Close the broker connections (after stopping servers)."""
        with self._lock:
            transport, self._transport, self._client = (self._transport,
                                                        None, None)
        if transport is not None:
            transport.cleanup()
