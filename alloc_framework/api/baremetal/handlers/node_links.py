"""Shards, child nodes and hardware inventory (microversions 1.81-1.84).

``GET /v1/shards`` counts nodes per shard; ``GET /v1/nodes/{node}/children``
lists the UUIDs of the nodes whose ``parent_node`` is that node;
``GET /v1/nodes/{node}/inventory`` and ``POST /v1/continue_inspection``
belong to in-band inspection, which this service does not run: no node
ever has an inventory recorded and no node ever waits for inspection
data, so they answer upstream's 404s (see doc/source/baremetal-api.rst).
Below their microversion these resources do not exist (404).
"""

from alloc_framework.api.baremetal import errors
from alloc_framework.api.baremetal import microversion as mv
from alloc_framework.api.baremetal import util
from alloc_framework.common import exception
from alloc_framework.objects.baremetal import node as node_obj


def _require(req, minor):
    if not req.version.check(minor):
        raise util.resource_not_found()


def list_shards(req):
    _require(req, mv.SHARDS)
    req.policy.authorize(req.context, 'baremetal:shards:get')
    return util.json_response(
        {'shards': node_obj.Node.shard_counts(req.context)})


def list_children(req, node_ident):
    _require(req, mv.CHILD_NODES)
    node = util.get_node(req, node_ident, rule='baremetal:node:get')
    filters = {'parent_node': node.uuid}
    if not req.policy.check(req.context, 'baremetal:node:list_all'):
        # A project sees the children it owns or leases.
        filters['project'] = req.context.project_id
    children = node_obj.Node.list(req.context, filters=filters)
    return util.json_response({
        'children': [child.uuid for child in children],
        'links': [{'href': '%s/v1/nodes?parent_node=%s'
                           % (util.base_url(req), node.uuid),
                   'rel': 'children'}],
    })


def get_inventory(req, node_ident):
    _require(req, mv.NODE_INVENTORY)
    node = util.get_node(req, node_ident,
                         rule='baremetal:node:inventory:get')
    # Inventories are recorded by in-band inspection only.
    raise exception.NodeInventoryNotFound(node=node.uuid)


def _check_inspection_data(body):
    inventory = body.get('inventory')
    if not isinstance(inventory, dict):
        raise errors.HTTPError(400, 'Invalid inspection data: the '
                               '"inventory" object is required.',
                               errors.INVALID_FIELD)
    interfaces = inventory.get('interfaces')
    if (not isinstance(interfaces, list) or not interfaces
            or not all(isinstance(i, dict)
                       and isinstance(i.get('mac_address'), str)
                       for i in interfaces)):
        raise errors.HTTPError(
            400, 'Invalid inspection data: inventory.interfaces must be a '
                 'non-empty list of objects with a mac_address.',
            errors.INVALID_FIELD)
    for field in ('bmc_address', 'bmc_v6address'):
        if field in inventory and not isinstance(inventory[field], str):
            raise errors.HTTPError(400, 'Invalid inspection data: '
                                   'inventory.%s must be a string.' % field,
                                   errors.INVALID_FIELD)


def continue_inspection(req):
    if not req.version.check(mv.CONTINUE_INSPECTION):
        raise errors.HTTPError(
            404, 'API version 1.%d or newer is required'
            % mv.CONTINUE_INSPECTION, errors.NOT_FOUND)
    _check_inspection_data(util.json_object(req))
    # The look-up matches nodes waiting for inspection data; no node
    # ever waits here. Upstream answers every failed look-up alike.
    raise exception.NotFound()
