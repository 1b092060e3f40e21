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

Allocating asks ``GET /allocation_candidates`` for one unit of the class
with the requested traits (``in_tree`` each candidate node in turn when
the allocation names candidate nodes), keeps the candidates that are
free in the database, and claims one of them, in random order, with
``PUT /allocations/{allocation UUID}`` (a new consumer). A 409 means
another allocation was first: the next candidate is tried; when none of
an answer's candidates could be claimed, Placement is asked again (its
answer leaves the claimed nodes out), at most
``[allocation]placement_claim_retries`` times. A claimed node is then
reserved in the database restricted to that node
(:func:`node_reservation.reserve_node`); when that fails the claim is
deleted before anything else happens, so a failed allocation leaves no
claim behind. Deallocating releases the node in the database, then
deletes the consumer's allocations.
"""

import random
import threading
import uuid

from keystoneauth1 import exceptions as ks_exc
import os_resource_classes
from oslo_log import log
from oslo_utils import uuidutils

from alloc_framework.common import exception
from alloc_framework.common import metrics
from alloc_framework.drivers.allocation import base
from alloc_framework.drivers.allocation import placement_client
from alloc_framework.drivers.allocation import placement_drift
from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import allocation as alloc_obj
from alloc_framework.objects.baremetal import node_reservation
from alloc_framework import periodics

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

# How many free nodes a failed allocation checks in Placement.
_CHECKED_FREE_NODES = 5


def resource_class_name(resource_class):
    """The Placement resource class of a node resource class."""
    return os_resource_classes.normalize_name(resource_class)


def project_aggregate(project_id):
    """The aggregate UUID standing for a project owning or leasing nodes."""
    return str(uuid.uuid5(_PROJECT_NAMESPACE, project_id))


def _get(obj, name):
    """``obj.name``, or None when the field was never set."""
    return getattr(obj, name) if obj.obj_attr_is_set(name) else None


def desired_provider(node, in_use=None):
    """What the provider of ``node`` should be.

    :param in_use: whether an allocation uses the node; by default,
        whether it has one.
    :returns: a dict with ``name``, ``inventories``, ``traits`` (a set)
        and ``aggregates`` (a set).
    """
    if in_use is None:
        in_use = node.allocation_id is not None
    # The database's rule of a free node (the reservation's own).
    usable = in_use or node_reservation.node_is_free(node)
    inventories = {}
    if node.resource_class:
        inventories[resource_class_name(node.resource_class)] = {
            'total': 1, 'reserved': 0 if usable else 1,
            'min_unit': 1, 'max_unit': 1, 'step_size': 1,
            'allocation_ratio': 1.0}
    return {'name': node.name or node.uuid,
            'inventories': inventories,
            'traits': set(node.traits or ()) | {NODE_TRAIT},
            'aggregates': {project_aggregate(p)
                           for p in (node.owner, node.lessee) if p}}


def _inventory_matches(current, wanted):
    if set(current) != set(wanted):
        return False
    return all(current[rc].get(key) == value
               for rc, inv in wanted.items() for key, value in inv.items())


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
        self._client_lock = threading.Lock()
        self._metrics = None

    @property
    def client(self):
        """The :class:`placement_client.PlacementClient`, built once."""
        with self._client_lock:
            if self._client is None:
                self._client = placement_client.PlacementClient(
                    placement_client.get_adapter(
                        self.conf, self.in_process_placement))
            return self._client

    # --- mirroring -------------------------------------------------------

    def node_changed(self, context, node_uuid):
        try:
            self.sync_node(context, node_uuid)
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
        try:
            node = objects.Node.get_by_uuid(context, node_uuid)
        except exception.NodeNotFound:
            return ['deleted'] if self.remove_provider(node_uuid) else []
        changed = self.sync_provider(node)
        if self._drop_stray_claims(context, node):
            changed.append('claims')
        return changed

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
        * no allocation, or one in ``error``: the claim is deleted;
        * an allocation ``active`` on another node whose claim still
          covers this node: it is claimed on its own node instead (a claim
          replaces all the allocations of its consumer).

        :returns: ``'deleted'``, ``'moved'``, or None when nothing
            changed.
        :raises: PlacementError, keystoneauth1 errors.
        """
        try:
            allocation = objects.Allocation.get_by_uuid(context, consumer)
        except exception.AllocationNotFound:
            allocation = None
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

    def sync_provider(self, node, in_use=None, dry_run=False):
        """Make the provider of ``node`` (an object) match it.

        :param dry_run: only say what differs; change nothing.
        :returns: what differed, a list of words.
        """
        for attempt in range(_SYNC_ATTEMPTS):
            try:
                return self._sync_provider(node, in_use, dry_run)
            except placement_client.PlacementError as exc:
                if (exc.code != 'placement.concurrent_update'
                        or attempt == _SYNC_ATTEMPTS - 1):
                    raise

    def _sync_provider(self, node, in_use, dry_run):
        wanted = desired_provider(node, in_use)
        client = self.client
        changed = []
        provider = client.get_provider(node.uuid)
        if provider is None:
            if dry_run:
                return ['missing']
            try:
                client.create_provider(node.uuid, wanted['name'])
            except placement_client.PlacementError as exc:
                if exc.code != 'placement.duplicate_name':
                    raise
                # Another provider (not ours) has that name.
                client.create_provider(node.uuid, node.uuid)
            changed.append('created')
        elif provider['name'] not in (wanted['name'], node.uuid):
            changed.append('name')
            if not dry_run:
                try:
                    client.rename_provider(node.uuid, wanted['name'])
                except placement_client.PlacementError as exc:
                    if exc.code != 'placement.duplicate_name':
                        raise
                    changed.remove('name')
        inventories, generation = client.get_inventories(node.uuid)
        if not _inventory_matches(inventories, wanted['inventories']):
            changed.append('inventory')
            if not dry_run:
                for name in wanted['inventories']:
                    client.ensure_resource_class(name)
                client.set_inventories(node.uuid, generation,
                                       wanted['inventories'])
        traits, generation = client.get_traits(node.uuid)
        if set(traits) != wanted['traits']:
            changed.append('traits')
            if not dry_run:
                for name in sorted(wanted['traits'] - set(traits)):
                    if name.startswith('CUSTOM_'):
                        client.ensure_trait(name)
                client.set_traits(node.uuid, generation, wanted['traits'])
        aggregates, generation = client.get_aggregates(node.uuid)
        if set(aggregates) != wanted['aggregates']:
            changed.append('aggregates')
            if not dry_run:
                client.set_aggregates(node.uuid, generation,
                                      wanted['aggregates'])
        return changed

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
        """Lists of candidate node UUIDs, as Placement answers them."""
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
                yield self.client.candidates(
                    rc_name, traits, member_of, in_tree=node_uuid)
            return
        limit = self.conf.allocation.placement_candidates_limit
        for _round in range(1 + self.conf.allocation.placement_claim_retries):
            yield self.client.candidates(rc_name, traits, member_of,
                                         limit=limit)

    def _claim(self, allocation, node_uuid, rc_name):
        """Claim the node's provider for the allocation; False on 409."""
        project, user = self._consumer_ids(allocation)
        if self.client.claim(allocation.uuid, node_uuid, rc_name, project,
                             user):
            return True
        # A claim left by an earlier attempt of this allocation (its
        # conductor died between claiming and reserving) blocks the
        # consumer: remove it and try once more.
        if self.client.delete_claim(allocation.uuid):
            LOG.info('Removed a stale claim of allocation %s',
                     allocation.uuid)
            return self.client.claim(allocation.uuid, node_uuid, rc_name,
                                     project, user)
        return False

    def claim_node(self, allocation, node):
        """Claim ``node`` (an object) for ``allocation``; False on 409."""
        return self._claim(allocation, node.uuid,
                           resource_class_name(node.resource_class))

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

    def allocate(self, context, allocation):
        rc_name = resource_class_name(allocation.resource_class)
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
                self.stop_event.wait(random.uniform(0.5, 1.5)
                                     * self.busy_pause * (attempt + 1))
        raise exception.AllocationFailed(error=error)

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
            for node_uuid in free:
                if not self._claim(allocation, node_uuid, rc_name):
                    continue
                node = self._reserve(context, allocation, node_uuid)
                if node is not None:
                    return node
                self._resync(context, [node_uuid])
        return None

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
            claimed = self._claim(allocation, node.uuid, rc_name)
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
