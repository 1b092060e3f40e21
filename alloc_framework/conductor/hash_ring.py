"""Which conductor manages which node: a consistent hash ring per group.

Rings are built with ``tooz.hashring.HashRing`` over the live conductors
of each conductor group (a conductor is live while it is online and its
heartbeat is younger than ``[conductor]heartbeat_timeout``). They are
cached and rebuilt every ``[conductor]hash_ring_reset_interval`` seconds,
so a dead conductor's nodes move to the others within that time.
"""

import threading
import time

from oslo_log import log
from tooz import hashring

from alloc_framework.objects.baremetal import exception
from alloc_framework.objects import baremetal as objects

LOG = log.getLogger(__name__)

# Partitions per conductor; more gives a smoother spread of nodes.
PARTITIONS = 2 ** 5


class HashRingManager:
    """Cached hash rings of the live conductors, one per conductor group.

    :param conf: the service's ``ConfigOpts``.
    :param context: a context to read the ``conductors`` table with.
    """

    def __init__(self, conf, context):
        self.conf = conf
        self.context = context
        self._lock = threading.Lock()
        self._rings = None
        self._conductors = None
        self._built_at = None

    def reset(self):
        """Forget the cached rings; the next lookup rebuilds them."""
        with self._lock:
            self._rings = None

    def _load(self):
        now = time.monotonic()
        with self._lock:
            fresh = (self._rings is not None and now - self._built_at
                     < self.conf.conductor.hash_ring_reset_interval)
            if fresh:
                return self._rings, self._conductors
            conductors = objects.Conductor.list_alive(
                self.context, self.conf.conductor.heartbeat_timeout)
            groups = {}
            for cond in conductors:
                groups.setdefault(cond.conductor_group or '', []).append(
                    cond.hostname)
            self._rings = {group: hashring.HashRing(hosts,
                                                    partitions=PARTITIONS)
                           for group, hosts in groups.items()}
            self._conductors = conductors
            self._built_at = now
            LOG.debug('Hash rings rebuilt: %s', groups)
            return self._rings, self._conductors

    def get_host_for_node(self, node_uuid, conductor_group=''):
        """The host name of the conductor managing a node.

        :raises: TemporaryFailure when no conductor of the node's group is
            alive.
        """
        rings, _conductors = self._load()
        group = (conductor_group or '').lower()
        ring = rings.get(group)
        if ring is None:
            # The ring may be older than a conductor that just started.
            self.reset()
            rings, _conductors = self._load()
            ring = rings.get(group)
        if ring is None:
            raise exception.TemporaryFailure(
                'No conductor is alive in conductor group "%s".' % group)
        return next(iter(ring.get_nodes(node_uuid.encode('utf-8'))))

    def get_hosts(self, driver=None, conductor_group=None):
        """Host names of the live conductors (with ``driver``, in a group).

        :raises: TemporaryFailure when none matches.
        """
        for attempt in (1, 2):
            _rings, conductors = self._load()
            candidates = [
                c.hostname for c in conductors
                if (driver is None or driver in (c.drivers or []))
                and (conductor_group is None
                     or (c.conductor_group or '') == conductor_group.lower())]
            if candidates:
                return candidates
            self.reset()
        if driver is not None:
            raise exception.TemporaryFailure(
                'No live conductor supports the hardware type "%s"%s.'
                % (driver, '' if conductor_group is None
                   else ' in conductor group "%s"' % conductor_group))
        raise exception.TemporaryFailure('No conductor is alive.')
