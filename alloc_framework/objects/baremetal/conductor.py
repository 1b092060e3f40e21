"""The Conductor versioned object and the SQL of the ``conductors`` table.

A conductor row's ``updated_at`` is its heartbeat: a conductor is alive
while it is ``online`` and its heartbeat is younger than
``[conductor]heartbeat_timeout``.
"""

import datetime

from oslo_db import exception as db_exc
import sqlalchemy as sa

from alloc_framework.common import exception
from alloc_framework.db import api as db_api
from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects.baremetal import base
from alloc_framework.objects.baremetal import fields

CONDUCTORS = models.Conductor.__table__


@db_api.reader
def _get(context, **kw):
    column, value = next(iter(kw.items()))
    return context.session.execute(
        sa.select(CONDUCTORS)
        .where(getattr(CONDUCTORS.c, column) == value)
    ).one_or_none()


@db_api.writer
def _register(context, hostname, conductor_group, drivers):
    now = base.utcnow()
    values = {'online': True, 'conductor_group': conductor_group or '',
              'drivers': list(drivers or []), 'updated_at': now}
    T = models.Conductor
    # A restart of a host reuses its row: its id is the affinity stored on
    # allocations, and an offline row is just a previous life.
    count = context.session.execute(
        sa.update(T).where(T.hostname == hostname).values(**values)
    ).rowcount
    if not count:
        try:
            with context.session.begin_nested():
                context.session.execute(sa.insert(T).values(
                    hostname=hostname, created_at=now, **values))
        except db_exc.DBDuplicateEntry:
            # Registered concurrently under the same name.
            raise exception.ConductorAlreadyRegistered(conductor=hostname)
    return context.session.execute(
        sa.select(CONDUCTORS).where(T.hostname == hostname)).one()


@db_api.writer
def _update(context, hostname, values):
    T = models.Conductor
    count = context.session.execute(
        sa.update(T).where(T.hostname == hostname).values(**values)
    ).rowcount
    if not count:
        raise exception.ConductorNotFound(conductor=hostname)


@db_api.reader
def _list_alive(context, timeout, conductor_group=None):
    T = models.Conductor
    limit = base.utcnow() - datetime.timedelta(seconds=timeout)
    query = (sa.select(CONDUCTORS)
             .where(T.online.is_(True), T.updated_at > limit)
             .order_by(T.hostname))
    if conductor_group is not None:
        query = query.where(T.conductor_group == conductor_group)
    return context.session.execute(query).all()


@db_api.reader
def _list_all(context):
    return context.session.execute(
        sa.select(CONDUCTORS).order_by(CONDUCTORS.c.hostname)).all()


@base.AllocObjectRegistry.register
class Conductor(base.AllocObject):
    """A registered conductor service."""

    # Version 1.0: initial version
    VERSION = '1.0'

    fields = {
        'id': fields.IntegerField(),
        'hostname': fields.StringField(),
        'online': fields.BooleanField(),
        'conductor_group': fields.StringField(nullable=True),
        'drivers': fields.ListOfStringsField(nullable=True),
        'created_at': fields.DateTimeField(nullable=True),
        'updated_at': fields.DateTimeField(nullable=True),
    }

    @classmethod
    def _from_db(cls, context, row):
        obj = cls._from_db_row(context, cls(), row)
        if obj.drivers is None:
            obj.drivers = []
            obj.obj_reset_changes(['drivers'])
        return obj

    @classmethod
    def get_by_hostname(cls, context, hostname):
        """:raises: ConductorNotFound"""
        row = _get(context, hostname=hostname)
        if row is None:
            raise exception.ConductorNotFound(conductor=hostname)
        return cls._from_db(context, row)

    @classmethod
    def get_by_id(cls, context, conductor_id):
        """:raises: ConductorNotFound"""
        row = _get(context, id=conductor_id)
        if row is None:
            raise exception.ConductorNotFound(conductor=conductor_id)
        return cls._from_db(context, row)

    @classmethod
    def register(cls, context, hostname, conductor_group='', drivers=None):
        """Register (or re-register) a conductor as online, heartbeat now.

        :raises: ConductorAlreadyRegistered on a concurrent registration
            of the same host name.
        """
        return cls._from_db(context, _register(context, hostname,
                                               (conductor_group or '')
                                               .lower(), drivers))

    @classmethod
    def list_alive(cls, context, timeout, conductor_group=None):
        """Online conductors whose heartbeat is newer than ``timeout`` s.

        :param conductor_group: only this group when not None.
        """
        return [cls._from_db(context, row)
                for row in _list_alive(context, timeout, conductor_group)]

    @classmethod
    def list(cls, context):
        """Every registered conductor, alive or not."""
        return [cls._from_db(context, row) for row in _list_all(context)]

    def touch(self, context=None):
        """Heartbeat: set ``updated_at`` to now (and online again).

        :raises: ConductorNotFound
        """
        now = base.utcnow()
        _update(context or self._context, self.hostname,
                {'updated_at': now, 'online': True})
        self.updated_at = now
        self.online = True
        self.obj_reset_changes()

    def unregister(self, context=None):
        """Mark the conductor offline (it leaves the hash ring).

        :raises: ConductorNotFound
        """
        _update(context or self._context, self.hostname,
                {'online': False, 'updated_at': base.utcnow()})
        self.online = False
        self.obj_reset_changes()
