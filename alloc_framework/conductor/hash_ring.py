"""Which conductor manages which node: a consistent hash ring per group.

Rings are built with ``tooz.hashring.HashRing`` over the live conductors
of each conductor group (a conductor is live while it is online and its
heartbeat is younger than ``[conductor]heartbeat_timeout``). They are
cached and rebuilt every ``[conductor]hash_ring_reset_interval`` seconds,
so a dead conductor's nodes move to the others within that time.

A node maps to the conductor of the first ring point above the MD5 of
its UUID; :meth:`HashRingManager.hash_ranges` turns that into MD5 ranges
a query can filter on, so a periodic reads only the rows of its own
nodes.
"""

import threading
import time

from oslo_log import log
from tooz import hashring

from alloc_framework.common import exception
from alloc_framework.objects import baremetal as objects

LOG = log.getLogger(__name__)

# Partitions per conductor; more gives a smoother spread of nodes.
PARTITIONS = 2 ** 5
# Ring points and node hashes are MD5 digests (tooz's default hash).
_HEX_DIGITS = 32


def _hex(point):
    return '%0*x' % (_HEX_DIGITS, point)


def owned_ranges(ring, host):
    """The MD5 ranges of the keys ``ring`` maps to ``host``.

    tooz maps a key to the owner of the first ring point strictly above
    the key's MD5 (wrapping round to the first point). ``host`` therefore
    owns ``[previous point, its point)`` for each of its points.

    Reads the ring's points (``_partitions``, ``_ring``): tooz has no
    public accessor. The unit tests check the ranges against
    ``get_nodes`` for many keys, so a change of tooz fails them.

    :returns: a list of ``(low, high)`` lowercase 32-digit hexadecimal
        bounds, ``low`` included and ``high`` excluded, None for no
        bound, adjacent ranges merged; ``[(None, None)]`` when ``host``
        owns every key, ``[]`` when it is not on the ring.
    """
    points = ring._partitions
    owners = [ring._ring[p] for p in points]
    if host not in owners:
        return []
    if all(owner == host for owner in owners):
        return [(None, None)]
    ranges = []
    for index, (point, owner) in enumerate(zip(points, owners)):
        if owner != host:
            continue
        low = None if index == 0 else _hex(points[index - 1])
        if ranges and ranges[-1][1] == low:
            ranges[-1] = (ranges[-1][0], _hex(point))
        else:
            ranges.append((low, _hex(point)))
    if owners[0] == host:
        # Keys above the last point wrap round to the first one.
        top = _hex(points[-1])
        if ranges[-1][1] == top:
            ranges[-1] = (ranges[-1][0], None)
        else:
            ranges.append((top, None))
    return ranges


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

    def hash_ranges(self, host):
        """Where ``host`` sits on the rings: ``{group: MD5 ranges}``.

        The ranges (see :func:`owned_ranges`) select the nodes of
        ``group`` the ring maps to ``host``: the same answer as
        :meth:`get_host_for_node`, for a query to filter on. Empty when
        ``host`` is not alive on any ring.
        """
        rings, _conductors = self._load()
        if not any(host in ring.nodes for ring in rings.values()):
            # The ring may be older than a conductor that just started.
            self.reset()
            rings, _conductors = self._load()
        # Node groups are looked up in lowercase (get_host_for_node).
        return {group: owned_ranges(ring, host)
                for group, ring in rings.items()
                if host in ring.nodes and group == group.lower()}

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
