"""The ``fake-hardware`` hardware type: every operation succeeds at once.

For development, tests and benchmarks: nodes of this type need no
``driver_info`` and are deployed and cleaned instantly.
"""

import os_resource_classes as orc

from alloc_framework.drivers import base
from alloc_framework.drivers import node_tree


class FakeHardware(base.HardwareType):
    """Fake hardware: works with the ``fake`` interface of every kind."""

    supported_power_interfaces = ['fake']
    supported_deploy_interfaces = ['fake']
    supported_management_interfaces = ['fake']
    supported_boot_interfaces = ['fake']
    supported_bios_interfaces = ['fake']
    supported_firmware_interfaces = ['fake']

    def provider_shape(self, node):
        """The default shape, plus NUMA cells when the node has them.

        With ``properties['numa_nodes']`` (a positive integer) and
        ``properties['cpus']`` and ``properties['memory_mb']``, the node's
        ``VCPU`` and ``MEMORY_MB`` are split over that many children named
        ``<node uuid>_numa<i>`` (i from 0); the first cells take the
        remainder of an uneven split.
        """
        shape = super().provider_shape(node)
        properties = node.properties or {}
        cells = node_tree.positive_int(properties.get('numa_nodes'))
        if not cells:
            return shape
        totals = {orc.VCPU: node_tree.positive_int(properties.get('cpus')),
                  orc.MEMORY_MB: node_tree.positive_int(
                      properties.get('memory_mb'))}
        for i in range(cells):
            inventories = {}
            for rc, total in totals.items():
                share = total // cells + (1 if i < total % cells else 0)
                if share:
                    inventories[rc] = node_tree.inventory(share)
            shape.children.append(node_tree.Child('numa%d' % i,
                                                  inventories))
        return shape
