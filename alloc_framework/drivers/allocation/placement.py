"""The ``placement`` allocation backend: nodes are claimed in Placement.

Every node is mirrored as a root resource provider of the Placement that
``[placement]`` names (by default our own, in this process; see
:mod:`placement_client`):

* UUID: the node's UUID; name: the node's name, else its UUID;
* inventory: one unit of ``CUSTOM_<resource class>`` (normalized as
  ``os_resource_classes.normalize_name`` does), ``reserved`` 1 while the
  node can serve no allocation (not ``available``, in maintenance, power
  state unknown, or deployed without an allocation), 0 when it is free
  or serves an allocation (the claim then uses it);
* traits: the node's traits and :data:`NODE_TRAIT`, which marks the
  providers this backend owns (the drift check never touches others);
* aggregates: one per project owning or leasing the node
  (:func:`project_aggregate`), so that an allocation with an ``owner``
  asks for ``member_of`` that project's aggregate.

The conductor calls :meth:`PlacementBackend.node_changed` when it has
created, changed or deleted a node, and when an allocation released its
node; a failure there is logged and never fails the node's change. The
conductor's periodic task (every ``[placement]drift_heal_interval``
seconds, on the nodes its hash ring gives it) and ``alloc-manage
placement drift --heal`` catch up (:mod:`placement_drift`).

With our Placement in this process (on the same database) and
``[allocation]placement_claim_in_database``, allocating picks a free
node in the database as the ``database`` backend does and claims its
providers in Placement's tables in the same transaction
(:mod:`~alloc_framework.objects.placement.tree_claim`): no request, and
the claim commits or rolls back with the reservation; deallocating
deletes the claim in the transaction that releases the node. When no
node can be claimed that way although the database has free matching
nodes, the allocation goes through the API as below.

Through the API, allocating asks ``GET /allocation_candidates`` for one
unit of the class with the requested traits (``in_tree`` each candidate
node in turn when the allocation names candidate nodes), keeps the
candidates that are free in the database, and claims one of them, in
random order, with ``PUT /allocations/{allocation UUID}`` (a new
consumer). A 409 means
another allocation was first: the next candidate is tried; when none of
an answer's candidates could be claimed, Placement is asked again (its
answer leaves the claimed nodes out), at most
``[allocation]placement_claim_retries`` times. A claimed node is then
reserved in the database restricted to that node
(:func:`node_reservation.reserve_node`); when that fails the claim is
deleted before anything else happens, so a failed allocation leaves no
claim behind. Deallocating releases the node in the database, then
deletes the consumer's allocations. Allocation groups claim all their
nodes in one ``POST /allocations`` (:mod:`placement_groups`).
"""

import collections
import copy
import random
import threading
import uuid

from keystoneauth1 import exceptions as ks_exc
import os_resource_classes
from oslo_db import exception as db_exc
from oslo_log import log
from oslo_utils import uuidutils

from alloc_framework.common import exception
from alloc_framework.common import metrics
from alloc_framework.db import api as db_api
from alloc_framework.drivers.allocation import base
from alloc_framework.drivers.allocation import placement_client
from alloc_framework.drivers.allocation import placement_drift
from alloc_framework.drivers.allocation import placement_groups
from alloc_framework.drivers import base as hw_base
from alloc_framework.drivers import driver_factory
from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import allocation as alloc_obj
from alloc_framework.objects.baremetal import dashboard_queries as bm_queries
from alloc_framework.objects.baremetal import node_reservation
from alloc_framework.objects.placement import attribute_cache
from alloc_framework.objects.placement import exception as placement_exc
from alloc_framework.objects.placement import tree_claim
from alloc_framework import periodics
from alloc_framework.placement_client import exception as pc_exc
from alloc_framework.placement_client import provider_tree as pt

LOG = log.getLogger(__name__)

NODE_TRAIT = 'CUSTOM_ALLOC_FRAMEWORK_NODE'
"""The trait of every provider mirroring a node."""

# Namespace of the aggregates standing for projects (uuid5 of the id).
_PROJECT_NAMESPACE = uuid.UUID('6d1b5cf8-6e8b-4a0c-9c49-3a6f0e3e7d21')

# Errors of the client or the service: Placement is unusable right now.
_PLACEMENT_ERRORS = (placement_client.PlacementError,
                     ks_exc.ClientException)

# Tries of a provider sync whose generation changed meanwhile.
_SYNC_ATTEMPTS = 3

# How many of the nodes it claimed last a backend tries after the others.
_CLAIMED_KEPT = 256

# How many free nodes a failed allocation checks in Placement.
_CHECKED_FREE_NODES = 5

# What claiming in the database may meet that a new transaction can get
# past: a writer of the same consumer was first (it created the consumer,
# or moved a generation of a claim it left behind), which rolls the
# whole reservation back. The check locks the tree before it reads it,
# so its capacity cannot be taken before the write.
_IN_DATABASE_RACES = (placement_exc.PlacementException,
                      db_exc.DBDuplicateEntry)

# Each such transaction is tried at most three times (two retries).
_in_database = db_api.retrying(
    max_retries=2, exception_checker=lambda exc: isinstance(
        exc, _IN_DATABASE_RACES))


def resource_class_name(resource_class):
    """The Placement resource class of a node resource class."""
    return os_resource_classes.normalize_name(resource_class)


def project_aggregate(project_id):
    """The aggregate UUID standing for a project owning or leasing nodes."""
    return str(uuid.uuid5(_PROJECT_NAMESPACE, project_id))


def _get(obj, name):
    """``obj.name``, or None when the field was never set."""
    return getattr(obj, name) if obj.obj_attr_is_set(name) else None


def node_is_usable(node, in_use=None):
    """Whether the node's providers should offer their inventory.

    :param in_use: whether an allocation uses the node; by default,
        whether it has one.
    """
    if in_use is None:
        in_use = node.allocation_id is not None
    # The database's rule of a free node (the reservation's own).
    return in_use or node_reservation.node_is_free(node)


def describe_root(provider_tree, node):
    """Set what the backend owns on the root provider of ``node``.

    Its name (the node's name, else its UUID), traits (the node's and
    :data:`NODE_TRAIT`) and aggregates (:func:`project_aggregate` of its
    owner and lessee). The hardware type adds the rest.
    """
    provider_tree.update_traits(node.uuid,
                                set(node.traits or ()) | {NODE_TRAIT})
    provider_tree.update_aggregates(
        node.uuid, {project_aggregate(p) for p in (node.owner, node.lessee)
                    if p})


def reserve_unusable(provider_tree, node, usable):
    """Reserve all the node's inventory while it can serve no allocation.

    Every record of every provider of the node's tree gets ``reserved``
    0 when ``usable``, else its total.
    """
    for rp_uuid in provider_tree.get_provider_uuids(node.uuid):
        data = provider_tree.data(rp_uuid)
        inventories = {}
        for rc, record in data.inventory.items():
            record = dict(record)
            record['reserved'] = 0 if usable else record['total']
            inventories[rc] = record
        provider_tree.update_inventory(rp_uuid, inventories)


def _totals(inventory):
    return {rc: record['total'] for rc, record in inventory.items()}


def _held(record):
    return {rp: dict(value.get('resources', {}))
            for rp, value in record.get('allocations', {}).items()}


def tree_differences(before, after):
    """What differs between two pictures of a node's tree.

    :param before: ``{uuid: ProviderData}`` as Placement had it.
    :param after: ``{uuid: ProviderData}`` as it should be.
    :returns: a list of words (empty when nothing differs).
    """
    differs = []
    if set(before) != set(after):
        differs.append('providers')
    for field, word in (('inventory', 'inventory'), ('traits', 'traits'),
                        ('aggregates', 'aggregates')):
        for rp_uuid in after:
            if rp_uuid not in before:
                continue
            old = getattr(before[rp_uuid], field)
            new = getattr(after[rp_uuid], field)
            if field == 'inventory':
                changed = pt.inventory_has_changed(old, new)
            else:
                changed = old != new
            if changed:
                differs.append(word)
                break
    return differs


Comparison = collections.namedtuple('Comparison',
                                    ('differs', 'wanted', 'reshape'))
"""What :meth:`PlacementBackend.compare_tree` found: the words of what
differs (``name``, ``providers``, ``inventory``, ``traits``,
``aggregates``, ``reshape``), the tree as it should be (None when a
reshape is needed) and the ``ReshapeNeeded`` raised (else None)."""


class _ReshapeConflict(pc_exc.ProviderUpdateConflict):
    """A reshape lost a race (409 ``placement.concurrent_update``)."""


class PlacementBackend(base.AllocationBackend):
    """Claim nodes as resource providers of a Placement service."""

    node_trait = NODE_TRAIT

    # When free nodes exist but were claimed by concurrent allocations
    # whose reservations are not committed yet, the allocation looks
    # again this many times, pausing a little (a wait on the conductor's
    # stop event) as the database backend does.
    busy_attempts = 6
    busy_pause = 0.02

    def __init__(self, conf):
        super().__init__(conf)
        self._client = None
        self._report = None
        self._client_lock = threading.Lock()
        # {node UUID: allocations of this backend claiming it now}.
        self._claiming = collections.Counter()
        self._claiming_lock = threading.Lock()
        # The nodes it claimed last, oldest first (see _take).
        self._claimed = collections.OrderedDict()
        self._metrics = None
        # The conductor hands its own; loaded on first use otherwise.
        self.driver_factory = None
        # Resource class and trait ids of the claims made in the database.
        self._attribute_cache = attribute_cache.AttributeCache()

    @property
    def client(self):
        """The :class:`placement_client.PlacementClient`, built once."""
        with self._client_lock:
            if self._client is None:
                self._client = placement_client.PlacementClient(
                    placement_client.get_adapter(
                        self.conf, self.in_process_placement))
            return self._client

    @property
    def report(self):
        """The report client syncing provider trees, built once."""
        with self._client_lock:
            if self._report is None:
                self._report = placement_client.get_report_client(
                    self.conf, self.in_process_placement)
            return self._report

    # --- mirroring -------------------------------------------------------

    def start(self, context, owns):
        """Sync the providers of the nodes this conductor owns, reshaping.

        The reshape of the specification: a hardware type that moves
        inventory consumers hold (``ReshapeNeeded``) gets their
        allocations, and both move in one ``POST /reshaper``.

        :raises: ReshapeAtStartFailed when a reshape failed.
        """
        group = self.conf.conductor.conductor_group
        placement_drift.heal_owned(
            context, self,
            owns_node=lambda node: owns(node.uuid, node.conductor_group),
            owns_provider=lambda uuid: owns(uuid, group),
            startup=True)

    def node_changed(self, context, node_uuid):
        try:
            self.sync_node(context, node_uuid)
        except pc_exc.ReshapeNeeded as exc:
            LOG.error('The resource providers of node %(node)s need a '
                      'reshape, which runs only when its conductor starts '
                      'or with "alloc-manage placement '
                      'migrate-compute-inventory --node %(node)s": '
                      '%(exc)s', {'node': node_uuid, 'exc': exc})
        except Exception as exc:
            # The node's change stands; the drift heal catches up.
            LOG.warning('Could not update the resource provider of node '
                        '%(node)s in Placement: %(exc)s',
                        {'node': node_uuid, 'exc': exc})

    def sync_node(self, context, node_uuid):
        """Make the node's provider match the node (delete it when gone).

        :returns: what changed, a list of words (empty when nothing did).
        :raises: PlacementError, keystoneauth1 errors.
        """
        def read():
            return objects.Node.get_by_uuid(context, node_uuid)

        try:
            node = read()
            if self._unchanged_in_database(context, node):
                return []
            # Read again after a lost race: the winner may have written
            # what a newer state of the node says.
            changed = self.sync_provider(node, reload=read)
        except exception.NodeNotFound:
            return ['deleted'] if self.remove_provider(node_uuid) else []
        if self._drop_stray_claims(context, node):
            changed.append('claims')
        return changed

    def reads_placement_database(self):
        """Whether Placement's tables can be read here: our own Placement
        is in this process, on the service's database."""
        return (self.in_process_placement is not None
                and placement_client.in_process_configured(self.conf))

    def _unchanged_in_database(self, context, node):
        """Whether a sync of ``node`` has nothing to do, read in the database.

        With our Placement in this process, the node's tree and the
        claims on its provider are read from Placement's tables in one
        snapshot (``dashboard_queries.node_provider_state``) and compared
        by the rule of every sync (:meth:`compare_tree`). Nothing to do
        when the providers are right and every claim on the node's
        provider is an allocation of the node: the sync then makes no
        request. Anything else (no provider, a difference, a claim of
        another consumer) is left to the sync through Placement's API,
        which reads again before it writes.
        """
        if not self.reads_placement_database():
            return False
        providers, consumers = bm_queries.node_provider_state(
            context, node.uuid, node.id, self.node_trait)
        if providers is None or consumers:
            return False
        tree = placement_drift.tree_of(providers)
        return not self.compare_tree(node, tree).differs

    def _drop_stray_claims(self, context, node):
        """Resolve the claims on the node that no allocation stands behind.

        A node change can end its allocation without the backend (an
        update clearing ``instance_uuid`` deletes the allocation); its
        claim must go too (see :meth:`heal_claim`).

        :returns: whether a claim was deleted or moved.
        """
        changed = False
        for consumer in self.client.provider_allocations(node.uuid):
            if self.heal_claim(context, consumer, node) is not None:
                changed = True
        return changed

    def heal_claim(self, context, consumer, node):
        """Resolve the claim of ``consumer`` seen on the provider of ``node``.

        Call it only after the claim was seen: the allocation read here is
        then at least as recent as the claim, and since an allocation is
        created (``allocating``) before it claims a node, the claim of an
        allocation being made is always recognised and kept.

        * an allocation ``allocating``, or ``active`` on this node: the
          claim stays;
        * no allocation, but a claim of an ``allocating`` allocation
          group by its conductor (its allocations are created with its
          reservation, after the claim; see :mod:`placement_groups`): the
          claim stays;
        * no allocation, or one in ``error``: the claim is deleted;
        * an allocation ``active`` on another node whose claim still
          covers this node: it is claimed on its own node instead (a claim
          replaces all the allocations of its consumer).

        :returns: ``'deleted'``, ``'moved'``, or None when nothing
            changed.
        :raises: PlacementError, keystoneauth1 errors.
        """
        allocation = self._allocation_of(context, consumer)
        if allocation is None and (
                placement_groups.claimed_by_allocating_group(context,
                                                             consumer)):
            return None
        if allocation is None:
            # Read again: a group may have become active meanwhile.
            allocation = self._allocation_of(context, consumer)
        if allocation is not None and (
                allocation.state == alloc_obj.ALLOCATING
                or allocation.node_id == node.id):
            return None
        if (allocation is not None
                and allocation.state == alloc_obj.ACTIVE
                and allocation.node_id is not None):
            if node.uuid not in self.client.get_claim(consumer):
                # Claimed elsewhere since.
                return None
            try:
                served = objects.Node.get_by_id(context, allocation.node_id)
            except exception.NodeNotFound:
                served = None
            if served is not None:
                LOG.info('Moving the claim of allocation %(consumer)s from '
                         'node %(node)s to its node %(served)s',
                         {'consumer': consumer, 'node': node.uuid,
                          'served': served.uuid})
                if self.claim_node(allocation, served):
                    return 'moved'
                return 'deleted'
        LOG.info('Deleting the claim of %(consumer)s on node %(node)s: '
                 'no allocation of the node stands behind it',
                 {'consumer': consumer, 'node': node.uuid})
        self.client.delete_claim(consumer)
        return 'deleted'

    @staticmethod
    def _allocation_of(context, consumer):
        try:
            return objects.Allocation.get_by_uuid(context, consumer)
        except exception.AllocationNotFound:
            return None

    def sync_provider(self, node, in_use=None, dry_run=False,
                      startup=False, reload=None):
        """Make the providers of ``node`` (an object) what they should be.

        The node's tree is read from Placement (its root created when
        missing), the backend sets the root's name, traits and aggregates,
        the node's hardware type describes its inventories and children
        (``update_provider_tree``), and what changed is flushed. A
        generation conflict (another writer was first) reads the tree
        again, up to three times; with ``reload``, the node too.

        :param in_use: whether an allocation uses the node (default:
            whether it has one); an unusable node's inventory is reserved.
        :param dry_run: only say what differs; change nothing. A tree that
            needs a reshape differs in ``reshape``.
        :param startup: the conductor is starting: when the hardware type
            needs a reshape (``ReshapeNeeded``), gather the allocations of
            the node's consumers and move them with the inventory in one
            ``POST /reshaper``. Otherwise ``ReshapeNeeded`` is raised.
        :param reload: a callable returning the node read again, called
            before each attempt after a conflict: the node may have
            changed since it was read (the writer that won may have
            synced a newer state of it), and what was computed from it
            would then undo that.
        :returns: what differed, a list of words.
        :raises: ReshapeNeeded; ReshapeFailed, ReshapeImpossible (a reshape
            at startup failed, nothing of it was written; a reshape that
            lost every race is a failed one too); PlacementError, the
            report client's errors, keystoneauth1 errors.
        """
        for attempt in range(_SYNC_ATTEMPTS):
            try:
                return self._sync_tree(node, in_use, dry_run, startup)
            except (pc_exc.ProviderUpdateConflict,
                    placement_client.PlacementError) as exc:
                conflict = (
                    isinstance(exc, pc_exc.ProviderUpdateConflict)
                    or exc.code == 'placement.concurrent_update')
                if not conflict:
                    raise
                if attempt == _SYNC_ATTEMPTS - 1:
                    if isinstance(exc, _ReshapeConflict):
                        raise pc_exc.ReshapeFailed(
                            exc.cause, 'Reshaping the resource providers '
                            'lost the race with other writers %d times: %s'
                            % (_SYNC_ATTEMPTS, exc.cause))
                    raise
                if reload is not None:
                    node = reload()
            finally:
                # The next sync reads Placement again: the cache would
                # only grow with every node.
                self.report.clear_provider_cache(node.uuid)

    def hardware_type(self, node):
        """The hardware type describing the providers of ``node``.

        The node's own when this service enables it, else the default
        contract of ``HardwareType`` (the flat provider).
        """
        factory = self.driver_factory
        if factory is None:
            with self._client_lock:
                if self.driver_factory is None:
                    self.driver_factory = driver_factory.DriverFactory(
                        self.conf)
                factory = self.driver_factory
        try:
            return factory.get_hardware_type(node.driver)
        except exception.DriverNotFound:
            default = hw_base.HardwareType()
            default.conf = self.conf
            return default

    def describe_node(self, provider_tree, node, in_use=None,
                      allocations=None):
        """Bring the node's tree in ``provider_tree`` to what it should be.

        :returns: the moves the hardware type reported (words).
        :raises: ReshapeNeeded (only when ``allocations`` is None).
        """
        describe_root(provider_tree, node)
        moves = self.hardware_type(node).update_provider_tree(
            provider_tree, node.uuid, allocations=allocations, node=node)
        reserve_unusable(provider_tree, node, node_is_usable(node, in_use))
        return moves or []

    def _read_tree(self, node, name):
        """The node's tree as Placement has it now, created when missing.

        Read afresh (what the report client cached of it is dropped
        first): a sync compares with what Placement holds, whoever
        changed it. The copy holds the node's tree only.
        """
        report = self.report
        report.clear_provider_cache(node.uuid)
        try:
            tree = report.get_provider_tree_and_ensure_root(
                None, node.uuid, name=name)
        except pc_exc.PlacementAPIError as exc:
            if exc.code != 'placement.duplicate_name' or name == node.uuid:
                raise
            # Another provider (not ours) has that name.
            tree = report.get_provider_tree_and_ensure_root(
                None, node.uuid, name=node.uuid)
        # Trees other syncs are working on are theirs to flush.
        for root in tree.root_uuids:
            if root != node.uuid:
                tree.remove(root)
        return tree

    def compare_tree(self, node, tree, in_use=None):
        """What differs between ``node`` and its providers in ``tree``.

        The one rule of a stale provider, whoever read the tree: the
        root's name (the node's name, or its UUID when another provider
        has the name), then what :meth:`describe_node` would change.
        Pure: ``tree`` is not changed, nothing is read or written.

        :param tree: a ``ProviderTree`` holding the node's tree as
            Placement has it (its root is the node's UUID), read over
            HTTP (:meth:`placement_tree`) or from the database.
        :param in_use: as :meth:`sync_provider`.
        :returns: a :class:`Comparison`.
        """
        name = node.name or node.uuid
        differs = []
        before = {u: tree.data(u)
                  for u in tree.get_provider_uuids(node.uuid)}
        if before[node.uuid].name not in (name, node.uuid):
            differs.append('name')
        wanted = copy.deepcopy(tree)
        try:
            self.describe_node(wanted, node, in_use)
        except pc_exc.ReshapeNeeded as exc:
            return Comparison(differs + ['reshape'], None, exc)
        after = {u: wanted.data(u)
                 for u in wanted.get_provider_uuids(node.uuid)}
        return Comparison(differs + tree_differences(before, after),
                          wanted, None)

    def placement_tree(self, node):
        """The node's tree as Placement has it now (over its API), or
        None when Placement has no provider of the node's UUID."""
        if self.client.get_provider(node.uuid) is None:
            return None
        try:
            return self._read_tree(node, node.name or node.uuid)
        finally:
            self.report.clear_provider_cache(node.uuid)

    def _sync_tree(self, node, in_use, dry_run, startup):
        name = node.name or node.uuid
        if dry_run:
            tree = self.placement_tree(node)
            if tree is None:
                return ['missing']
            return self.compare_tree(node, tree, in_use).differs
        tree = self._read_tree(node, name)
        found = self.compare_tree(node, tree, in_use)
        changed = [word for word in found.differs if word == 'name']
        if changed:
            try:
                self.client.rename_provider(node.uuid, name)
            except placement_client.PlacementError as exc:
                if exc.code != 'placement.duplicate_name':
                    raise
                changed = []
        if found.reshape is not None:
            if not startup:
                raise found.reshape
            return changed + self._reshape(node, in_use, found.reshape)
        differs = [word for word in found.differs if word != 'name']
        if differs:
            self.report.update_from_provider_tree(None, found.wanted)
        return changed + differs

    def _reshape(self, node, in_use, reason):
        """Move the node's inventory and its consumers' allocations.

        :returns: ``['reshape']``.
        """
        LOG.info('Reshaping the resource providers of node %(node)s: '
                 '%(reason)s', {'node': node.uuid, 'reason': reason})
        report = self.report
        tree = self._read_tree(node, node.name or node.uuid)
        allocations = report.get_allocations_for_provider_tree(None,
                                                               node.uuid)
        moves = self.describe_node(tree, node, in_use,
                                   allocations=allocations)
        try:
            report.update_from_provider_tree(None, tree,
                                             allocations=allocations)
        except pc_exc.ProviderUpdateConflict as exc:
            raise _ReshapeConflict(exc.cause)
        LOG.info('Reshaped the resource providers of node %(node)s: '
                 '%(moves)s', {'node': node.uuid,
                               'moves': '; '.join(moves) or 'no consumer '
                               'held what moved'})
        return ['reshape']

    def plan(self, node):
        """What :meth:`sync_provider` at startup would change, unchanged.

        :returns: ``(differences, providers, consumers)``: the words of
            :meth:`sync_provider`; ``[(uuid, name, before, after)]`` of
            the providers whose inventory would change (``before`` None
            for a new provider, ``after`` None for a removed one; each an
            inventory dict of ``{class: total}``); ``[(consumer, before,
            after)]`` of the consumers whose allocations would move (each
            ``{provider: {class: amount}}``).
        """
        if self.client.get_provider(node.uuid) is None:
            return ['missing'], [], []
        try:
            tree = self._read_tree(node, node.name or node.uuid)
            wanted = copy.deepcopy(tree)
            allocations = None
            try:
                self.describe_node(wanted, node)
            except pc_exc.ReshapeNeeded:
                # Gathered from the tree just read: it must still be in
                # the report client's cache.
                allocations = self.report.get_allocations_for_provider_tree(
                    None, node.uuid)
                original = copy.deepcopy(allocations)
                wanted = copy.deepcopy(tree)
                self.describe_node(wanted, node, allocations=allocations)
        finally:
            self.report.clear_provider_cache(node.uuid)
        before = {u: tree.data(u) for u in tree.get_provider_uuids(node.uuid)}
        after = {u: wanted.data(u)
                 for u in wanted.get_provider_uuids(node.uuid)}
        differs = tree_differences(before, after)
        if allocations is not None:
            differs.append('reshape')
        providers = []
        for rp_uuid in list(before) + [u for u in after if u not in before]:
            old, new = before.get(rp_uuid), after.get(rp_uuid)
            old_inv = _totals(old.inventory) if old else None
            new_inv = _totals(new.inventory) if new else None
            if old_inv != new_inv:
                providers.append((rp_uuid, (new or old).name, old_inv,
                                  new_inv))
        consumers = []
        for consumer in sorted(allocations or {}):
            old = _held(original[consumer])
            new = _held(allocations[consumer])
            if old != new:
                consumers.append((consumer, old, new))
        return differs, providers, consumers

    def remove_provider(self, provider_uuid):
        """Delete a node's provider and the claims against it.

        :returns: whether there was a provider.
        """
        for consumer in self.client.provider_allocations(provider_uuid):
            self.client.delete_claim(consumer)
        return self.client.delete_provider(provider_uuid)

    # --- allocations -----------------------------------------------------

    def _consumer_ids(self, allocation):
        default = self.conf.placement.incomplete_consumer_project_id
        project = _get(allocation, 'owner') or default
        return project, self.conf.placement.incomplete_consumer_user_id

    def _batches(self, allocation, rc_name):
        """Candidates as Placement answers them, batch by batch.

        Each batch is ``{node UUID: what claiming its tree takes}`` (see
        ``PlacementClient.candidate_claims``).
        """
        traits = sorted(set(_get(allocation, 'traits') or ()))
        owner = _get(allocation, 'owner')
        member_of = [project_aggregate(owner)] if owner else None
        candidates = _get(allocation, 'candidate_nodes')
        if candidates:
            # Placement filters one tree at a time: ask for each named
            # node, in random order, until one is claimed.
            names = list(candidates)
            random.shuffle(names)
            for node_uuid in names:
                yield self.client.candidate_claims(
                    rc_name, traits, member_of, in_tree=node_uuid)
            return
        limit = self.conf.allocation.placement_candidates_limit
        for _round in range(1 + self.conf.allocation.placement_claim_retries):
            yield self.client.candidate_claims(rc_name, traits, member_of,
                                               limit=limit)

    def all_candidates(self, allocation):
        """Every candidate of ``allocation``, as one batch of :meth:`_batches`.

        For an allocation group's member, which needs several nodes: no
        ``limit``, and every candidate node asked for.
        """
        rc_name = resource_class_name(allocation.resource_class)
        traits = sorted(set(_get(allocation, 'traits') or ()))
        owner = _get(allocation, 'owner')
        member_of = [project_aggregate(owner)] if owner else None
        candidates = _get(allocation, 'candidate_nodes')
        if not candidates:
            return self.client.candidate_claims(rc_name, traits, member_of)
        found = {}
        for node_uuid in candidates:
            found.update(self.client.candidate_claims(
                rc_name, traits, member_of, in_tree=node_uuid))
        return found

    def consumer_ids(self, owned):
        """(project, user) of the claims of an allocation or a group."""
        return self._consumer_ids(owned)

    def _claim(self, allocation, node_uuid, rc_name, resources=None,
               context=None):
        """Claim the node's providers for the allocation; False on 409.

        :param resources: ``{provider: {class: amount}}`` to claim, the
            node's whole tree; by default one unit of ``rc_name`` on the
            node's root.
        :param context: given, a claim of the consumer is removed as
            stale only while no node is reserved for the allocation.
        :raises: InstanceAssociated when a node is reserved for the
            allocation already (it was processed meanwhile): its claim
            stays.
        """
        project, user = self._consumer_ids(allocation)
        claimed, code = self.client.try_claim(
            allocation.uuid, node_uuid, rc_name, project, user,
            resources=resources)
        if claimed:
            return True
        if code != placement_client.CONCURRENT_UPDATE:
            # The node is used up (claimed by another allocation first):
            # Placement checks the consumer's generation before the
            # capacity, so the consumer has no claim to remove.
            return False
        if context is not None and _get(allocation, 'id') is not None:
            holder = node_reservation.reserved_node(context, allocation.id)
            if holder is not None:
                raise exception.InstanceAssociated(
                    instance_uuid=allocation.uuid, node=holder)
        # A claim left by an earlier attempt of this allocation (its
        # conductor died between claiming and reserving) blocks the
        # consumer: remove it and try once more.
        if self.client.delete_claim(allocation.uuid):
            LOG.info('Removed a stale claim of allocation %s',
                     allocation.uuid)
            return self.client.claim(allocation.uuid, node_uuid, rc_name,
                                     project, user, resources=resources)
        return False

    def tree_claim(self, node):
        """What claiming ``node`` takes: its whole tree as described.

        :returns: ``{provider UUID: {class: total}}``.
        """
        tree = pt.ProviderTree()
        tree.new_root(node.name or node.uuid, node.uuid)
        self.describe_node(tree, node, in_use=True)
        claim = {}
        for rp_uuid in tree.get_provider_uuids(node.uuid):
            amounts = {rc: record['total'] for rc, record
                       in tree.data(rp_uuid).inventory.items()
                       if record['total'] > 0}
            if amounts:
                claim[rp_uuid] = amounts
        return claim

    def claim_node(self, allocation, node):
        """Claim ``node`` (an object) for ``allocation``; False on 409."""
        return self._claim(allocation, node.uuid,
                           resource_class_name(node.resource_class),
                           resources=self.tree_claim(node))

    def _unclaim(self, allocation):
        try:
            self.client.delete_claim(allocation.uuid)
        except _PLACEMENT_ERRORS as exc:
            LOG.error('Could not delete the claim of allocation %(alloc)s '
                      'in Placement (alloc-manage placement drift --heal '
                      'removes it): %(exc)s',
                      {'alloc': allocation.uuid, 'exc': exc})

    def _resync(self, context, node_uuids):
        for node_uuid in node_uuids:
            self.node_changed(context, node_uuid)

    resync = _resync

    # --- allocation groups (see placement_groups) ------------------------

    def validate_group(self, context, group):
        """Groups are served: one claim for all (see placement_groups)."""

    def allocate_group(self, context, group):
        try:
            return placement_groups.allocate_group(self, context, group)
        except _PLACEMENT_ERRORS as exc:
            raise exception.AllocationFailed(
                error='the Placement service failed: %s' % exc)

    def release_group(self, context, group):
        placement_groups.release_group(self, context, group)

    def claims_in_database(self):
        """Whether claims are written in the reservation's transaction.

        With ``[allocation]placement_claim_in_database`` and our own
        Placement in this process, which shares the database.
        """
        return bool(self.conf.allocation.placement_claim_in_database
                    and self.reads_placement_database())

    def allocate(self, context, allocation):
        rc_name = resource_class_name(allocation.resource_class)
        if self.claims_in_database():
            node = self._allocate_in_database(context, allocation, rc_name)
            if node is not None:
                return node
        return self._allocate_through_api(context, allocation, rc_name)

    def _allocate_through_api(self, context, allocation, rc_name):
        for attempt in range(self.busy_attempts):
            try:
                node = self._allocate_once(context, allocation, rc_name)
                if node is not None:
                    return node
                error = node_reservation.explain_no_node(context,
                                                         allocation)
                if not error.startswith(node_reservation.BUSY_ERROR):
                    break
                # The database has free matching nodes that Placement did
                # not let this allocation claim: their providers may be
                # missing or out of date.
                healed = self._heal_free_nodes(context, allocation)
            except _PLACEMENT_ERRORS as exc:
                raise exception.AllocationFailed(
                    error='the Placement service failed: %s' % exc)
            if healed:
                continue
            # Claimed by concurrent allocations whose reservations are not
            # committed yet (or locked a moment): look again shortly.
            if attempt < self.busy_attempts - 1:
                self.pause_busy(attempt)
        raise exception.AllocationFailed(error=error)

    def _allocate_in_database(self, context, allocation, rc_name):
        """Claim and reserve a node in one transaction; None when none was.

        The reservation picks free nodes as the ``database`` backend does
        (random start, rows locked by concurrent reservations skipped);
        each picked node is claimed in Placement's tables within the same
        transaction when Placement offers its tree
        (:mod:`~alloc_framework.objects.placement.tree_claim`), and
        passed over otherwise. Nodes passed over for anything but a
        consumer holding them (the database says free, their provider is
        missing or says otherwise: out of date) are synced once the
        transaction is over. Free nodes that concurrent reservations
        hold are waited for, as the ``database`` backend does.

        :returns: the node's UUID, or None to send the allocation through
            the API (:meth:`allocate`), which explains a failure and
            heals: Placement passed a node over, or races were lost
            every time.
        :raises: AllocationFailed when no node matches in the database
            (none would through the API, which claims only nodes free
            there), with the ``database`` backend's words.
        """
        project, user = self._consumer_ids(allocation)
        traits = sorted(set(_get(allocation, 'traits') or ()))
        owner = _get(allocation, 'owner')
        aggregate = project_aggregate(owner) if owner else None
        # Nodes free in the database that Placement did not offer: its
        # providers out of date (stale) or a consumer holding them.
        stale, held = set(), set()
        if getattr(context, 'attribute_cache', None) is None:
            context.attribute_cache = self._attribute_cache

        def also_claim(ctx, node):
            claim, reason = tree_claim.check(
                ctx, node.uuid, rc_name, traits, aggregate,
                consumer_uuid=allocation.uuid, project_id=project,
                user_id=user)
            if claim is None:
                LOG.debug('Placement does not offer node %(node)s to '
                          'allocation %(alloc)s: %(reason)s',
                          {'node': node.uuid, 'alloc': allocation.uuid,
                           'reason': reason})
                (held if reason == tree_claim.USED else stale).add(
                    node.uuid)
                return None
            return lambda: tree_claim.write(ctx, allocation.uuid, claim,
                                            project, user)

        reserve = _in_database(node_reservation.reserve_node_or_explain)
        node = None
        for attempt in range(self.busy_attempts):
            try:
                node, error = reserve(context, allocation,
                                      also_claim=also_claim)
            except _IN_DATABASE_RACES as exc:
                LOG.info('Claiming a node for allocation %(alloc)s in the '
                         'database lost every race, trying through '
                         'Placement\'s API: %(exc)s',
                         {'alloc': allocation.uuid, 'exc': exc})
                break
            if node is not None:
                LOG.debug('Node %(node)s claimed and reserved for '
                          'allocation %(alloc)s in one transaction',
                          {'node': node, 'alloc': allocation.uuid})
                break
            if stale or held:
                # Placement disagrees with the database: the API's way
                # heals and explains.
                break
            if not error.startswith(node_reservation.BUSY_ERROR):
                # No node matches in the database, so none would through
                # the API either (it claims only nodes free there).
                raise exception.AllocationFailed(error=error)
            # Free nodes locked by concurrent reservations, as the
            # database backend waits for them.
            if attempt < self.busy_attempts - 1:
                self.pause_busy(attempt)
        if stale:
            self._resync(context, sorted(stale))
        return node

    def _heal_free_nodes(self, context, allocation):
        """Bring the providers of a few free matching nodes up to date.

        :returns: whether one was out of date (or held a claim that no
            allocation stands behind) and is now right.
        """
        free = node_reservation.free_nodes(context, allocation,
                                           limit=_CHECKED_FREE_NODES)
        healed = False
        for node_uuid in sorted(free):
            if self.sync_node(context, node_uuid):
                healed = True
        return healed

    def _allocate_once(self, context, allocation, rc_name):
        """Claim and reserve a node; None when none could be."""
        tried = set()
        for batch in self._batches(allocation, rc_name):
            new = [u for u in batch if u not in tried]
            if not new:
                if _get(allocation, 'candidate_nodes'):
                    continue
                return None
            tried.update(new)
            free = node_reservation.free_nodes(context, allocation, new)
            # Placement offered nodes that the database says are not
            # free: their providers are out of date.
            self._resync(context, [u for u in new if u not in free])
            free = list(free)
            random.shuffle(free)
            while free:
                node_uuid = self._take(free)
                claimed = node = None
                try:
                    claimed = self._claim(allocation, node_uuid, rc_name,
                                          resources=batch[node_uuid],
                                          context=context)
                    if claimed:
                        node = self._reserve(context, allocation, node_uuid)
                finally:
                    self._release(node_uuid, reserved=node is not None)
                if node is not None:
                    return node
                if claimed:
                    # Claimed in Placement, not free in the database.
                    self._resync(context, [node_uuid])
        return None

    def _take(self, nodes):
        """Remove and return the next node of ``nodes`` to claim.

        Concurrent allocations of this backend get the same candidates
        from Placement (in the same order, unless Placement randomizes
        them): the first node that none of them is claiming, nor claimed
        lately (an answer read before that claim still offers it), goes
        first, so that they rarely claim the same one and lose a request
        to a 409. The others stay candidates, tried last. Each node taken
        must be given back with :meth:`_release` when its claim and
        reservation are over.
        """
        with self._claiming_lock:
            index = next((i for i, uuid in enumerate(nodes)
                          if uuid not in self._claiming
                          and uuid not in self._claimed), 0)
            node_uuid = nodes.pop(index)
            self._claiming[node_uuid] += 1
        return node_uuid

    def _release(self, node_uuid, reserved):
        """Give back a node :meth:`_take` returned, its claim over.

        A node ``reserved`` is remembered as claimed lately, so that the
        other allocations try it last.
        """
        with self._claiming_lock:
            self._claiming[node_uuid] -= 1
            if not self._claiming[node_uuid]:
                del self._claiming[node_uuid]
            if reserved:
                self._claimed[node_uuid] = None
                if len(self._claimed) > _CLAIMED_KEPT:
                    self._claimed.popitem(last=False)

    def _reserve(self, context, allocation, node_uuid):
        """Reserve the claimed node in the database; unclaim on failure."""
        try:
            node = node_reservation.reserve_node(context, allocation,
                                                 node_uuid=node_uuid)
        except Exception:
            self._unclaim(allocation)
            raise
        if node is None:
            self._unclaim(allocation)
            return None
        LOG.debug('Node %(node)s claimed and reserved for allocation '
                  '%(alloc)s', {'node': node, 'alloc': allocation.uuid})
        return node

    def backfill(self, context, allocation, node_id):
        node = objects.Node.get_by_id(context, node_id)
        if not _get(allocation, 'uuid'):
            # As the database does: adopt the deployed instance's UUID.
            allocation.uuid = (node.instance_uuid
                               or uuidutils.generate_uuid())
        rc = _get(allocation, 'resource_class') or node.resource_class
        rc_name = resource_class_name(rc or '')
        if node.resource_class != rc or node.allocation_id is not None:
            # Refused by the database checks before any claim is made.
            return node_reservation.backfill(context, allocation, node_id)
        try:
            self.sync_provider(node, in_use=True)
            claimed = self._claim(allocation, node.uuid, rc_name,
                                  resources=self.tree_claim(node))
        except _PLACEMENT_ERRORS as exc:
            raise exception.PlacementUnavailable(reason=exc)
        if not claimed:
            self.node_changed(context, node.uuid)
            raise exception.NodeAssociated(
                node=node.uuid, instance='another Placement consumer')
        try:
            return node_reservation.backfill(context, allocation, node_id)
        except Exception:
            self._unclaim(allocation)
            self.node_changed(context, node.uuid)
            raise

    def deallocate(self, context, allocation):
        node_id = _get(allocation, 'node_id')
        if not (self.claims_in_database()
                and self._deallocate_in_database(context, allocation)):
            node_reservation.release_node(context, allocation)
            self._unclaim(allocation)
        if node_id is not None:
            # Released in maintenance, or deployed: without its allocation
            # the node's unit is reserved again.
            try:
                node = objects.Node.get_by_id(context, node_id)
            except exception.NodeNotFound:
                return
            self.node_changed(context, node.uuid)

    def _deallocate_in_database(self, context, allocation):
        """Release the node and delete the claim in one transaction.

        :returns: True, or False when the claim's deletion lost a race
            every time (nothing was changed then).
        :raises: as ``node_reservation.release_node``.
        """
        try:
            _in_database(node_reservation.release_node)(
                context, allocation,
                also_release=lambda ctx: tree_claim.release(
                    ctx, allocation.uuid))
        except _IN_DATABASE_RACES as exc:
            LOG.info('Deleting the claim of allocation %(alloc)s with its '
                     'release lost every race, releasing first: %(exc)s',
                     {'alloc': allocation.uuid, 'exc': exc})
            return False
        return True

    # --- periodic --------------------------------------------------------

    @periodics.periodic(
        spacing=lambda conf: conf.placement.drift_heal_interval)
    def _heal_drift(self, manager, context):
        """Heal the drift of the nodes the hash ring gives this conductor.

        Providers left by deleted nodes go to the conductor of their UUID
        on the ring of this conductor's group: with several groups, a
        conductor of each may remove the same one, which is harmless.
        """
        if self._metrics is None:
            self._metrics = metrics.get_emitter(self.conf)
        group = manager.conf.conductor.conductor_group
        placement_drift.heal_owned(
            context, self,
            owns_node=lambda node: manager.owns(node.uuid,
                                                node.conductor_group),
            owns_provider=lambda uuid: manager.owns(uuid, group),
            metrics=self._metrics)
