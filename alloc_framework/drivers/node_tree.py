"""The resource providers of a node, as its hardware type describes them.

A node is one tree of resource providers in Placement: the root has the
node's UUID and carries one unit of the node's resource class; a hardware
type may hang children below it (one per GPU, one per NUMA cell...) with
inventories of their own. A hardware type says what the tree should be
with a :class:`Shape`; :func:`apply_shape` brings a ``ProviderTree`` (as
read from Placement) to that shape and, when a reshape runs, moves the
allocations of the node's consumers with the inventory they use.

A *move* is any change that takes inventory away from where consumers
may hold it: a class leaving a provider, a total going down, a class
renamed (a custom class given its standard name, or the node's resource
class changed), a class the node no longer has. A node in use (it has an
allocation) cannot be moved without its allocations: without them
:func:`apply_shape` raises ``ReshapeNeeded``; with them (the dict of the
reshape, keyed by consumer) it edits them in place so that each consumer
holds the same amounts in the new shape. A node that nobody uses is
simply rewritten.

Child providers get stable identities: ``<node uuid>_<suffix>`` as name
and a UUID derived from both (:func:`child_uuid`), so that the
conductor, the offline command and every re-run agree on them.
"""

import collections
import copy
import uuid

import os_resource_classes

from alloc_framework.placement_client import exception as pc_exc

# Namespace of the UUIDs of child providers (uuid5 of node UUID + suffix).
_CHILD_NAMESPACE = uuid.UUID('5b7e6a4e-2f5c-4b8e-9a53-0e7a8c1d2f60')

Child = collections.namedtuple('Child', ['suffix', 'inventories', 'traits'])
Child.__new__.__defaults__ = ((),)
Child.__doc__ = """One child provider of a node's root.

``suffix`` names it (``gpu0`` gives ``<node uuid>_gpu0``),
``inventories`` is ``{resource class: record}`` as Placement takes it,
``traits`` an iterable of trait names.
"""


class Shape:
    """What a node's providers should be.

    :param root_inventories: ``{resource class: record}`` of the root.
    :param children: :class:`Child` providers below the root, in order.
    :param renames: ``{old class: new class}``: consumers of the old class
        hold the new one after a reshape (a custom class that became
        standard, for example). The node's own resource class changing is
        found by :func:`apply_shape` itself.
    """

    def __init__(self, root_inventories, children=(), renames=None):
        self.root_inventories = dict(root_inventories)
        self.children = list(children)
        self.renames = dict(renames or {})
        suffixes = [c.suffix for c in self.children]
        if len(set(suffixes)) != len(suffixes):
            raise ValueError('child provider suffixes must be unique: %s'
                             % suffixes)


class ReshapeImpossible(pc_exc.PlacementClientError):
    """The allocations of a consumer do not fit the new shape."""


def child_uuid(node_uuid, suffix):
    """The UUID of the child provider ``suffix`` of a node."""
    return str(uuid.uuid5(_CHILD_NAMESPACE, '%s_%s' % (node_uuid, suffix)))


def child_name(node_uuid, suffix):
    """The name of the child provider ``suffix`` of a node."""
    return '%s_%s' % (node_uuid, suffix)


def inventory(total, **fields):
    """An inventory record of ``total`` units, whole units only."""
    record = {'total': total, 'reserved': 0, 'min_unit': 1,
              'max_unit': total, 'step_size': 1, 'allocation_ratio': 1.0}
    record.update(fields)
    return record


def _capacity(record):
    return int((record['total'] - record.get('reserved', 0))
               * record.get('allocation_ratio', 1.0))


def _wanted(root_uuid, shape):
    """{provider uuid: (name or None for the root, inventories, traits)}."""
    wanted = collections.OrderedDict()
    wanted[root_uuid] = (None, shape.root_inventories, None)
    for child in shape.children:
        wanted[child_uuid(root_uuid, child.suffix)] = (
            child_name(root_uuid, child.suffix), dict(child.inventories),
            set(child.traits))
    return wanted


def _renames(shape, old, new):
    """The renames of the shape plus the node class change, if any.

    :param old: ``{class: total}`` over the old tree.
    :param new: ``{class: total}`` over the new shape.
    """
    renames = {o: n for o, n in shape.renames.items() if o in old}
    dropped = [rc for rc in old if rc not in new and rc not in renames]
    added = [rc for rc in new if rc not in old
             and rc not in renames.values()]
    # One class gone and one class come with the same total: the node's
    # resource class changed (or a class was renamed) under its consumers.
    if len(dropped) == 1 and len(added) == 1 \
            and old[dropped[0]] == new[added[0]]:
        renames[dropped[0]] = added[0]
    return renames


def _totals(inventories_by_provider):
    totals = collections.Counter()
    for inventories in inventories_by_provider.values():
        for rc, record in inventories.items():
            totals[rc] += record['total']
    return totals


def find_moves(current, wanted, renames):
    """What inventory a change of shape takes away from where it was.

    :param current: ``{provider uuid: {class: record}}`` of the old tree.
    :param wanted: ``{provider uuid: {class: record}}`` of the new shape.
    :returns: a list of words, one per move (empty when nothing moves).
    """
    moves = []
    for rp_uuid, inventories in current.items():
        new = wanted.get(rp_uuid, {})
        for rc, record in sorted(inventories.items()):
            if rc in renames:
                moves.append('%s renamed %s on %s' % (rc, renames[rc],
                                                      rp_uuid))
            elif rc not in new:
                moves.append('%s leaves %s' % (rc, rp_uuid))
            elif new[rc]['total'] < record['total']:
                moves.append('%s on %s shrinks from %d to %d'
                             % (rc, rp_uuid, record['total'],
                                new[rc]['total']))
    return moves


def apply_shape(provider_tree, root_uuid, shape, allocations=None,
                in_use=False):
    """Bring the tree of ``root_uuid`` to ``shape``; move allocations.

    :param provider_tree: a ``ProviderTree`` holding the node's tree as
        Placement has it (edited in place).
    :param root_uuid: the node's UUID, the root of its tree.
    :param allocations: None, or the allocations of the reshape
        (``{consumer: {'allocations': {rp: {'resources': ...}}, ...}}``),
        edited in place.
    :param in_use: whether consumers hold the node's inventory.
    :returns: the moves, a list of words (empty when nothing moved).
    :raises: ReshapeNeeded when inventory in use would move and
        ``allocations`` is None (nothing is changed then).
    :raises: ReshapeImpossible when a consumer's allocations do not fit
        the new shape (nothing is changed then).
    """
    wanted = _wanted(root_uuid, shape)
    subtree = provider_tree.get_provider_uuids(root_uuid)
    current = {u: provider_tree.data(u).inventory for u in subtree}
    wanted_inv = {u: inv for u, (_n, inv, _t) in wanted.items()}
    renames = _renames(shape, _totals(current), _totals(wanted_inv))
    moves = find_moves(current, wanted_inv, renames)
    if moves and in_use and allocations is None:
        raise pc_exc.ReshapeNeeded(
            'the providers of node %s change shape under its consumers: %s'
            % (root_uuid, '; '.join(moves)))
    moved = []
    if allocations is not None:
        # On a copy: a consumer that does not fit leaves everything as it
        # was.
        edited = copy.deepcopy(allocations)
        moved = _move_allocations(edited, set(subtree), wanted_inv,
                                  renames)
        allocations.clear()
        allocations.update(edited)
    # The tree: the root, then the children in order; the rest goes.
    provider_tree.update_inventory(root_uuid, shape.root_inventories)
    for rp_uuid, (name, inventories, traits) in list(wanted.items())[1:]:
        if not provider_tree.exists(rp_uuid):
            provider_tree.new_child(name, root_uuid, uuid=rp_uuid)
        provider_tree.update_inventory(rp_uuid, inventories)
        provider_tree.update_traits(rp_uuid, traits)
    for rp_uuid in reversed(subtree):
        if rp_uuid not in wanted and provider_tree.exists(rp_uuid):
            provider_tree.remove(rp_uuid)
    return moved or (moves if in_use else [])


def _move_allocations(allocations, local, wanted_inv, renames):
    """Re-place each consumer's holdings of the node in the new shape.

    Every consumer's amounts of each class over the node's providers
    (after renames) are put back on the providers having the class in the
    new shape: first where the consumer held it, then in the shape's
    order, within what the new inventories leave free. A class the node
    no longer has is dropped from the consumer; an amount above what the
    new shape has of its class is cut to it (the node has less of it).

    :returns: the moves, a list of words.
    """
    free = {u: {rc: _capacity(rec) for rc, rec in inv.items()}
            for u, inv in wanted_inv.items()}
    moved = []
    # Consumers in a stable order: the same input moves the same way.
    for consumer in sorted(allocations):
        record = allocations[consumer]
        held = record.get('allocations', {})
        holdings = collections.Counter()
        before = {}
        for rp_uuid in [u for u in held if u in local]:
            resources = held[rp_uuid].get('resources', {})
            before[rp_uuid] = dict(resources)
            for rc, amount in resources.items():
                holdings[renames.get(rc, rc)] += amount
        if not before:
            continue
        placed = collections.defaultdict(dict)
        for rc, amount in sorted(holdings.items()):
            # Where it was first (renamed classes stay where they were).
            order = [u for u in before
                     if any(renames.get(old, old) == rc
                            for old in before[u])]
            order += [u for u in wanted_inv if u not in order]
            for rp_uuid in order:
                room = free.get(rp_uuid, {}).get(rc, 0)
                take = min(room, amount)
                if take > 0:
                    placed[rp_uuid][rc] = placed[rp_uuid].get(rc, 0) + take
                    free[rp_uuid][rc] -= take
                    amount -= take
                if not amount:
                    break
            if amount and any(rc in inv for inv in wanted_inv.values()):
                moved.append('consumer %s: %d %s more than the node has, '
                             'cut' % (consumer, amount, rc))
            elif amount:
                moved.append('consumer %s: %s dropped, the node has none'
                             % (consumer, rc))
        after = {u: dict(r) for u, r in placed.items()}
        if after != before:
            moved.append('consumer %s: %s -> %s'
                         % (consumer, _describe(before), _describe(after)))
        for rp_uuid in list(held):
            if rp_uuid in local:
                del held[rp_uuid]
        for rp_uuid, resources in after.items():
            held[rp_uuid] = {'resources': resources}
        if not held:
            raise ReshapeImpossible(
                'consumer %s would hold nothing after the reshape of its '
                'node' % consumer)
    return moved


def _describe(by_provider):
    return ', '.join(
        '%s on %s' % (', '.join('%s:%d' % kv for kv in sorted(r.items())),
                      u)
        for u, r in sorted(by_provider.items())) or 'nothing'


def node_class(resource_class):
    """The Placement class of a node resource class (``CUSTOM_...``)."""
    return os_resource_classes.normalize_name(resource_class)


def positive_int(value):
    """A non-negative integer from a node property, else 0."""
    if isinstance(value, bool):
        return 0
    try:
        count = int(value)
    except (TypeError, ValueError):
        return 0
    return count if count > 0 and str(count) == str(value).strip() else 0


def gpu_children(node):
    """One ``PGPU: 1`` child per GPU that ``properties['gpus']`` counts.

    Named ``<node uuid>_gpu<i>``, i from 0.
    """
    count = positive_int((node.properties or {}).get('gpus'))
    return [Child('gpu%d' % i, {os_resource_classes.PGPU: inventory(1)})
            for i in range(count)]
