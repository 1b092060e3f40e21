"""The Conductor versioned object and the SQL of the ``conductors`` table.

A conductor row's ``updated_at`` is its heartbeat: a conductor is alive
while it is ``online`` and its heartbeat is younger than
``[conductor]heartbeat_timeout``.

One process per host name: the process that registers a row writes its
token (``registration``) there, and only a row that is free (new, offline,
or whose heartbeat is older than the timeout) or already that process's
own can be registered. The claim is one conditional ``UPDATE`` (or an
``INSERT`` under the host name's unique constraint), so of two processes
registering the same host at once exactly one wins. Heartbeats and the
unregistration of a stopping process name the token too: a process never
touches a registration it lost.
"""

import datetime

from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import utils as db_utils
from oslo_utils import uuidutils
import sqlalchemy as sa

from alloc_framework.common import exception
from alloc_framework.db import api as db_api
from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects.baremetal import base
from alloc_framework.objects.baremetal import fields

CONDUCTORS = models.Conductor.__table__
# What a listing may be sorted by (as upstream: not by ``alive`` or
# ``drivers``, which are not plain columns).
SORT_KEYS = ('id', 'hostname', 'conductor_group', 'created_at',
             'updated_at')


@db_api.reader
def _get(context, **kw):
    column, value = next(iter(kw.items()))
    return context.session.execute(
        sa.select(CONDUCTORS)
        .where(getattr(CONDUCTORS.c, column) == value)
    ).one_or_none()


@db_api.writer
def _register(context, hostname, conductor_group, drivers, timeout,
              registration):
    """Claim the row of ``hostname`` for ``registration``.

    :returns: ``(row, previous)``: the registered row, and the row as it
        was before (None for a new host).
    :raises: ConductorAlreadyRegistered when another registration of the
        host is online with a heartbeat younger than ``timeout``.
    """
    now = base.utcnow()
    values = {'online': True, 'conductor_group': conductor_group or '',
              'drivers': list(drivers or []), 'updated_at': now,
              'registration': registration}
    T = models.Conductor
    previous = context.session.execute(
        sa.select(CONDUCTORS).where(T.hostname == hostname)).one_or_none()
    if previous is None:
        try:
            with context.session.begin_nested():
                context.session.execute(sa.insert(T).values(
                    hostname=hostname, created_at=now, **values))
        except db_exc.DBDuplicateEntry:
            # Registered concurrently under the same name: that one won.
            raise exception.ConductorAlreadyRegistered(conductor=hostname)
    else:
        # A restart of a host reuses its row: its id is the affinity
        # stored on allocations, and an offline or dead row is just a
        # previous life. The condition is evaluated again on the row a
        # concurrent claim committed, so only one claim matches.
        limit = now - datetime.timedelta(seconds=timeout)
        count = context.session.execute(
            sa.update(T).where(
                T.hostname == hostname,
                sa.or_(T.registration == registration,
                       T.online.is_(False),
                       T.updated_at.is_(None),
                       T.updated_at <= limit))
            .values(**values)
        ).rowcount
        if not count:
            raise exception.ConductorAlreadyRegistered(conductor=hostname)
    row = context.session.execute(
        sa.select(CONDUCTORS).where(T.hostname == hostname)).one()
    return row, previous


@db_api.writer
def _update(context, hostname, registration, values):
    T = models.Conductor
    query = sa.update(T).where(T.hostname == hostname)
    if registration is not None:
        query = query.where(T.registration == registration)
    count = context.session.execute(query.values(**values)).rowcount
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
def _list_all(context, limit, marker, sort_key, sort_dir):
    T = models.Conductor
    if sort_key is None:
        return context.session.execute(
            sa.select(CONDUCTORS).order_by(T.hostname)).all()
    marker_row = None
    if marker is not None:
        marker_row = context.session.execute(
            sa.select(CONDUCTORS).where(T.hostname == marker)).one_or_none()
        if marker_row is None:
            raise exception.ConductorNotFound(conductor=marker)
    sort_keys = [sort_key] if sort_key == 'id' else [sort_key, 'id']
    query = db_utils.paginate_query(sa.select(CONDUCTORS), T, limit,
                                    sort_keys, marker=marker_row,
                                    sort_dir=sort_dir)
    return context.session.execute(query).all()


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

    #: The token of the registration this object stands for: where it
    #: came from ``register()``, the process's own, which ``touch()`` and
    #: ``unregister()`` require. Not a field: it never leaves the process.
    registration = None
    #: After ``register()``: the row as it was before (None for a new
    #: host), to tell a first start from the take-over of a dead one.
    previous = None

    @classmethod
    def _from_db(cls, context, row):
        obj = cls._from_db_row(context, cls(), row)
        if obj.drivers is None:
            obj.drivers = []
            obj.obj_reset_changes(['drivers'])
        obj.registration = row.registration
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
    def register(cls, context, hostname, conductor_group='', drivers=None,
                 timeout=60, registration=None):
        """Register a conductor as online, heartbeat now.

        The host's row is taken when it is new, offline, dead (heartbeat
        older than ``timeout`` seconds) or already ``registration``'s.

        :param registration: the token of a registration this process
            already holds (a restart of its conductor); None for a new
            one.
        :returns: the Conductor, whose ``registration`` is its token and
            ``previous`` the row as it was.
        :raises: ConductorAlreadyRegistered when another registration of
            the host is alive, or won a concurrent registration.
        """
        token = registration or uuidutils.generate_uuid()
        row, previous = _register(context, hostname,
                                  (conductor_group or '').lower(), drivers,
                                  timeout, token)
        obj = cls._from_db(context, row)
        obj.previous = previous
        return obj

    @classmethod
    def list_alive(cls, context, timeout, conductor_group=None):
        """Online conductors whose heartbeat is newer than ``timeout`` s.

        :param conductor_group: only this group when not None.
        """
        return [cls._from_db(context, row)
                for row in _list_alive(context, timeout, conductor_group)]

    @classmethod
    def list(cls, context, limit=None, marker=None, sort_key=None,
             sort_dir='asc'):
        """Every registered conductor, alive or not.

        By host name without ``sort_key``; else a page of at most
        ``limit`` conductors sorted by ``sort_key`` (one of ``SORT_KEYS``)
        after the conductor whose host name is ``marker``.

        :raises: ConductorNotFound when the marker does not exist;
            InvalidParameterValue for an unknown sort key or direction.
        """
        if sort_key is not None and sort_key not in SORT_KEYS:
            raise exception.InvalidParameterValue(
                err='Invalid sort key %s for conductors.' % sort_key)
        if sort_dir not in ('asc', 'desc'):
            raise exception.InvalidParameterValue(
                err='Invalid sort direction: %s.' % sort_dir)
        return [cls._from_db(context, row) for row in
                _list_all(context, limit, marker, sort_key, sort_dir)]

    def is_alive(self, timeout):
        """Online with a heartbeat younger than ``timeout`` seconds."""
        if not self.online or self.updated_at is None:
            return False
        updated = self.updated_at
        if updated.tzinfo is not None:
            updated = updated.replace(tzinfo=None)
        now = base.utcnow()
        if now.tzinfo is not None:
            now = now.replace(tzinfo=None)
        return now - updated < datetime.timedelta(seconds=timeout)

    def touch(self, context=None):
        """Heartbeat: set ``updated_at`` to now (and online again).

        :raises: ConductorNotFound when the row is gone or is another
            registration's now.
        """
        now = base.utcnow()
        _update(context or self._context, self.hostname, self.registration,
                {'updated_at': now, 'online': True})
        self.updated_at = now
        self.online = True
        self.obj_reset_changes()

    def unregister(self, context=None):
        """Mark the conductor offline (it leaves the hash ring).

        :raises: ConductorNotFound when the row is gone or is another
            registration's now: a process only unregisters its own.
        """
        _update(context or self._context, self.hostname, self.registration,
                {'online': False, 'updated_at': base.utcnow()})
        self.online = False
        self.obj_reset_changes()
