"""Drift between nodes and their resource providers, found and healed.

The ``placement`` backend keeps Placement in step with the nodes as they
change, but a Placement outage, a change written behind the conductor's
back or a process killed at the wrong moment leave differences behind.
:func:`find` lists them, :func:`heal` repairs them
(``alloc-manage placement drift [--heal]``), and :func:`heal_owned` does
both for the nodes a conductor owns (the conductor's periodic task,
every ``[placement]drift_heal_interval`` seconds):

========================  =============================================
kind                      healed by
========================  =============================================
``missing provider``      creating the node's provider
``stale provider``        updating its name, inventory, traits,
                          aggregates
``orphan provider``       deleting a provider of this backend (it has
                          the backend's ``node_trait``) whose node is
                          gone, with the claims against it
``orphan claim``          deleting a claim on a node's provider that is
                          not the node's active allocation (claims of
                          allocations still in progress are left alone)
``missing claim``         claiming the node for its active allocation
``over capacity``         nothing: reported only. A node's provider
                          whose usage exceeds its capacity (its
                          inventory shrank under its consumers, which
                          Placement accepts); it heals when they go
========================  =============================================

A stale provider whose hardware type moves inventory that consumers hold
(``ReshapeNeeded``) is reported with ``reshape`` among its differences;
it is healed only at conductor start or by ``alloc-manage placement
migrate-compute-inventory``, which move the allocations with the
inventory in one ``POST /reshaper``. The periodic logs it as an error
saying so.

Providers without the marker trait (those of other services sharing the
Placement) are never looked at.

Whether a node's providers are missing or stale is decided by one rule,
:func:`provider_drift` (``PlacementBackend.compare_tree``): :func:`find`
applies it to each tree read over Placement's API, the dashboard's drift
list (``/dashboard/trouble/drift``) to the trees of a page of nodes read
from the database in bulk (:func:`providers_drift`, :func:`tree_of`).

Healing works on what is true when it heals, not on what :func:`find`
saw: the node, its allocation and the claim are read again first, and a
difference that is gone meanwhile is left alone. So healing races
safely with the conductors' own work; in particular a claim is deleted
only when, read after the claim was seen, no allocation stands behind
it (see ``PlacementBackend.heal_claim``): an allocation is created before
it claims its node, so the claim of an allocation being made is never
taken for drift.
"""

import collections
import time

from keystoneauth1 import exceptions as ks_exc
from oslo_log import log

from alloc_framework.common import exception
from alloc_framework.drivers.allocation import placement_client
from alloc_framework.drivers import node_tree
from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import allocation as alloc_obj
from alloc_framework.placement_client import exception as pc_exc
from alloc_framework.placement_client import provider_tree as pt

LOG = log.getLogger(__name__)

MISSING_PROVIDER = 'missing provider'
STALE_PROVIDER = 'stale provider'
ORPHAN_PROVIDER = 'orphan provider'
ORPHAN_CLAIM = 'orphan claim'
MISSING_CLAIM = 'missing claim'
OVER_CAPACITY = 'over capacity'

# The order healing follows: a node's stray claim goes before the claim
# of its allocation is made, and providers exist before claims on them.
KINDS = (MISSING_PROVIDER, STALE_PROVIDER, ORPHAN_PROVIDER, ORPHAN_CLAIM,
         MISSING_CLAIM, OVER_CAPACITY)

Drift = collections.namedtuple('Drift', ['kind', 'provider', 'detail',
                                         'node', 'consumer'])
"""One difference: its kind, the provider (node) UUID, what differs, and
the node object and consumer UUID when they matter for healing."""


def find(context, backend, node_filter=None, provider_filter=None):
    """Every difference between the nodes and Placement.

    :param backend: a ``placement.PlacementBackend``.
    :param node_filter: when given, only the nodes (objects) for which it
        returns True are looked at.
    :param provider_filter: when given, only the providers without a node
        whose UUID it returns True for are reported as orphans.
    :returns: a list of :class:`Drift`, in :data:`KINDS` order.
    :raises: PlacementError, keystoneauth1 errors.
    """
    client = backend.client
    # Providers first: a node created after this read has no provider in
    # it and is at worst reported missing (healing checks again), never
    # its fresh provider reported an orphan.
    providers = {rp['uuid']: rp for rp in client.list_providers(
        required=backend.node_trait)}
    nodes = {n.uuid: n for n in objects.Node.list(context)}
    allocations = objects.Allocation.list(context)
    active = {a.node_id: a for a in allocations
              if a.state == alloc_obj.ACTIVE and a.node_id is not None}
    in_progress = {a.uuid for a in allocations
                   if a.state == alloc_obj.ALLOCATING}
    orphans = {u: rp for u, rp in providers.items()
               if u not in nodes
               and (provider_filter is None or provider_filter(u))}
    if node_filter is not None:
        nodes = {u: n for u, n in nodes.items() if node_filter(n)}
    found = []
    for node_uuid, node in sorted(nodes.items()):
        allocation = active.get(node.id)
        if node_uuid not in providers:
            found.append(provider_drift(backend, node, None))
            if allocation is not None:
                found.append(_missing_claim(node, allocation))
            continue
        drift = provider_drift(backend, node, backend.placement_tree(node))
        if drift is not None:
            found.append(drift)
        consumers = client.provider_allocations(node_uuid)
        for consumer in sorted(consumers):
            if allocation is not None and consumer == allocation.uuid:
                continue
            if consumer in in_progress:
                continue
            found.append(Drift(ORPHAN_CLAIM, node_uuid,
                               'consumer %s claims node %s without an '
                               'allocation' % (consumer, _name(node)),
                               node, consumer))
        if allocation is not None and allocation.uuid not in consumers:
            found.append(_missing_claim(node, allocation))
        if consumers:
            found.extend(_over_capacity(client, node, consumers))
    for rp_uuid, rp in sorted(orphans.items()):
        found.append(Drift(ORPHAN_PROVIDER, rp_uuid,
                           'provider %s (%s) has no node'
                           % (rp_uuid, rp['name']), None, None))
    return sorted(found, key=lambda d: KINDS.index(d.kind))


def provider_drift(backend, node, tree):
    """The ``missing provider`` or ``stale provider`` finding of a node.

    The rule :func:`find` applies to the tree it reads over Placement's
    API, and the dashboard's drift list to the trees it reads from the
    database (:func:`tree_of`): one rule, the same findings.

    :param backend: a ``placement.PlacementBackend`` (its
        ``compare_tree``; nothing is read or written).
    :param node: a ``Node`` object.
    :param tree: a ``ProviderTree`` holding the node's tree, or None when
        the node has no provider (with the backend's ``node_trait``).
    :returns: a :class:`Drift`, or None when the providers are right.
    """
    if tree is None:
        return Drift(MISSING_PROVIDER, node.uuid,
                     'node %s has no provider' % _name(node), node, None)
    differs = backend.compare_tree(node, tree).differs
    if not differs:
        return None
    return Drift(STALE_PROVIDER, node.uuid,
                 'the provider of node %s differs in: %s'
                 % (_name(node), ', '.join(differs)), node, None)


def providers_drift(backend, nodes, trees):
    """:func:`provider_drift` of each of ``nodes``, in their order.

    :param trees: ``{node uuid: [provider]}`` of the nodes that have a
        provider, each provider a dict as :func:`tree_of` takes (what
        ``objects.baremetal.dashboard_queries.node_provider_trees``
        reads from the database).
    :returns: a list of :class:`Drift`.
    """
    found = []
    for node in nodes:
        providers = trees.get(node.uuid)
        drift = provider_drift(backend, node, None if providers is None
                               else tree_of(providers))
        if drift is not None:
            found.append(drift)
    return found


def tree_of(providers):
    """A ``ProviderTree`` of one tree's providers read from elsewhere than
    Placement's API (the database), as the report client builds it.

    :param providers: dicts with ``uuid``, ``name``, ``generation``,
        ``parent_provider_uuid`` (None for the root), ``inventories``
        (``{class: {total, reserved, min_unit, max_unit, step_size,
        allocation_ratio}}``), ``traits`` and ``aggregates`` (iterables).
    """
    tree = pt.ProviderTree()
    tree.populate_from_iterable(providers)
    for provider in providers:
        tree.update_inventory(provider['uuid'], provider['inventories'])
        tree.update_traits(provider['uuid'], set(provider['traits']))
        tree.update_aggregates(provider['uuid'],
                               set(provider['aggregates']))
    return tree


def _over_capacity(client, node, consumers):
    """The classes of the node's root used beyond their capacity."""
    used = collections.Counter()
    for resources in consumers.values():
        used.update(resources)
    inventories, _generation = client.get_inventories(node.uuid)
    found = []
    for rc, amount in sorted(used.items()):
        record = inventories.get(rc)
        capacity = 0 if record is None else int(
            (record['total'] - record.get('reserved', 0))
            * record.get('allocation_ratio', 1.0))
        if amount > capacity:
            found.append(Drift(
                OVER_CAPACITY, node.uuid,
                'the provider of node %s uses %d %s of a capacity of %d'
                % (_name(node), amount, rc, capacity), node, None))
    return found


def _name(node):
    return ('%s (%s)' % (node.uuid, node.name) if node.name
            else node.uuid)


def _missing_claim(node, allocation):
    return Drift(MISSING_CLAIM, node.uuid,
                 'allocation %s of node %s has no claim'
                 % (allocation.uuid, _name(node)), node, allocation.uuid)


def heal(context, backend, drifts):
    """Repair ``drifts`` (from :func:`find`), one at a time.

    :returns: a list of (drift, None when healed, else the error).
    """
    results = []
    for drift in drifts:
        try:
            _heal_one(context, backend, drift)
        except Exception as exc:
            results.append((drift, exc))
        else:
            results.append((drift, None))
    return results


def _heal_one(context, backend, drift, startup=False):
    """Repair one difference as things are now.

    :param startup: the conductor is starting: a provider needing a
        reshape is reshaped (see ``PlacementBackend.sync_provider``).

    :returns: False when the difference was gone meanwhile.
    """
    client = backend.client
    try:
        node = objects.Node.get_by_uuid(context, drift.provider)
    except exception.NodeNotFound:
        node = None
    if drift.kind in (MISSING_PROVIDER, STALE_PROVIDER, ORPHAN_PROVIDER):
        # The node as it is now, or its absence, decides.
        if node is None:
            return backend.remove_provider(drift.provider)
        return bool(backend.sync_provider(node, startup=startup))
    if node is None:
        # Deleted meanwhile: its provider is an orphan, for the next run.
        return False
    if drift.kind == OVER_CAPACITY:
        # Placement's own state, unless the node's provider was stale
        # (healed before, in KINDS order): it heals as consumers go.
        still = _over_capacity(client, node,
                               client.provider_allocations(node.uuid))
        if still:
            raise RuntimeError('%s; it heals as its consumers go or its '
                               'inventory grows' % still[0].detail)
        return False
    if drift.kind == ORPHAN_CLAIM:
        return backend.heal_claim(context, drift.consumer, node) is not None
    if drift.kind == MISSING_CLAIM:
        try:
            allocation = objects.Allocation.get_by_uuid(context,
                                                        drift.consumer)
        except exception.AllocationNotFound:
            return False
        if (allocation.state != alloc_obj.ACTIVE
                or allocation.node_id != node.id
                or node.uuid in client.get_claim(allocation.uuid)):
            return False
        backend.sync_provider(node, in_use=True)
        if not backend.claim_node(allocation, node):
            raise RuntimeError('Placement refused to claim node %s for '
                               'allocation %s: another consumer uses it'
                               % (drift.provider, drift.consumer))
        return True
    raise ValueError(drift.kind)


# Errors meaning that Placement is unusable right now.
_PLACEMENT_ERRORS = (placement_client.PlacementError,
                     pc_exc.PlacementClientError, ks_exc.ClientException)


def heal_owned(context, backend, owns_node, owns_provider, metrics=None,
               startup=False):
    """Find and heal the drift of the nodes one conductor owns.

    With ``startup`` (the conductor is starting), providers whose hardware
    type needs a reshape are reshaped, and a reshape that fails raises
    ``ReshapeAtStartFailed``: the conductor does not start. Otherwise a
    needed reshape is logged as an error saying how to do it.

    Nodes whose lock is held are skipped: the conductor working on one
    mirrors it when it releases the lock. What is healed is logged at
    INFO, what could not be at WARNING; a Placement that cannot be
    reached is logged and tried again at the next run.

    :param owns_node: ``owns_node(node)``, whether the conductor heals
        that node (its hash ring's answer).
    :param owns_provider: ``owns_provider(uuid)``, whether it removes
        that provider when its node is gone.
    :param metrics: a ``MetricsEmitter``: the run's duration is sent as
        the timer ``PlacementDrift.heal``, and the gauges
        ``PlacementDriftFoundCount``, ``PlacementDriftHealedCount`` and
        ``PlacementDriftFailedCount``.
    :returns: the list of (drift, error) of :func:`heal`.
    """
    def node_filter(node):
        return not node.reservation and owns_node(node)

    start = time.monotonic()
    try:
        drifts = find(context, backend, node_filter=node_filter,
                      provider_filter=owns_provider)
    except _PLACEMENT_ERRORS as exc:
        LOG.warning('Could not check the drift between nodes and Placement:'
                    ' %s', exc)
        return []
    results = []
    for drift in drifts:
        try:
            healed = _heal_one(context, backend, drift, startup=startup)
        except pc_exc.ReshapeNeeded as exc:
            LOG.error('The resource providers of node %(node)s need a '
                      'reshape, which runs only when its conductor starts '
                      'or with "alloc-manage placement '
                      'migrate-compute-inventory --node %(node)s": '
                      '%(error)s', {'node': drift.provider, 'error': exc})
            results.append((drift, exc))
            continue
        except (pc_exc.ReshapeFailed, node_tree.ReshapeImpossible) as exc:
            if startup and drift.kind == STALE_PROVIDER:
                raise exception.ReshapeAtStartFailed(node=drift.provider,
                                                     error=exc)
            LOG.warning('Could not heal %(kind)s: %(detail)s: %(error)s',
                        {'kind': drift.kind, 'detail': drift.detail,
                         'error': exc})
            results.append((drift, exc))
            continue
        except Exception as exc:
            LOG.warning('Could not heal %(kind)s: %(detail)s: %(error)s',
                        {'kind': drift.kind, 'detail': drift.detail,
                         'error': exc})
            results.append((drift, exc))
            continue
        if healed:
            LOG.info('Healed %(kind)s: %(detail)s',
                     {'kind': drift.kind, 'detail': drift.detail})
        else:
            LOG.debug('Not healing %(kind)s, gone meanwhile: %(detail)s',
                      {'kind': drift.kind, 'detail': drift.detail})
        results.append((drift, None))
    if metrics is not None:
        metrics.send_timer('PlacementDrift.heal',
                           (time.monotonic() - start) * 1000)
        failed = sum(1 for _drift, error in results if error is not None)
        metrics.send_gauge('PlacementDriftFoundCount', len(results))
        metrics.send_gauge('PlacementDriftHealedCount',
                           len(results) - failed)
        metrics.send_gauge('PlacementDriftFailedCount', failed)
    return results
