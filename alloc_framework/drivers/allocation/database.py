"""The ``database`` allocation backend: nodes are picked from the database.

Free nodes are those ``available``, not in maintenance, with a known power
state, no ``instance_uuid`` and no lock, of the requested resource class,
among the candidate nodes when given, owned by or leased to the
allocation's owner when it has one, and having every requested trait. One
of them, chosen at random, is reserved in the same transaction that makes
the allocation ``active``; the cost does not depend on how many nodes
match (see :mod:`alloc_framework.objects.node_reservation`).
"""

from oslo_log import log

from alloc_framework.common import exception
from alloc_framework.drivers.allocation import base
from alloc_framework.objects import node_reservation

LOG = log.getLogger(__name__)


class DatabaseBackend(base.AllocationBackend):
    """Reserve a random free node straight in the database."""

    # The fake backend reuses everything but the random start.
    randomize = True

    # Attempts when free nodes exist but were all locked by concurrent
    # reservations (which may roll back); each is a new transaction.
    busy_attempts = 3

    def allocate(self, context, allocation):
        for _attempt in range(self.busy_attempts):
            node_uuid = node_reservation.reserve_node(
                context, allocation, randomize=self.randomize)
            if node_uuid is not None:
                LOG.debug('Node %(node)s reserved for allocation %(alloc)s',
                          {'node': node_uuid, 'alloc': allocation.uuid})
                return node_uuid
            # Only a failure pays for finding out which filter failed.
            error = node_reservation.explain_no_node(context, allocation)
            if not error.startswith(node_reservation.BUSY_ERROR):
                break
        raise exception.AllocationFailed(error=error)

    def backfill(self, context, allocation, node_id):
        return node_reservation.backfill(context, allocation, node_id)

    def deallocate(self, context, allocation):
        node_reservation.release_node(context, allocation)
