"""The ``database`` allocation backend: nodes are picked from the database.

Free nodes are those ``available``, not in maintenance, with a known power
state and no ``instance_uuid`` (``node_reservation.FREE_NODE``); those
with no lock, of the requested resource class, among the candidate nodes
when given, owned by or leased to the allocation's owner when it has one,
and having every requested trait can serve an allocation. One
of them, chosen at random, is reserved in the same transaction that makes
the allocation ``active``; the cost does not depend on how many nodes
match (see :mod:`alloc_framework.objects.baremetal.node_reservation`).
"""


from oslo_log import log

from alloc_framework.common import exception
from alloc_framework.drivers.allocation import base
from alloc_framework.objects.baremetal import group_reservation
from alloc_framework.objects.baremetal import node_reservation

LOG = log.getLogger(__name__)


class DatabaseBackend(base.AllocationBackend):
    """Reserve a random free node straight in the database."""

    # The fake backend reuses everything but the random start.
    randomize = True

    # Attempts when free nodes exist but were all locked by concurrent
    # transactions; each is a new transaction. InnoDB also locks, for a
    # moment, the rows other reservations merely scan, and SKIP LOCKED
    # skips those too: a short random pause lets them finish. The pause
    # is a wait on the conductor's stop event, so a stopping conductor
    # tries again at once instead.
    busy_attempts = 6
    busy_pause = 0.01

    def allocate(self, context, allocation):
        for attempt in range(self.busy_attempts):
            # Only a failure pays for finding out which filter failed.
            node_uuid, error = node_reservation.reserve_node_or_explain(
                context, allocation, randomize=self.randomize)
            if node_uuid is not None:
                LOG.debug('Node %(node)s reserved for allocation %(alloc)s',
                          {'node': node_uuid, 'alloc': allocation.uuid})
                return node_uuid
            if not error.startswith(node_reservation.BUSY_ERROR):
                break
            if attempt < self.busy_attempts - 1:
                self.pause_busy(attempt)
        raise exception.AllocationFailed(error=error)

    def validate_group(self, context, group):
        """Groups are served (see :mod:`group_reservation`)."""

    def allocate_group(self, context, group):
        for attempt in range(self.busy_attempts):
            uuids, error = group_reservation.reserve_group(
                context, group, randomize=self.randomize)
            if uuids is not None:
                LOG.debug('Allocation group %(group)s reserved %(count)d '
                          'nodes', {'group': group.uuid, 'count': len(uuids)})
                return uuids
            if not error.startswith(node_reservation.BUSY_ERROR):
                break
            if attempt < self.busy_attempts - 1:
                self.pause_busy(attempt)
        raise exception.AllocationFailed(error=error)

    def release_group(self, context, group):
        group_reservation.release_group(context, group)

    def backfill(self, context, allocation, node_id):
        return node_reservation.backfill(context, allocation, node_id)

    def deallocate(self, context, allocation):
        node_reservation.release_node(context, allocation)
