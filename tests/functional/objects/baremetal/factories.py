"""Factories for bare metal objects in tests: nodes and allocations."""

from oslo_utils import uuidutils

from alloc_framework.common import context as af_context
from alloc_framework.objects import baremetal as objects


def admin_context():
    return af_context.get_admin_context()


def create_node(context=None, **kw):
    """Create and return a Node with sensible defaults (fake-hardware)."""
    context = context or admin_context()
    values = {'driver': 'fake-hardware', 'uuid': uuidutils.generate_uuid()}
    values.update(kw)
    node = objects.Node(context, **values)
    node.create()
    return node


def make_node(context, **kw):
    """A node free for allocation unless ``kw`` says otherwise."""
    values = {'provision_state': 'available',
              'power_state': 'power off',
              'resource_class': 'baremetal'}
    values.update(kw)
    return create_node(context, **values)


def make_allocation(context, **kw):
    values = {'resource_class': 'baremetal'}
    values.update(kw)
    allocation = objects.Allocation(context, **values)
    allocation.create()
    return allocation
