"""The DeferredAction versioned object: a call a conductor makes later.

An action names a deferrable driver method (``task.driver.<interface>.
<method>``), its JSON arguments, and when it may run (``start_after``;
None for a "lazy" action run when there is room). Its ``state`` follows
:data:`TRANSITIONS` and is also its lock: a conductor launches an action
only by moving it from a launchable state to RUNNING with a conditional
UPDATE (:meth:`DeferredAction.claim`), and every later move is
conditional on the state it leaves (:meth:`DeferredAction.transition`),
so two conductors that both believe they own a node (a hash ring being
rebuilt) never launch an action twice. On PostgreSQL and MariaDB the
claim also takes the rows with ``SELECT ... FOR UPDATE SKIP LOCKED``, so a
racing conductor skips them instead of waiting behind the winner.

:func:`create_actions` inserts actions in the transaction that saves the
node change asking for them.
"""

import datetime

from oslo_utils import uuidutils
from oslo_utils import versionutils
import sqlalchemy as sa

from alloc_framework.common import exception
from alloc_framework.db import api as db_api
from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects.baremetal import base
from alloc_framework.objects.baremetal import fields
from alloc_framework.objects.baremetal import node as node_obj

CREATED = 'CREATED'
RUNNING = 'RUNNING'
RESCHEDULE = 'RESCHEDULE'
PENDING_RETRY = 'PENDING_RETRY'
FAILED = 'FAILED'
COMPLETED = 'COMPLETED'

# The state machine, as data: state -> the states it may move to.
TRANSITIONS = {
    CREATED: frozenset([RUNNING]),
    RUNNING: frozenset([COMPLETED, RESCHEDULE, PENDING_RETRY, FAILED]),
    RESCHEDULE: frozenset([RUNNING]),
    PENDING_RETRY: frozenset([RUNNING]),
    FAILED: frozenset(),
    COMPLETED: frozenset(),
}
STATES = tuple(TRANSITIONS)
# States the launcher picks actions up in.
LAUNCHABLE = (CREATED, RESCHEDULE, PENDING_RETRY)
TERMINAL = (COMPLETED, FAILED)

A = models.DeferredAction
# Rows are read and written as Core statements on the table (see
# alloc_framework.db.api): a row is a named tuple, not an ORM entity.
_ACTIONS = A.__table__
_NODES = models.Node.__table__


def check_transition(action, current, new):
    """:raises: InvalidDeferredActionTransition"""
    if new not in TRANSITIONS.get(current, ()):
        raise exception.InvalidDeferredActionTransition(
            action=action, current=current, new=new)


def _row_locks(dialect_name):
    """Whether a claim can take row locks the database's way."""
    return dialect_name in ('postgresql', 'mysql')


@db_api.writer
def _insert(context, node, values_list):
    if node is not None and node.obj_what_changed():
        # The same context: Node.save joins this transaction.
        node.save(context)
    ids = [context.session.execute(
        sa.insert(_ACTIONS).values(**values)).inserted_primary_key[0]
        for values in values_list]
    if not ids:
        return []
    rows = {row.id: row for row in context.session.execute(
        sa.select(_ACTIONS).where(_ACTIONS.c.id.in_(ids)))}
    return [rows[i] for i in ids]


@db_api.reader
def _get(context, **kw):
    query = sa.select(_ACTIONS).where(A.deleted_at.is_(None))
    for key, value in kw.items():
        query = query.where(getattr(A, key) == value)
    return context.session.execute(query).one_or_none()


@db_api.reader
def _list(context, filters, limit, marker):
    query = sa.select(_ACTIONS).where(A.deleted_at.is_(None)).order_by(A.id)
    for key in ('state', 'node_id'):
        if filters.get(key) is not None:
            query = query.where(getattr(A, key) == filters[key])
    if marker is not None:
        marker_id = context.session.execute(
            sa.select(A.id).where(A.uuid == marker)).scalar_one_or_none()
        if marker_id is None:
            raise exception.InvalidParameterValue(
                err='Marker %s could not be found.' % marker)
        query = query.where(A.id > marker_id)
    if limit:
        query = query.limit(limit)
    return context.session.execute(query).all()


@db_api.reader
def node_uuids(context, node_ids):
    """``{node id: node uuid}`` for the given ids (for display)."""
    if not node_ids:
        return {}
    N = models.Node
    return dict(context.session.execute(
        sa.select(N.id, N.uuid).where(N.id.in_(list(node_ids)))).all())


def _candidates_statement(owned, dialect):
    N = models.Node
    due = sa.or_(A.start_after.is_(None),
                 A.start_after <= sa.bindparam('b_now'))
    query = (sa.select(A.id, N.uuid, N.conductor_group)
             .join(N, N.id == A.node_id)
             .where(A.state.in_(LAUNCHABLE), A.deleted_at.is_(None), due,
                    N.reservation.is_(None))
             # Elapsed start_after first (oldest first), lazy ones last.
             .order_by(A.start_after.is_(None), A.start_after, A.id)
             .limit(sa.bindparam('b_limit')))
    if owned is not None:
        query = query.where(node_obj.owned_clause(None, owned, dialect))
    return query


# The candidates statement of the last ring seen, per dialect: the
# launcher reads the candidates many times a second, and its ring's
# ranges change only when the ring does.
_CANDIDATES = {}


@db_api.snapshot_connection_reader
def _candidates(context, now, limit, owned):
    """Launchable actions on unlocked nodes, timed first, then lazy.

    A snapshot (on SQLite, without the write lock): what it reads is
    only a list of ids to try, the claim checks each again.

    :param owned: ``{conductor group: MD5 ranges}`` of the nodes to
        consider, or None for every node.
    :returns: rows of ``(id, node uuid, node conductor_group)``.
    """
    conn = context.connection
    dialect = conn.dialect.name
    key = (None if owned is None else
           tuple(sorted((group, tuple(tuple(r) for r in ranges))
                        for group, ranges in owned.items())))
    cached = _CANDIDATES.get(dialect)
    if cached is None or cached[0] != key:
        cached = _CANDIDATES[dialect] = (
            key, _candidates_statement(owned, dialect))
    return conn.execute(cached[1], {'b_now': now, 'b_limit': limit}).all()


class _ClaimRaced(Exception):
    """A conditional claim updated fewer rows than it read."""


@db_api.retrying(exception_checker=lambda exc: isinstance(exc, _ClaimRaced))
@db_api.writer
def _claim(context, ids, host, now):
    """Move the launchable actions among ``ids`` to RUNNING.

    :returns: ``{id: state before the claim}`` of the actions claimed.
    """
    if not ids:
        return {}
    query = sa.select(A.id, A.state).where(
        A.id.in_(ids), A.state.in_(LAUNCHABLE), A.deleted_at.is_(None))
    if _row_locks(context.session.get_bind().dialect.name):
        # Rows another claim holds are skipped, not waited for.
        query = query.with_for_update(skip_locked=True)
    seen = dict(context.session.execute(query).all())
    for state in LAUNCHABLE:
        batch = [i for i, s in seen.items() if s == state]
        if not batch:
            continue
        # Conditional on the state read: the update stays the guard
        # whatever the isolation. With the rows locked (or SQLite's
        # single writer) it cannot miss; if it ever does, the whole
        # transaction is rolled back and run again.
        result = context.session.execute(
            sa.update(A).where(A.id.in_(batch), A.state == state)
            .values(state=RUNNING, conductor=host, updated_at=now)
            .execution_options(synchronize_session=False))
        if result.rowcount != len(batch):
            raise _ClaimRaced()
    return seen


def _claim_statements(locks):
    """The statements of :func:`_claim_and_lock`, built once (see
    :data:`_MOVE`), with or without row locks."""
    a, n = _ACTIONS.c, _NODES.c
    # The whole rows: what the workers run.
    actions = sa.select(_ACTIONS).where(
        a.id.in_(sa.bindparam('b_ids', expanding=True)),
        a.state.in_(LAUNCHABLE), a.deleted_at.is_(None))
    # The whole rows of the free nodes too: the tasks adopt them, so they
    # are not read again after the lock.
    nodes = sa.select(_NODES).where(
        n.id.in_(sa.bindparam('b_ids', expanding=True)),
        n.reservation.is_(None))
    if locks:
        # Rows another claim holds are skipped, not waited for.
        actions = actions.with_for_update(skip_locked=True)
        nodes = nodes.with_for_update(skip_locked=True)
    # updated_at as the table's own default would set it, but known here
    # to give the nodes read before the update.
    lock = sa.update(_NODES).where(
        n.id.in_(sa.bindparam('b_ids', expanding=True)),
        n.reservation.is_(None)).values(
            reservation=sa.bindparam('b_host'),
            updated_at=sa.bindparam('b_now'))
    claim = sa.update(_ACTIONS).where(
        a.id.in_(sa.bindparam('b_ids', expanding=True)),
        a.state == sa.bindparam('b_state')).values(
            state=RUNNING, conductor=sa.bindparam('b_host'),
            updated_at=sa.bindparam('b_now'))
    return actions, nodes, lock, claim


_CLAIM = {locks: _claim_statements(locks) for locks in (False, True)}


@db_api.retrying(exception_checker=lambda exc: isinstance(exc, _ClaimRaced))
@db_api.writer.connection
def _claim_and_lock(context, ids, host, now):
    """Lock the free nodes of the launchable actions among ``ids`` for
    ``host`` and move those actions to RUNNING, in one transaction.

    An action whose node is locked (by anyone) is left as it is.

    :returns: ``(rows, nodes)``: ``{id: (state before, action row)}`` of
        the actions claimed and ``{node id: Node}`` of their nodes.
    """
    if not ids:
        return {}, {}
    # Core statements on the connection, built once: the ORM session and
    # new statements at every claim cost more than the claim's SQL.
    conn = context.connection
    actions, nodes, lock, claim = _CLAIM[_row_locks(conn.dialect.name)]
    seen = conn.execute(actions, {'b_ids': ids}).all()
    free = {row.id: row for row in conn.execute(
        nodes, {'b_ids': list({row.node_id for row in seen})})}
    # One action per node: the lock is the node's.
    mine = {}
    for row in seen:
        if row.node_id in free:
            mine.setdefault(row.node_id, row)
    if not mine:
        return {}, {}
    locked = conn.execute(lock, {'b_ids': list(mine), 'b_host': host,
                                 'b_now': now}).rowcount
    if locked != len(mine):
        raise _ClaimRaced()
    for state in LAUNCHABLE:
        batch = [r.id for r in mine.values() if r.state == state]
        if not batch:
            continue
        result = conn.execute(claim, {'b_ids': batch, 'b_state': state,
                                      'b_host': host, 'b_now': now})
        if result.rowcount != len(batch):
            raise _ClaimRaced()
    rows = {row.id: (row.state, row) for row in mine.values()}
    nodes = {}
    for node in node_obj.Node.from_rows(
            context, [free[node_id] for node_id in mine], conn):
        # As stored by the lock.
        node.reservation, node.updated_at = host, now
        node.obj_reset_changes(['reservation', 'updated_at'])
        nodes[node.id] = node
    return rows, nodes


# The statements of a state change, built once: a new statement per call
# (its WHERE clause, its SET clause from ``values()``, then its cache key)
# cost more CPU than the round trips. The SET clause comes from the
# parameters' names (columns of the table); the ``b_`` names are the
# conditions'.
_MOVE = sa.update(_ACTIONS).where(
    _ACTIONS.c.id == sa.bindparam('b_id'),
    _ACTIONS.c.state == sa.bindparam('b_state'))
# Conditional: a lock broken meanwhile is not someone else's to lose (the
# task reports a broken lock at its end).
_RELEASE = sa.update(_NODES).where(
    _NODES.c.id == sa.bindparam('b_node'),
    _NODES.c.reservation == sa.bindparam('b_host')).values(reservation=None)


@db_api.retry_on_deadlock
@db_api.writer.connection
def _transition(context, action_id, current, values, release=None):
    # Without the ORM session: many of these run per second.
    conn = context.connection
    count = conn.execute(_MOVE, dict(values, b_id=action_id,
                                     b_state=current)).rowcount
    if count and release is not None:
        node_id, host = release
        conn.execute(_RELEASE, {'b_node': node_id, 'b_host': host})
    return count


@db_api.reader
def _running(context, before, conductor):
    query = sa.select(A.id).where(A.state == RUNNING, A.deleted_at.is_(None))
    if before is not None:
        query = query.where(A.updated_at < before)
    if conductor is not None:
        query = query.where(A.conductor == conductor)
    return context.session.execute(query.order_by(A.id)).scalars().all()


@db_api.reader
def _locked_nodes(context):
    N = models.Node
    return dict(context.session.execute(
        sa.select(N.id, N.reservation).distinct()
        .join(A, A.node_id == N.id)
        .where(A.state.in_(LAUNCHABLE), A.deleted_at.is_(None),
               N.reservation.is_not(None))).all())


_COUNT_BY_STATE = (sa.select(_ACTIONS.c.state, sa.func.count())
                   .where(_ACTIONS.c.deleted_at.is_(None))
                   .group_by(_ACTIONS.c.state))


@db_api.snapshot_connection_reader
def _count_by_state(context):
    return dict(context.connection.execute(_COUNT_BY_STATE).all())


@db_api.retry_on_deadlock
@db_api.writer
def _soft_delete(context, before):
    return context.session.execute(
        sa.update(A).where(A.state.in_(TERMINAL), A.deleted_at.is_(None),
                           A.updated_at < before)
        .values(deleted_at=base.utcnow())
        .execution_options(synchronize_session=False)).rowcount


@db_api.retry_on_deadlock
@db_api.writer
def _purge_batch(context, limit):
    ids = context.session.execute(
        sa.select(A.id).where(A.deleted_at.is_not(None))
        .order_by(A.id).limit(limit)).scalars().all()
    if not ids:
        return 0
    # Children of purged actions keep living without their parent.
    context.session.execute(
        sa.update(A).where(A.parent_action.in_(ids))
        .values(parent_action=None)
        .execution_options(synchronize_session=False))
    return context.session.execute(
        sa.delete(A).where(A.id.in_(ids))
        .execution_options(synchronize_session=False)).rowcount


@base.AllocObjectRegistry.register
class DeferredAction(base.AllocObject):
    """One deferred action of a node."""

    # Version 1.0: initial version
    # Version 1.1: flow
    VERSION = '1.1'

    fields = {
        'id': fields.IntegerField(),
        'uuid': fields.UUIDField(),
        'node_id': fields.IntegerField(),
        'state': fields.StringField(),
        'parent_action': fields.IntegerField(nullable=True),
        'start_after': fields.DateTimeField(nullable=True),
        'call': fields.StringField(),
        'arguments': fields.FlexibleDictField(nullable=True),
        'retry_remaining': fields.IntegerField(),
        'created_by': fields.StringField(nullable=True),
        'result': fields.StringField(nullable=True),
        'request_id': fields.StringField(nullable=True),
        'user_id': fields.StringField(nullable=True),
        'reschedule_count': fields.IntegerField(),
        'deadline': fields.DateTimeField(nullable=True),
        'conductor': fields.StringField(nullable=True),
        'flow': fields.StringField(nullable=True),
        'created_at': fields.DateTimeField(nullable=True),
        'updated_at': fields.DateTimeField(nullable=True),
    }

    def obj_make_compatible(self, primitive, target_version):
        super().obj_make_compatible(primitive, target_version)
        if versionutils.convert_version_to_tuple(target_version) < (1, 1):
            primitive.pop('flow', None)

    @classmethod
    def new(cls, context, node_id, call, arguments=None, start_after=None,
            retries=0, timeout=None, parent_action=None, created_by=None,
            flow=None):
        """An action in CREATED, not yet stored (see :func:`create_actions`).

        The request id and user of ``context`` are kept for the FAILED
        report; ``created_by`` is the requesting project, None for work
        the service asks for itself.

        :param timeout: seconds after which the action may not run or
            reschedule any more; None for no limit.
        :param flow: the provisioning flow (``clean``, ``service``) that
            waits for the action and goes on when it ends (see
            ``conductor.deferred_actions.FLOW_HANDLERS``); None when no
            flow waits.
        """
        now = base.utcnow()
        return cls(
            context, uuid=uuidutils.generate_uuid(), node_id=node_id,
            state=CREATED, call=call, arguments=arguments or {},
            start_after=base.to_db_value(start_after),
            retry_remaining=retries, parent_action=parent_action,
            created_by=created_by,
            request_id=getattr(context, 'request_id', None),
            user_id=getattr(context, 'user_id', None),
            reschedule_count=0, created_at=now, flow=flow,
            deadline=(None if timeout is None
                      else now + datetime.timedelta(seconds=timeout)))

    def create(self, context=None):
        """Store this new action (alone; see :func:`create_actions`)."""
        create_actions(context or self._context, [self])

    @classmethod
    def get_by_uuid(cls, context, uuid):
        """:raises: DeferredActionNotFound"""
        row = _get(context, uuid=uuid)
        if row is None:
            raise exception.DeferredActionNotFound(action=uuid)
        return cls._from_db_row(context, cls(), row)

    @classmethod
    def get_by_id(cls, context, action_id):
        """:raises: DeferredActionNotFound"""
        row = _get(context, id=action_id)
        if row is None:
            raise exception.DeferredActionNotFound(action=action_id)
        return cls._from_db_row(context, cls(), row)

    @classmethod
    def list(cls, context, filters=None, limit=None, marker=None):
        """Actions not deleted, oldest first.

        :param filters: ``state`` and/or ``node_id``.
        :param marker: UUID of the last action of the previous page.
        :raises: InvalidParameterValue for an unknown marker.
        """
        return [cls._from_db_row(context, cls(), row)
                for row in _list(context, filters or {}, limit, marker)]

    @staticmethod
    def candidates(context, limit, owned=None):
        """Launchable actions, due and on unlocked nodes.

        :param owned: ``{conductor group: MD5 ranges}`` from
            :meth:`HashRingManager.hash_ranges`: only actions of the
            nodes the hash ring gives the caller are read. None reads
            those of every node.
        :returns: ``(id, node uuid, conductor group)`` rows, elapsed
            ``start_after`` first then lazy actions, at most ``limit``.
        """
        if owned is not None and not owned:
            return []  # not on any ring: no node is ours
        return _candidates(context, base.utcnow(), limit, owned)

    @staticmethod
    def claim(context, ids, host):
        """Move the launchable actions among ``ids`` to RUNNING for ``host``.

        Exactly one of several racing callers gets each action.

        :returns: ``{id: state before the claim}`` of the actions won.
        """
        return _claim(context, list(ids), host, base.utcnow())

    @classmethod
    def claim_and_lock(cls, context, ids, host):
        """Lock the nodes of the launchable actions among ``ids`` for
        ``host`` and move the actions to RUNNING, in one transaction.

        What :meth:`claim` then ``ConductorManager.lock_node`` did one
        action at a time, for a batch: an action whose node is locked
        is left untouched (no retry spent), the others are claimed as
        :meth:`claim` claims, exactly once among racing callers. The
        caller's task adopts each lock (``TaskManager(node=...)``) and
        its last state change releases it (``transition(release=)``).

        :returns: ``[(action, state before the claim, node)]``, the
            action and its node loaded in the same transaction.
        """
        now = base.utcnow()
        rows, nodes = _claim_and_lock(context, list(ids), host, now)
        claimed = []
        for previous, row in rows.values():
            action = cls._from_db_row(context, cls(), row)
            # As stored by the claim.
            action.state, action.conductor = RUNNING, host
            action.updated_at = now
            action.obj_reset_changes()
            claimed.append((action, previous, nodes[row.node_id]))
        return claimed

    def transition(self, new, release=None, **values):
        """Move from the current state to ``new``, storing ``values``.

        The update is conditional on the state this object holds.

        :param release: the host whose lock on the action's node the
            same transaction releases (the task that ran the action
            ends with its state change), or None.

        :raises: InvalidDeferredActionTransition for a move the state
            machine does not allow.
        :raises: DeferredActionStateChanged when the stored state is not
            the one this object holds any more.
        """
        check_transition(self.uuid, self.state, new)
        self._move(new, values, release)

    def retry_or_fail(self, error, release=None):
        """End a RUNNING action whose call went wrong: PENDING_RETRY,
        spending one retry, while it has any left, else FAILED.

        The one place that decides between retrying and failing, for a
        call that raised and for an action that lost its worker alike.

        :param error: why (an exception or a message): the ``result``.
        :param release: as in :meth:`transition`, for PENDING_RETRY only:
            the report of a FAILED action still needs the node's lock.
        :returns: the new state.
        :raises: DeferredActionStateChanged, as :meth:`transition`.
        """
        if self.retry_remaining > 0:
            self.transition(PENDING_RETRY, release=release,
                            retry_remaining=self.retry_remaining - 1,
                            result=str(error), conductor=None)
        else:
            self.fail(error)
        return self.state

    def fail(self, error):
        """Move a RUNNING action to FAILED whatever its retries (a
        deadline passed, a call that may never run).

        :raises: DeferredActionStateChanged, as :meth:`transition`.
        """
        self.transition(FAILED, result=str(error), conductor=None)

    def revert_claim(self, previous, release=None):
        """Give a RUNNING action back in ``previous`` without spending
        anything (the node was locked at the last moment, the conductor
        is stopping): the only move outside :data:`TRANSITIONS`, undoing
        :meth:`claim` (and with ``release``, as in :meth:`transition`,
        :meth:`claim_and_lock`).
        """
        if self.state != RUNNING or previous not in LAUNCHABLE:
            raise exception.InvalidDeferredActionTransition(
                action=self.uuid, current=self.state, new=previous)
        self._move(previous, {'conductor': None}, release)

    def _move(self, new, values, release=None):
        values = {k: base.to_db_value(v) for k, v in values.items()}
        values.update(state=new, updated_at=base.utcnow())
        if release is not None:
            release = (self.node_id, release)
        if not _transition(self._context, self.id, self.state, values,
                           release):
            raise exception.DeferredActionStateChanged(action=self.uuid,
                                                       expected=self.state)
        for key, value in values.items():
            setattr(self, key, value)
        self.obj_reset_changes()

    @staticmethod
    def running(context, before=None, conductor=None):
        """Ids of RUNNING actions, claimed before ``before`` and/or by
        ``conductor`` when given."""
        return _running(context, base.to_db_value(before), conductor)

    @staticmethod
    def locked_nodes(context):
        """``{node id: lock holder}`` of locked nodes with launchable
        actions (the clean-up frees those of dead conductors)."""
        return _locked_nodes(context)

    @staticmethod
    def count_by_state(context):
        """``{state: count}`` of the actions not deleted."""
        return _count_by_state(context)

    @staticmethod
    def soft_delete_terminal(context, before):
        """Soft-delete COMPLETED and FAILED actions ended before
        ``before``; returns how many."""
        return _soft_delete(context, base.to_db_value(before))

    @staticmethod
    def purge_deleted(context, batch_size):
        """Delete up to ``batch_size`` soft-deleted actions, in one
        transaction; returns how many (0 when none is left)."""
        return _purge_batch(context, batch_size)


def create_actions(context, actions, node=None):
    """Store new actions, with ``node``'s pending changes, atomically.

    :param actions: :class:`DeferredAction` objects from
        :meth:`DeferredAction.new`.
    :param node: a Node whose unsaved changes belong to the same
        transaction (its ``save`` joins it), or None.
    """
    values_list = []
    for action in actions:
        values = action._changes_for_db()
        values.pop('id', None)
        values_list.append(values)
    rows = _insert(context, node, values_list)
    for action, row in zip(actions, rows):
        DeferredAction._from_db_row(context, action, row)
