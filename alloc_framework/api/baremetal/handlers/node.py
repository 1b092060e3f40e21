"""Nodes: ``/v1/nodes``, ``/v1/nodes/detail`` and ``/v1/nodes/{node}``.

Reads come straight from the Node object; creation, updates and deletion
go through the conductor (it validates drivers and holds the node lock).
"""

from oslo_utils import uuidutils

from alloc_framework.api.baremetal import errors
from alloc_framework.api.baremetal import microversion as mv
from alloc_framework.api.baremetal import policy
from alloc_framework.api.baremetal.schemas import node as schema
from alloc_framework.api.baremetal import util
from alloc_framework.common import exception
from alloc_framework.common import states
from alloc_framework.common import utils
from alloc_framework.objects.baremetal import node as node_obj

# Every field of the node representation -> first minor version.
FIELDS = {
    'uuid': 1, 'name': mv.NAME, 'driver': 1, 'driver_info': 1,
    'driver_internal_info': 1, 'properties': 1, 'extra': 1,
    'instance_info': 1, 'instance_uuid': 1, 'power_state': 1,
    'target_power_state': 1, 'provision_state': 1,
    'target_provision_state': 1, 'provision_updated_at': 1,
    'maintenance': 1, 'maintenance_reason': 1, 'last_error': 1,
    'reservation': 1, 'console_enabled': 1, 'created_at': 1,
    'updated_at': 1, 'clean_step': mv.CLEAN_STEP,
    'resource_class': mv.RESOURCE_CLASS,
    'power_interface': mv.INTERFACES, 'deploy_interface': mv.INTERFACES,
    'management_interface': mv.INTERFACES, 'boot_interface': mv.INTERFACES,
    'traits': mv.TRAITS, 'bios_interface': mv.BIOS_INTERFACE,
    'fault': mv.FAULT, 'deploy_step': mv.DEPLOY_STEP,
    'conductor_group': mv.CONDUCTOR_GROUP,
    'automated_clean': mv.AUTOMATED_CLEAN, 'protected': mv.PROTECTED,
    'protected_reason': mv.PROTECTED, 'conductor': mv.CONDUCTOR,
    'owner': mv.OWNER, 'description': mv.DESCRIPTION,
    'allocation_uuid': mv.ALLOCATIONS, 'retired': mv.RETIRED,
    'retired_reason': mv.RETIRED, 'lessee': mv.LESSEE,
    'shard': mv.SHARDS, 'parent_node': mv.CHILD_NODES,
    'firmware_interface': mv.FIRMWARE, 'service_step': mv.SERVICE,
    'disable_power_off': mv.DISABLE_POWER_OFF,
    'instance_name': mv.INSTANCE_NAME, 'health': mv.HEALTH,
}
# What ``GET /v1/nodes`` shows without ``fields`` or ``detail``.
SUMMARY_FIELDS = ('uuid', 'name', 'instance_uuid', 'power_state',
                  'provision_state', 'maintenance')
SORT_KEYS = node_obj.SORT_KEYS

# Query filters of the listing -> first minor version.
FILTERS = {
    'instance_uuid': 1, 'associated': 1, 'maintenance': 1,
    'provision_state': mv.PROVISION_STATE_FILTER,
    'driver': mv.DRIVER_FILTER, 'resource_class': mv.RESOURCE_CLASS,
    'fault': mv.FAULT, 'conductor_group': mv.CONDUCTOR_GROUP,
    'owner': mv.OWNER, 'lessee': mv.LESSEE, 'retired': mv.RETIRED,
    'shard': mv.SHARDS, 'sharded': mv.SHARDS,
    'parent_node': mv.CHILD_NODES, 'include_children': mv.CHILD_NODES,
    'instance_name': mv.INSTANCE_NAME,
}
BOOLEAN_FILTERS = ('maintenance', 'associated', 'retired', 'sharded',
                   'include_children')


def _allocation_uuid(req, node):
    # While a node has an allocation its instance_uuid is that
    # allocation's UUID (reserving and backfilling both set it, and it
    # cannot change until the allocation goes), so listings need no
    # query per node.
    return node.instance_uuid if node.allocation_id else None


def _conductor(req, node):
    """The conductor the hash ring maps the node to (None if none)."""
    try:
        return req.rpcapi.ring.get_host_for_node(node.uuid,
                                                 node.conductor_group)
    except exception.TemporaryFailure:
        return None


def serialize(req, node, fields=None):
    """The API representation of a node for the request's version."""
    wanted = [name for name, minor in FIELDS.items()
              if req.version.check(minor)
              and (fields is None or name in fields)]
    target = policy.node_target(node)
    data = {}
    for name in wanted:
        if name == 'allocation_uuid':
            value = _allocation_uuid(req, node)
        elif name == 'console_enabled':
            value = False
        elif name == 'conductor':
            value = _conductor(req, node)
        else:
            value = getattr(node, name)
        if name == 'driver_info':
            value = util.mask_secrets(value)
            if not req.policy.check(req.context,
                                    'baremetal:node:get:driver_info',
                                    target):
                value = {}
        elif name == 'instance_info':
            value = util.mask_secrets(value)
        elif name in ('driver_internal_info', 'last_error', 'reservation'):
            rule = 'baremetal:node:get:' + name
            if not req.policy.check(req.context, rule, target):
                value = {} if name == 'driver_internal_info' else None
        data[name] = value
    data['links'] = util.links(req, 'nodes', node.uuid)
    return data


def _list(req, detail):
    req.policy.authorize(req.context, 'baremetal:node:list')
    fields = util.fields_param(req, FIELDS)
    if fields is not None and not req.version.check(mv.FIELDS):
        raise util.not_acceptable(req, 'The fields parameter')
    if detail is None:
        detail = util.query_bool(req, 'detail')
        if detail is not None and not req.version.check(mv.DETAIL_QUERY):
            raise util.not_acceptable(req, 'The detail parameter')
        if detail and fields is not None:
            raise errors.HTTPError(400, 'Can not specify ?detail=True and '
                                   'fields in the same request.',
                                   errors.INVALID_QUERY)
    elif fields is not None:
        raise errors.HTTPError(400, 'The fields parameter is not accepted '
                               'by /v1/nodes/detail.', errors.INVALID_QUERY)
    filters = _filters(req)
    limit, marker, sort_key, sort_dir = util.pagination(req, SORT_KEYS)
    if not req.policy.check(req.context, 'baremetal:node:list_all'):
        # A project sees the nodes it owns or leases.
        filters['project'] = req.context.project_id
    nodes = node_obj.Node.list(req.context, filters=filters, limit=limit,
                               marker=marker, sort_key=sort_key,
                               sort_dir=sort_dir)
    if fields is None and not detail:
        fields = SUMMARY_FIELDS
    items = [util.filter_fields(serialize(req, n, fields), fields)
             for n in nodes]
    path = 'nodes/detail' if req.path_info.rstrip('/').endswith(
        ('/detail', '/detail.json')) else 'nodes'
    return util.json_response(util.collection(req, 'nodes', items, limit,
                                              path=path))


def _filters(req):
    filters = {}
    for name, minor in FILTERS.items():
        if name not in req.GET:
            continue
        if not req.version.check(minor):
            raise util.not_acceptable(req, 'The %s filter' % name)
        if name in BOOLEAN_FILTERS:
            filters[name] = util.query_bool(req, name)
        elif name == 'shard':
            # Any of several shards, as upstream's list parameter.
            filters['shard_in'] = [s for s in req.GET[name].split(',')
                                   if s]
        elif name == 'parent_node':
            filters[name] = _parent_uuid(req, req.GET[name])
        elif name == 'instance_uuid':
            value = req.GET[name]
            if not uuidutils.is_uuid_like(value):
                raise errors.HTTPError(400, 'Invalid instance_uuid %r: '
                                       'expected a UUID.' % value,
                                       errors.INVALID_QUERY)
            filters[name] = utils.canonical_uuid(value)
        elif name == 'provision_state':
            value = req.GET[name]
            if value not in states.ALL_STATES:
                raise errors.HTTPError(
                    400, 'Invalid provision_state %r' % value,
                    errors.INVALID_QUERY)
            filters[name] = value
        elif name == 'conductor_group':
            filters[name] = req.GET[name].lower()
        else:
            filters[name] = req.GET[name]
    if 'parent_node' in filters:
        filters.pop('include_children', None)
    elif not filters.get('include_children'):
        # Child nodes are parts of other nodes, not machines to use:
        # listings leave them out unless asked for.
        filters['include_children'] = False
    return filters


def _parent_uuid(req, ident):
    """The UUID of the node ``ident`` names, for the parent_node filter.

    A name or UUID that matches no node filters on itself (and matches
    nothing), as upstream compares the value.
    """
    try:
        return util.get_node(req, ident).uuid
    except (exception.NotFound, exception.InvalidIdentity):
        return ident


def resolve_parent(req, ident, node_uuid=None):
    """The UUID of an existing node the caller may see, for parent_node.

    :param node_uuid: the UUID of the node being given a parent.
    :raises: HTTPError 400 naming the field when there is no such node,
        or when a node would be its own parent.
    """
    try:
        parent = util.get_node(req, ident, rule='baremetal:node:get')
    except (exception.NotFound, exception.InvalidIdentity):
        raise errors.HTTPError(
            400, 'Invalid value for field parent_node: node %s could not '
                 'be found.' % ident, errors.INVALID_FIELD)
    if parent.uuid == node_uuid:
        raise errors.HTTPError(
            400, 'Invalid value for field parent_node: a node can not be '
                 'its own parent.', errors.INVALID_FIELD)
    return parent.uuid


def list_nodes(req):
    return _list(req, None)


def list_nodes_detail(req):
    return _list(req, True)


def get_node(req, node_ident):
    node = util.get_node(req, node_ident, rule='baremetal:node:get')
    fields = util.fields_param(req, FIELDS)
    if fields is not None and not req.version.check(mv.FIELDS):
        raise util.not_acceptable(req, 'The fields parameter')
    return util.json_response(
        util.filter_fields(serialize(req, node, fields), fields))


def create_node(req):
    body = util.json_object(req)
    if not req.policy.check(req.context, 'baremetal:node:create'):
        # Project administrators may enroll nodes their project owns.
        req.policy.authorize(req.context,
                             'baremetal:node:create:self_owned_node')
        project = req.context.project_id
        if body.get('owner', project) != project:
            raise errors.HTTPError(
                403, 'baremetal:node:create is disallowed by policy: the '
                     'owner must be your project.', errors.POLICY_FORBIDDEN)
        body['owner'] = project
    values = schema.validate_create(req, body)
    values.update(schema.instance_name_sync(values, None))
    if values.get('parent_node'):
        values['parent_node'] = resolve_parent(req, values['parent_node'],
                                               values.get('uuid'))
    if not req.version.check(mv.ENROLL):
        # Old clients expect a node that is immediately usable.
        values['provision_state'] = states.AVAILABLE
        values['power_state'] = states.POWER_OFF
    node = node_obj.Node(req.context, **values)
    node = req.rpcapi.create_node(req.context, node)
    node = node_obj.Node.get_by_uuid(req.context, node.uuid)
    return util.json_response(
        serialize(req, node), status=201,
        headers={'Location': util.links(req, 'nodes', node.uuid)[0]['href']})


def _patch_document(node):
    return {name: getattr(node, name) for name in schema.PATCH_DOCUMENT}


def update_node(req, node_ident):
    node = util.get_node(req, node_ident, rule='baremetal:node:update')
    target = policy.node_target(node)
    patch = util.json_body(req)
    if isinstance(patch, list):
        schema.check_patch_paths(req, patch)
    doc = util.apply_patch(_patch_document(node),
                           patch if isinstance(patch, list) else None)
    changes = schema.validate_patch(req, patch, doc, node)
    changes.update(schema.instance_name_sync(changes, node))
    if changes.get('parent_node'):
        changes['parent_node'] = resolve_parent(req, changes['parent_node'],
                                                node.uuid)
        if changes['parent_node'] == node.parent_node:
            del changes['parent_node']
    for name in changes:
        rule = schema.FIELD_RULES.get(name)
        if rule:
            req.policy.authorize(req.context, rule, target)
    for name, value in changes.items():
        setattr(node, name, value)
    if node.obj_what_changed():
        node = req.rpcapi.update_node(req.context, node)
        node = node_obj.Node.get_by_uuid(req.context, node.uuid)
    return util.json_response(serialize(req, node))


def delete_node(req, node_ident):
    node = util.get_node(req, node_ident, rule='baremetal:node:get')
    target = policy.node_target(node)
    if not (node.owner and node.owner == req.context.project_id
            and req.policy.check(req.context,
                                 'baremetal:node:delete:self_owned_node',
                                 target)):
        # Project administrators may delete the nodes their project owns
        # (microversion 1.80 signals it); anyone else needs the rule.
        req.policy.authorize(req.context, 'baremetal:node:delete', target)
    # The conductor deletes the node's allocation with it.
    req.rpcapi.destroy_node(req.context, node.id)
    return util.no_content()
