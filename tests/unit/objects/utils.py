"""Factories for bare metal objects in tests."""

from oslo_utils import uuidutils

from alloc_framework.common import context as af_context
from alloc_framework import objects


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
