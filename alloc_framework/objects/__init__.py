"""Versioned objects of the bare metal side.

Importing this package registers every object class, so that
``AllocObjectSerializer`` can rebuild them from RPC payloads. The
Allocation object is registered when its module is present.
"""

import importlib

from alloc_framework.objects import conductor  # noqa: F401
from alloc_framework.objects import node  # noqa: F401
from alloc_framework.objects import node_history  # noqa: F401
from alloc_framework.objects import trait  # noqa: F401

Conductor = conductor.Conductor
Node = node.Node
NodeHistory = node_history.NodeHistory


def _optional(name):
    """Import ``alloc_framework.objects.<name>`` if the module exists.

    Only the absence of that very module is tolerated: an error inside it
    is a bug and must surface.
    """
    full = 'alloc_framework.objects.' + name
    try:
        return importlib.import_module(full)
    except ModuleNotFoundError as exc:
        if exc.name != full:
            raise
        return None


allocation = _optional('allocation')
if allocation is not None:
    Allocation = allocation.Allocation
