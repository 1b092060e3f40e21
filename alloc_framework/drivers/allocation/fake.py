"""The ``fake`` allocation backend, for tests and development.

It behaves as the ``database`` backend but deterministically: it always
reserves the matching free node with the lowest id, so tests can predict
which node an allocation gets. It keeps every invariant of the interface.
"""

from alloc_framework.drivers.allocation import database


class FakeBackend(database.DatabaseBackend):
    """Reserve the free node with the lowest id."""

    randomize = False
