"""Base classes of the versioned objects (Node, Conductor, Allocation ...).

The objects are the versioned boundary between the API and conductors:
they travel over RPC through :class:`AllocObjectSerializer`. Each object
module also holds the SQL of its entity, under ``@db_api.reader`` or
``@db_api.writer``.
"""

import datetime

from oslo_utils import timeutils
from oslo_versionedobjects import base as ovo_base

OBJ_PROJECT_NAMESPACE = 'alloc_framework'


class AllocObjectRegistry(ovo_base.VersionedObjectRegistry):
    """The registry of this project's versioned objects."""


class AllocObject(ovo_base.VersionedObject,
                  ovo_base.ComparableVersionedObject):
    """Base of every versioned object of the project.

    Subclasses declare ``fields`` and implement their persistence with
    module-level functions decorated by the enginefacade.
    """

    OBJ_SERIAL_NAMESPACE = 'alloc_framework_object'
    OBJ_PROJECT_NAMESPACE = OBJ_PROJECT_NAMESPACE

    def as_dict(self):
        """The set fields as a plain dict (for the API and for logs)."""
        return {k: getattr(self, k) for k in self.fields
                if self.obj_attr_is_set(k)}

    @classmethod
    def _from_db_row(cls, context, obj, row, skip=()):
        """Fill ``obj`` from a DB row (mapping); reset its changes."""
        for field in obj.fields:
            if field in skip:
                continue
            value = getattr(row, field)
            setattr(obj, field, value)
        obj._context = context
        obj.obj_reset_changes()
        return obj

    def _changes_for_db(self):
        """Changed fields converted to DB values (naive UTC datetimes)."""
        values = {}
        for field in self.obj_what_changed():
            values[field] = to_db_value(getattr(self, field))
        return values


def to_db_value(value):
    """Convert an object value to what the database column stores."""
    if isinstance(value, datetime.datetime) and value.tzinfo is not None:
        return timeutils.normalize_time(value)
    return value


def utcnow():
    """Now, as the naive UTC datetime the database stores."""
    return timeutils.utcnow().replace(tzinfo=None)


class AllocObjectSerializer(ovo_base.VersionedObjectSerializer):
    """Serializes this project's objects over RPC."""

    OBJ_BASE_CLASS = AllocObject
