"""Drift between nodes and their resource providers, found and healed.

The ``placement`` backend keeps Placement in step with the nodes as they
change, but a Placement outage, a change written behind the conductor's
back or a process killed at the wrong moment leave differences behind.
:func:`find` lists them, :func:`heal` repairs them
(``alloc-manage placement drift [--heal]``):

========================  =============================================
kind                      healed by
========================  =============================================
``missing provider``      creating the node's provider
``stale provider``        updating its name, inventory, traits,
                          aggregates
``orphan provider``       deleting a provider of this backend (it has
                          :data:`~placement.NODE_TRAIT`) whose node is
                          gone, with the claims against it
``orphan claim``          deleting a claim on a node's provider that is
                          not the node's active allocation (claims of
                          allocations still in progress are left alone)
``missing claim``         claiming the node for its active allocation
========================  =============================================

Providers without the marker trait (those of other services sharing the
Placement) are never looked at.
"""

import collections

from alloc_framework.drivers.allocation import placement
from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import allocation as alloc_obj

MISSING_PROVIDER = 'missing provider'
STALE_PROVIDER = 'stale provider'
ORPHAN_PROVIDER = 'orphan provider'
ORPHAN_CLAIM = 'orphan claim'
MISSING_CLAIM = 'missing claim'

# The order healing follows: a node's stray claim goes before the claim
# of its allocation is made, and providers exist before claims on them.
KINDS = (MISSING_PROVIDER, STALE_PROVIDER, ORPHAN_PROVIDER, ORPHAN_CLAIM,
         MISSING_CLAIM)

Drift = collections.namedtuple('Drift', ['kind', 'provider', 'detail',
                                         'node', 'consumer'])
"""One difference: its kind, the provider (node) UUID, what differs, and
the node object and consumer UUID when they matter for healing."""


def find(context, backend):
    """Every difference between the nodes and Placement.

    :param backend: a :class:`placement.PlacementBackend`.
    :returns: a list of :class:`Drift`, in :data:`KINDS` order.
    :raises: PlacementError, keystoneauth1 errors.
    """
    client = backend.client
    nodes = {n.uuid: n for n in objects.Node.list(context)}
    allocations = objects.Allocation.list(context)
    active = {a.node_id: a for a in allocations
              if a.state == alloc_obj.ACTIVE and a.node_id is not None}
    in_progress = {a.uuid for a in allocations
                   if a.state == alloc_obj.ALLOCATING}
    providers = {rp['uuid']: rp for rp in client.list_providers(
        required=placement.NODE_TRAIT)}
    found = []
    for node_uuid, node in sorted(nodes.items()):
        allocation = active.get(node.id)
        if node_uuid not in providers:
            found.append(Drift(MISSING_PROVIDER, node_uuid,
                               'node %s has no provider' % _name(node),
                               node, None))
            if allocation is not None:
                found.append(_missing_claim(node, allocation))
            continue
        differs = backend.sync_provider(node, dry_run=True)
        if differs:
            found.append(Drift(STALE_PROVIDER, node_uuid,
                               'the provider of node %s differs in: %s'
                               % (_name(node), ', '.join(differs)),
                               node, None))
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
    for rp_uuid, rp in sorted(providers.items()):
        if rp_uuid not in nodes:
            found.append(Drift(ORPHAN_PROVIDER, rp_uuid,
                               'provider %s (%s) has no node'
                               % (rp_uuid, rp['name']), None, None))
    return sorted(found, key=lambda d: KINDS.index(d.kind))


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


def _heal_one(context, backend, drift):
    client = backend.client
    if drift.kind in (MISSING_PROVIDER, STALE_PROVIDER):
        backend.sync_provider(drift.node)
    elif drift.kind == ORPHAN_PROVIDER:
        backend.remove_provider(drift.provider)
    elif drift.kind == ORPHAN_CLAIM:
        client.delete_claim(drift.consumer)
    elif drift.kind == MISSING_CLAIM:
        allocation = objects.Allocation.get_by_uuid(context, drift.consumer)
        backend.sync_provider(drift.node, in_use=True)
        if not backend.claim_node(allocation, drift.node):
            raise RuntimeError('Placement refused to claim node %s for '
                               'allocation %s: another consumer uses it'
                               % (drift.provider, drift.consumer))
