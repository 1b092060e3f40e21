"""Deprecated alias of :mod:`alloc_framework.common.states`.

The node states and the provision state machine moved to ``common/`` so
that the command-line client, which talks HTTP only, can name them
without loading the object model. This path is kept for one release for
plugins written against it; importing it emits a ``DeprecationWarning``.
"""

from alloc_framework.common import moved
from alloc_framework.common import states as _new

__getattr__, __dir__ = moved.alias(__name__, _new)
