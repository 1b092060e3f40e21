"""Capacity at a glance: fleet-wide counts and sums, aggregated in SQL.

The read queries behind the operators' views of the whole service (the
Prometheus ``/metrics`` endpoints and the dashboard's overview). Each
function takes a request context and runs a constant number of
statements whatever the number of providers, nodes or allocations: the
database groups and sums, and answers one row per resource class or per
state, never one per provider. Nothing here writes or takes a lock,
on SQLite either (``db_api.snapshot_reader``).

Both halves of the service live in the one database of ``[database]``,
which every API process reaches (``alloc-server``, ``alloc-api`` and
``alloc-placement-api`` alike), so any of them may call any function
here. The Placement figures describe the Placement service of this
database; when the ``placement`` node allocation backend talks to
another Placement over HTTP, that one's figures are not here.

- :func:`placement_capacity`: per resource class, total, reserved,
  used and capacity, with Placement's formula ``(total - reserved) *
  allocation_ratio`` per inventory (:func:`candidate_predicates.capacity`).
- :func:`over_capacity_count`: how many providers use more than their
  capacity of some class (the rule of
  :func:`usage.over_capacity_providers`).
- :func:`nodes_by_state`, :func:`allocations_by_state`,
  :func:`deferred_actions_by_state`: the bare metal side, counted.
- :func:`placement_summary`, :func:`baremetal_summary`: those of each
  side read together, in one transaction.
"""

import collections

import sqlalchemy as sa
from sqlalchemy.ext import compiler
from sqlalchemy.sql import functions

from alloc_framework.db import api as db_api
from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects.baremetal import deferred_action
from alloc_framework.objects.placement import attribute_cache
from alloc_framework.objects.placement import candidate_predicates as preds
from alloc_framework.objects.placement import exception
from alloc_framework.objects.placement import usage

_ALLOC_TBL = models.Allocation.__table__
_INV_TBL = models.Inventory.__table__
_NODE_TBL = models.Node.__table__
_NODE_ALLOC_TBL = models.NodeAllocation.__table__


class _whole(functions.FunctionElement):
    """The whole part of a non-negative number, as Python's ``int()``.

    ``floor()`` on PostgreSQL and MariaDB; on SQLite, whose ``floor()``
    exists only when it was built with its math functions, a cast to
    INTEGER, which truncates (PostgreSQL's and MariaDB's casts round).
    """

    type = sa.BigInteger()
    inherit_cache = True


@compiler.compiles(_whole)
def _whole_default(element, compiler_, **kw):
    return 'floor(%s)' % compiler_.process(element.clauses, **kw)


@compiler.compiles(_whole, 'sqlite')
def _whole_sqlite(element, compiler_, **kw):
    return 'CAST(%s AS INTEGER)' % compiler_.process(element.clauses, **kw)


ClassCapacity = collections.namedtuple(
    'ClassCapacity',
    ('resource_class', 'total', 'reserved', 'used', 'capacity'))
ClassCapacity.__doc__ = """The figures of one resource class, all providers
summed. ``capacity`` sums each inventory's ``int((total - reserved) *
allocation_ratio)``; ``free`` is ``capacity - used`` (negative when
providers are over capacity)."""
ClassCapacity.free = property(lambda self: self.capacity - self.used)


def _named(context, rows, whole=False):
    """``(class name, row)`` (or ``(name, second column)``) of each row
    whose first column is a known resource class id."""
    for row in rows:
        try:
            name = attribute_cache.rc_name(context, row[0])
        except exception.ResourceClassNotFound:
            continue
        yield name, (row if whole else row[1])


@db_api.snapshot_reader
def placement_capacity(context):
    """Every resource class that has inventory or usage, summed.

    Two statements: the inventories grouped by class, the allocations
    grouped by class (and a reload of the application's cache of class
    names when a class was created since it was read). A class with
    allocations but no inventory (only damaged data has them) is listed
    with a total and capacity of 0; a class with neither is not listed.

    :returns: list of :class:`ClassCapacity`, ordered by class name.
    """
    # Grouped by class id, named from the application's cache of
    # classes: a join to resource_classes would be evaluated for every
    # inventory row (at 100,000 providers it took about 40% of the
    # statement on PostgreSQL). A row of an id that names no class is
    # left out, as that join left it out.
    #
    # The whole part of each inventory's capacity (reserved never
    # exceeds total), summed: as fits() and capacity() count it, not
    # int() of the sum.
    inventories = context.session.execute(
        sa.select(_INV_TBL.c.resource_class_id,
                  sa.func.sum(_INV_TBL.c.total).label('total'),
                  sa.func.sum(_INV_TBL.c.reserved).label('reserved'),
                  sa.func.sum(_whole(preds.capacity_of(_INV_TBL)))
                  .label('capacity'))
        .group_by(_INV_TBL.c.resource_class_id)).all()
    used = context.session.execute(
        sa.select(_ALLOC_TBL.c.resource_class_id,
                  sa.func.sum(_ALLOC_TBL.c.used))
        .group_by(_ALLOC_TBL.c.resource_class_id)).all()
    used = dict(_named(context, used))
    result = {name: ClassCapacity(
        name, int(row.total), int(row.reserved),
        int(used.pop(name, 0) or 0), int(row.capacity))
        for name, row in _named(context, inventories, whole=True)}
    for name, amount in used.items():
        result[name] = ClassCapacity(name, 0, 0, int(amount or 0), 0)
    return [result[name] for name in sorted(result)]


@db_api.snapshot_reader
def over_capacity_count(context):
    """How many providers are over capacity in at least one class (one
    statement; :func:`usage.count_over_capacity_providers`)."""
    return usage.count_over_capacity_providers(context)


@db_api.snapshot_reader
def nodes_by_state(context):
    """``{(provision_state, resource_class): count}`` of every node.

    One statement. A node without a resource class counts under
    ``None``.
    """
    rows = context.session.execute(
        sa.select(_NODE_TBL.c.provision_state, _NODE_TBL.c.resource_class,
                  sa.func.count())
        .group_by(_NODE_TBL.c.provision_state, _NODE_TBL.c.resource_class))
    return {(row[0], row[1]): int(row[2]) for row in rows}


@db_api.snapshot_reader
def allocations_by_state(context):
    """``{state: count}`` of the node allocations (one statement)."""
    return {state: int(count) for state, count in context.session.execute(
        sa.select(_NODE_ALLOC_TBL.c.state, sa.func.count())
        .group_by(_NODE_ALLOC_TBL.c.state))}


@db_api.snapshot_reader
def deferred_actions_by_state(context):
    """``{state: count}`` of the deferred actions not deleted (one
    statement; :meth:`DeferredAction.count_by_state`)."""
    return {state: int(count) for state, count in
            deferred_action.DeferredAction.count_by_state(context).items()}


@db_api.snapshot_reader
def placement_summary(context):
    """``(placement_capacity(), over_capacity_count())`` read in one
    transaction: three statements, no lock (a snapshot on SQLite)."""
    return placement_capacity(context), over_capacity_count(context)


@db_api.snapshot_reader
def baremetal_summary(context):
    """``(nodes_by_state(), allocations_by_state(),
    deferred_actions_by_state())`` read in one transaction: three
    statements, no lock (a snapshot on SQLite)."""
    return (nodes_by_state(context), allocations_by_state(context),
            deferred_actions_by_state(context))
