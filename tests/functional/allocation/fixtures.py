"""Factories for allocation tests: nodes, allocations, conductors."""

from oslo_utils import uuidutils

from alloc_framework.common import context as af_context
from alloc_framework import objects


def admin_context():
    return af_context.get_admin_context()


def make_node(context, **kw):
    """A node free for allocation unless ``kw`` says otherwise."""
    values = {'driver': 'fake-hardware',
              'provision_state': 'available',
              'power_state': 'power off',
              'resource_class': 'baremetal',
              'uuid': uuidutils.generate_uuid()}
    values.update(kw)
    node = objects.Node(context, **values)
    node.create()
    return node


def make_allocation(context, **kw):
    values = {'resource_class': 'baremetal'}
    values.update(kw)
    allocation = objects.Allocation(context, **values)
    allocation.create()
    return allocation
