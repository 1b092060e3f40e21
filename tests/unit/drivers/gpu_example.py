"""A hardware type that writes ``update_provider_tree`` itself, for GPUs.

The plugin guide (``doc/source/plugin-authors.rst``) shows this class: a
plugin whose earlier release counted a node's GPUs as ``PGPU: N`` on the
node's root provider, and whose new release gives each GPU a child
provider. Most plugins override ``provider_shape`` instead and let
``node_tree.apply_shape`` do this work; a plugin writes its own
``update_provider_tree`` when its tree cannot be said with a ``Shape``,
and must then keep the contract this one keeps.
``test_gpu_example.py`` checks it.
"""

import os_resource_classes as orc

from alloc_framework.drivers import base
from alloc_framework.drivers import node_tree
from alloc_framework.placement_client import exception


class GPUHardware(base.HardwareType):
    """One ``PGPU: 1`` child provider per GPU of ``properties['gpus']``."""

    def update_provider_tree(self, provider_tree, nodename,
                             allocations=None, node=None):
        count = node_tree.positive_int(node.properties.get('gpus'))
        gpus = [node_tree.child_uuid(nodename, 'gpu%d' % i)
                for i in range(count)]
        root = dict(provider_tree.data(nodename).inventory)
        moves = []
        if orc.PGPU in root:
            # The earlier release's shape. Consumers of the node may hold
            # the GPUs on the root: without their allocations, moving the
            # inventory would strand them, so ask for a reshape.
            if node.allocation_id is not None and allocations is None:
                raise exception.ReshapeNeeded(
                    'the GPUs of node %s move to child providers' % nodename)
            del root[orc.PGPU]
            provider_tree.update_inventory(nodename, root)
            moves.append('PGPU leaves %s' % nodename)
        for i, rp_uuid in enumerate(gpus):
            if not provider_tree.exists(rp_uuid):
                provider_tree.new_child(
                    node_tree.child_name(nodename, 'gpu%d' % i), nodename,
                    uuid=rp_uuid)
            provider_tree.update_inventory(
                rp_uuid, {orc.PGPU: node_tree.inventory(1)})
        if allocations:
            moves += self._move_gpu_allocations(nodename, gpus, allocations)
        return moves

    @staticmethod
    def _move_gpu_allocations(nodename, gpus, allocations):
        """Give each GPU a consumer held on the root a child of its own.

        ``allocations`` is edited in place, as the contract asks; every
        other field of a record (project, user, consumer generation) is
        left as it is, so that the reshape is refused if the consumer
        changed meanwhile.
        """
        taken = {rp for record in allocations.values()
                 for rp in record['allocations'] if rp in gpus}
        free = [rp for rp in gpus if rp not in taken]
        moves = []
        for consumer, record in sorted(allocations.items()):
            on_root = record['allocations'].get(nodename)
            wanted = (on_root or {}).get('resources', {}).pop(orc.PGPU, 0)
            if not wanted:
                continue
            if wanted > len(free):
                raise node_tree.ReshapeImpossible(
                    'consumer %s holds %d GPUs of node %s; %d are free'
                    % (consumer, wanted, nodename, len(free)))
            if not on_root['resources']:
                del record['allocations'][nodename]
            for rp_uuid in free[:wanted]:
                record['allocations'][rp_uuid] = {
                    'resources': {orc.PGPU: 1}}
            del free[:wanted]
            moves.append('consumer %s: %d PGPU to child providers'
                         % (consumer, wanted))
        return moves
