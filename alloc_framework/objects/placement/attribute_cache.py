"""Name <-> id caches of resource classes and traits.

Ids of resource classes and traits never change once assigned, so the
mappings are cached; a miss re-reads the whole table, which is how a
class or trait created elsewhere (another process, another application)
appears.

An ``AttributeCache`` belongs to one Placement application: the route
table's handler creates it and hands it to every request context as
``context.attribute_cache``. A context made outside an application (an
admin context of a tool or a test) gets a cache of its own on first
use, so nothing outlives the application or the context it serves.

A deleted class or trait may give its id to the next one created, so
``invalidate()`` after a delete or a rename makes every cache of the
process forget its mappings, whichever application owns it. Deletes in
other processes are not seen until a miss, as before.
"""

import threading

import sqlalchemy as sa

from alloc_framework.db import api as db_api
from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects.placement import exception

_RC_TBL = models.ResourceClass.__table__
_TRAIT_TBL = models.Trait.__table__

# Bumped by invalidate(): a cache loaded under an older generation
# forgets its mappings before its next lookup.
_GENERATION_LOCK = threading.Lock()
_generation = 0


class _Cache:
    """A two-way name/id map of one table, refreshed on a miss."""

    def __init__(self, table, not_found):
        self._table = table
        self._not_found = not_found
        self._lock = threading.Lock()
        self._by_name = {}
        self._by_id = {}
        self._generation = _generation

    def clear(self):
        with self._lock:
            self._by_name = {}
            self._by_id = {}
            self._generation = _generation

    def _check_generation(self):
        if self._generation != _generation:
            self.clear()

    @db_api.reader
    def _load(self, context):
        generation = _generation
        rows = context.session.execute(
            sa.select(self._table.c.id, self._table.c.name)).all()
        by_name = {r.name: r.id for r in rows}
        by_id = {r.id: r.name for r in rows}
        with self._lock:
            self._by_name = by_name
            self._by_id = by_id
            self._generation = generation

    def id_from_name(self, context, name):
        self._check_generation()
        try:
            return self._by_name[name]
        except KeyError:
            self._load(context)
        try:
            return self._by_name[name]
        except KeyError:
            raise self._not_found(name)

    def name_from_id(self, context, id_):
        self._check_generation()
        try:
            return self._by_id[id_]
        except KeyError:
            self._load(context)
        try:
            return self._by_id[id_]
        except KeyError:
            raise self._not_found(str(id_))


def _rc_not_found(name):
    return exception.ResourceClassNotFound(resource_class=name)


def _trait_not_found(name):
    return exception.TraitNotFound(names=name)


class AttributeCache:
    """The resource class and trait caches of one application."""

    def __init__(self):
        self.resource_classes = _Cache(_RC_TBL, _rc_not_found)
        self.traits = _Cache(_TRAIT_TBL, _trait_not_found)


def _of(context):
    cache = getattr(context, 'attribute_cache', None)
    if cache is None:
        # A context made outside an application.
        cache = context.attribute_cache = AttributeCache()
    return cache


def rc_id(context, name):
    """The id of resource class ``name``.

    :raises exception.ResourceClassNotFound: no such class.
    """
    return _of(context).resource_classes.id_from_name(context, name)


def rc_name(context, id_):
    """The name of the resource class with id ``id_``."""
    return _of(context).resource_classes.name_from_id(context, id_)


def trait_id(context, name):
    """The id of trait ``name``.

    :raises exception.TraitNotFound: no such trait.
    """
    return _of(context).traits.id_from_name(context, name)


def trait_name(context, id_):
    """The name of the trait with id ``id_``."""
    return _of(context).traits.name_from_id(context, id_)


def invalidate():
    """Make every cache of the process forget its mappings.

    Called after a class or trait is deleted or renamed: its id may be
    handed to the next one created. The mappings are re-read on the next
    lookup.
    """
    global _generation
    with _GENERATION_LOCK:
        _generation += 1
