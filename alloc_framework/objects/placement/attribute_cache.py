"""Name <-> id caches of resource classes and traits.

Ids of resource classes and traits never change once assigned, so the
mapping can be cached per process; a miss re-reads the whole table (new
custom classes or traits appear that way). ``clear()`` empties the caches
(after a delete, and between tests that reset the database).
"""

import threading

import sqlalchemy as sa

from alloc_framework.db import api as db_api
from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects.placement import exception

_RC_TBL = models.ResourceClass.__table__
_TRAIT_TBL = models.Trait.__table__


class _Cache:
    """A two-way name/id map of one table, refreshed on a miss."""

    def __init__(self, table, not_found):
        self._table = table
        self._not_found = not_found
        self._lock = threading.Lock()
        self._by_name = {}
        self._by_id = {}

    def clear(self):
        with self._lock:
            self._by_name = {}
            self._by_id = {}

    @db_api.reader
    def _load(self, context):
        rows = context.session.execute(
            sa.select(self._table.c.id, self._table.c.name)).all()
        by_name = {r.name: r.id for r in rows}
        by_id = {r.id: r.name for r in rows}
        with self._lock:
            self._by_name = by_name
            self._by_id = by_id

    def id_from_name(self, context, name):
        try:
            return self._by_name[name]
        except KeyError:
            self._load(context)
        try:
            return self._by_name[name]
        except KeyError:
            raise self._not_found(name)

    def name_from_id(self, context, id_):
        try:
            return self._by_id[id_]
        except KeyError:
            self._load(context)
        try:
            return self._by_id[id_]
        except KeyError:
            raise self._not_found(str(id_))

    def all_names(self, context):
        self._load(context)
        return dict(self._by_name)


def _rc_not_found(name):
    return exception.ResourceClassNotFound(resource_class=name)


def _trait_not_found(name):
    return exception.TraitNotFound(names=name)


_RC_CACHE = _Cache(_RC_TBL, _rc_not_found)
_TRAIT_CACHE = _Cache(_TRAIT_TBL, _trait_not_found)


def rc_id(context, name):
    """The id of resource class ``name``.

    :raises exception.ResourceClassNotFound: no such class.
    """
    return _RC_CACHE.id_from_name(context, name)


def rc_name(context, id_):
    """The name of the resource class with id ``id_``."""
    return _RC_CACHE.name_from_id(context, id_)


def trait_id(context, name):
    """The id of trait ``name``.

    :raises exception.TraitNotFound: no such trait.
    """
    return _TRAIT_CACHE.id_from_name(context, name)


def trait_name(context, id_):
    """The name of the trait with id ``id_``."""
    return _TRAIT_CACHE.name_from_id(context, id_)


def clear():
    """Forget every cached mapping (they are re-read on the next miss)."""
    _RC_CACHE.clear()
    _TRAIT_CACHE.clear()
