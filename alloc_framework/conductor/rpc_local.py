"""The ``local`` RPC transport: conductors in the same process.

For the all-in-one ``alloc-server`` and for tests. Arguments and results
are copied as they would arrive over the wire (see :func:`copy_entity`),
so the conductor never shares mutable objects with the caller, and the
context is rebuilt, so the conductor's database transactions are its own.
"""

import functools
import threading

from oslo_log import log
from oslo_versionedobjects import base as ovo_base
from oslo_versionedobjects import fields as ovo_fields

from alloc_framework.common import context as af_context
from alloc_framework.common import exception
from alloc_framework.conductor import rpcapi

LOG = log.getLogger(__name__)

_MANAGERS = {}
_LOCK = threading.Lock()


@functools.lru_cache(maxsize=None)
def _fields(cls):
    """The fields of an object class as (storage attribute, is a datetime)."""
    return tuple((ovo_base._get_attrname(name),
                  isinstance(field, ovo_fields.DateTimeField))
                 for name, field in cls.fields.items())


def _copy_object(context, obj):
    cls = type(obj)
    new = cls(context)
    state = vars(obj)
    copied = vars(new)
    for attr, is_datetime in _fields(cls):
        if attr in state:
            value = state[attr]
            if is_datetime and value is not None:
                # The wire format has whole seconds.
                copied[attr] = value.replace(microsecond=0)
            else:
                copied[attr] = copy_entity(context, value)
    new.VERSION = obj.VERSION
    # No public call marks fields changed without setting (and coercing)
    # them again; obj_from_primitive() sets _changed_fields too. Reading
    # obj_what_changed() would cost more than the whole copy (it reads
    # every field), and copies of nested objects keep their own changes.
    new._changed_fields = set(obj._changed_fields)
    return new


def copy_entity(context, value):
    """``value`` as the other side of an RPC call receives it.

    What the serializer would carry, without encoding it: a versioned
    object becomes a new object of the same class and version with copies
    of the fields set (datetime fields in whole seconds, as the wire has
    them) and the same changed fields, bound to ``context`` (attributes
    that are not fields do not travel); lists, tuples, sets and dicts are
    copied, their items too. Other values (strings, numbers) are
    immutable and shared.

    Why not the serializer itself (``obj_to_primitive``, then
    ``obj_from_primitive``, as oslo.messaging does)? Encoding converts
    every field to a primitive and decoding coerces each one back,
    although the values were coerced when they were set. Copying skips
    both conversions, which every in-process call would pay otherwise
    (measured in ``doc/source/performance.rst``). The price: like
    ``obj_from_primitive`` itself, the copy fills the objects' storage
    directly.
    ``tests/unit/conductor/test_rpc_local.py`` checks that the result
    equals the serializer's round trip for every registered object class
    with every field set.
    """
    if isinstance(value, ovo_base.VersionedObject):
        return _copy_object(context, value)
    if isinstance(value, dict):
        return {k: copy_entity(context, v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return type(value)(copy_entity(context, v) for v in value)
    return value


class LocalTransport(rpcapi.Transport):
    """Direct calls into the ``ConductorManager`` of this process."""

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
        args = {k: copy_entity(ctx, v) for k, v in kwargs.items()}
        result = getattr(manager, method)(ctx, **args)
        return copy_entity(context, result)

    def start_server(self, manager):
        with _LOCK:
            _MANAGERS[manager.host] = manager

    def stop_server(self, manager):
        with _LOCK:
            if _MANAGERS.get(manager.host) is manager:
                del _MANAGERS[manager.host]
