"""Allocations: ``/v1/allocations`` and ``/v1/nodes/{node}/allocation``.

Creation and deletion go to a conductor (it processes the allocation and
releases nodes); reads and the name/extra PATCH use the object directly.
A project without ``baremetal:allocation:list_all`` sees only the
allocations it owns, and one without ``create_restricted`` creates
allocations owned by its project.
"""

from oslo_utils import uuidutils

from alloc_framework.api.baremetal import errors
from alloc_framework.api.baremetal import microversion as mv
from alloc_framework.api.baremetal import notify
from alloc_framework.api.baremetal import policy
from alloc_framework.api.baremetal.schemas import allocation as schema
from alloc_framework.api.baremetal import util
from alloc_framework.common import exception
from alloc_framework.common import utils
from alloc_framework.objects.baremetal import allocation as allocation_obj
from alloc_framework.objects.baremetal import node as node_obj
from alloc_framework.objects.baremetal import node_reservation
from alloc_framework.objects.baremetal import trait as trait_obj

Allocation = allocation_obj.Allocation

# Fields of the representation -> first minor version.
FIELDS = {
    'uuid': 1, 'name': 1, 'node_uuid': 1, 'state': 1, 'last_error': 1,
    'resource_class': 1, 'traits': 1, 'candidate_nodes': 1, 'extra': 1,
    'owner': mv.ALLOCATION_OWNER, 'created_at': 1, 'updated_at': 1,
}
SORT_KEYS = ('id', 'uuid', 'name', 'state', 'resource_class',
             'created_at', 'updated_at')


def _require_api(req):
    """Before 1.52 allocations do not exist.

    As upstream's allocations controller: a read of a resource that does
    not exist yet is a 404, any other method a 405.
    """
    if req.version.check(mv.ALLOCATIONS):
        return
    if req.method in ('GET', 'HEAD'):
        raise util.resource_not_found()
    raise errors.HTTPError(
        405, 'The API version %s does not allow allocations (1.%d or newer '
             'is required).' % (req.version, mv.ALLOCATIONS),
        errors.METHOD_NOT_ALLOWED, headers={'Allow': 'GET'})


def serialize(req, allocation, fields=None, node_uuid=None):
    data = {}
    for name, minor in FIELDS.items():
        if not req.version.check(minor):
            continue
        if fields is not None and name not in fields:
            continue
        if name == 'node_uuid':
            value = node_uuid
            if value is None and allocation.obj_attr_is_set('node_uuid'):
                value = allocation.node_uuid
            elif value is None and allocation.node_id:
                try:
                    value = node_obj.Node.get_by_id(
                        req.context, allocation.node_id).uuid
                except exception.NodeNotFound:
                    value = None
        elif name == 'traits':
            value = list(allocation.traits or [])
        elif name == 'extra':
            value = allocation.extra or {}
        else:
            value = getattr(allocation, name)
        data[name] = value
    data['links'] = util.links(req, 'allocations', allocation.uuid)
    return data


def _fetch(req, ident, rule, fields=None):
    """The allocation, or 404 also when the caller may not see it.

    :param fields: the fields of the response, when it has only those:
        then only they are read (see ``Allocation.get_by_name``).
    """
    allocation = util.get_allocation(req, ident, fields=fields)
    if not req.policy.check(req.context, rule,
                            policy.allocation_target(allocation)):
        # Do not reveal that allocations of other projects exist.
        if req.policy.check(req.context, 'baremetal:allocation:get',
                            policy.allocation_target(allocation)):
            req.policy.authorize(req.context, rule,
                                 policy.allocation_target(allocation))
        raise exception.AllocationNotFound(allocation=ident)
    return allocation


def _fields(req):
    return util.fields_param(req, FIELDS)


# --- reading -----------------------------------------------------------------

def list_allocations(req):
    _require_api(req)
    req.policy.authorize(req.context, 'baremetal:allocation:list')
    fields = _fields(req)
    filters = {}
    state = req.GET.get('state')
    if state is not None:
        # As upstream, any string filters: a state no allocation can be
        # in matches nothing (and is not sent to the database, which may
        # refuse some strings, such as ones with NUL, with an error).
        filters['state'] = state
    resource_class = req.GET.get('resource_class')
    if resource_class is not None:
        if not resource_class or len(resource_class) > 80:
            raise errors.HTTPError(
                400, 'Invalid resource_class %r: expected 1 to 80 '
                     'characters.' % resource_class, errors.INVALID_QUERY)
        filters['resource_class'] = resource_class
    node_ident = req.GET.get('node')
    if node_ident is not None:
        filters['node_id'] = _node_for(req, node_ident, 'node').id
    owner = req.GET.get('owner')
    if owner is not None:
        if not req.version.check(mv.ALLOCATION_OWNER):
            raise util.not_acceptable(req, 'The owner filter')
        filters['owner'] = owner
    if not req.policy.check(req.context, 'baremetal:allocation:list_all'):
        project = req.context.project_id
        if owner is not None and owner != project:
            raise errors.HTTPError(
                403, 'baremetal:allocation:list_all is disallowed by '
                     'policy: you may only list allocations of your '
                     'project.', errors.POLICY_FORBIDDEN)
        filters['owner'] = project
    limit, marker, sort_key, sort_dir = util.pagination(req, SORT_KEYS)
    if marker is not None:
        try:
            Allocation.get_by_uuid(req.context, marker)
        except exception.AllocationNotFound:
            raise errors.HTTPError(400, 'Invalid marker %s: no such '
                                   'allocation.' % marker,
                                   errors.INVALID_QUERY)
    if state is not None and state not in allocation_obj.STATES:
        allocations = []
    else:
        allocations = Allocation.list(
            req.context, filters=filters, limit=limit, marker=marker,
            sort_key=sort_key, sort_dir=sort_dir)
    items = [util.filter_fields(serialize(req, a, fields), fields)
             for a in allocations]
    return util.json_response(util.collection(req, 'allocations', items,
                                              limit))


def get_allocation(req, allocation_ident):
    _require_api(req)
    try:
        fields = _fields(req)
    except errors.HTTPError:
        # As upstream: an allocation that is not there (or not visible)
        # answers 404 before a bad ``fields`` answers 400 or 406.
        _fetch(req, allocation_ident, 'baremetal:allocation:get')
        raise
    # Clients poll with ``fields=state``: read no more than they ask.
    allocation = _fetch(req, allocation_ident, 'baremetal:allocation:get',
                        fields=fields)
    return util.json_response(
        util.filter_fields(serialize(req, allocation, fields), fields))


def _node_allocation(req, node_ident, rule):
    # Unlike /v1/allocations, upstream answers 404 here before 1.52
    # whatever the method.
    if not req.version.check(mv.ALLOCATIONS):
        raise util.resource_not_found()
    node = util.get_node(req, node_ident)
    if not node.allocation_id:
        if node.instance_uuid:
            raise errors.HTTPError(
                400, 'Node %s has instance_uuid %s that does not belong to '
                     'an allocation.' % (node.uuid, node.instance_uuid),
                errors.NODE_ALLOCATION_MISMATCH)
        raise exception.AllocationNotFound(
            allocation='of node %s' % node.uuid)
    try:
        allocation = Allocation.get_by_id(req.context, node.allocation_id)
    except exception.AllocationNotFound:
        raise exception.AllocationNotFound(
            allocation='of node %s' % node.uuid)
    if not req.policy.check(req.context, rule,
                            policy.allocation_target(allocation)):
        raise exception.AllocationNotFound(
            allocation='of node %s' % node.uuid)
    return node, allocation


def get_node_allocation(req, node_ident):
    node, allocation = _node_allocation(req, node_ident,
                                        'baremetal:allocation:get')
    fields = _fields(req)
    return util.json_response(util.filter_fields(
        serialize(req, allocation, fields, node_uuid=node.uuid), fields))


# --- creation ----------------------------------------------------------------

def _node_for(req, ident, field):
    """A node named in a body or query; unknown -> 400 naming ``field``."""
    try:
        node = util.get_node(req, ident)
    except (exception.NodeNotFound, exception.InvalidIdentity):
        node = None
    # A node the caller may not see does not exist for it.
    if node is None or not req.policy.check(
            req.context, 'baremetal:node:get', policy.node_target(node)):
        raise errors.HTTPError(
            400, 'Invalid %s: node %s could not be found.' % (field, ident),
            errors.INVALID_FIELD)
    return node


def candidate_uuids(req, idents):
    """UUIDs of the candidate nodes (names resolved), in request order.

    One query for all of them: a request may name many nodes.

    :raises: 400 naming ``candidate_nodes`` for the first node that is
        unknown, invisible to the caller or not a node identity at all.
    """
    uuids, names = [], []
    # How each identity is looked up in ``found``; parsing a UUID costs,
    # so each is parsed once.
    keys = {}
    for ident in idents:
        if ident in keys:
            continue
        if uuidutils.is_uuid_like(ident):
            keys[ident] = utils.canonical_uuid(ident)
            uuids.append(keys[ident])
        elif utils.is_valid_logical_name(ident):
            names.append(ident)
            keys[ident] = ident
        else:
            keys[ident] = None
    found = node_obj.Node.identities(req.context, uuids=uuids, names=names)
    # The policy decides on owner and lessee only: ask once per pair, not
    # once per node (a request may name many nodes of few projects).
    visible = {}

    def _visible(row):
        key = (row.owner, row.lessee)
        if key not in visible:
            visible[key] = req.policy.check(
                req.context, 'baremetal:node:get', policy.node_target(row))
        return visible[key]

    result = []
    for ident in idents:
        row = found.get(keys[ident])
        if row is None or not _visible(row):
            raise errors.HTTPError(
                400, 'Invalid candidate_nodes: node %s could not be found.'
                % ident, errors.INVALID_FIELD)
        if row.uuid not in result:
            result.append(row.uuid)
    return result


def check_owner(req, body, rule='baremetal:allocation:create_restricted'):
    """The owner of what ``body`` creates: callers without ``rule`` (the
    resource's create_restricted) create for their own project."""
    if req.policy.check(req.context, rule):
        return body.get('owner')
    project = req.context.project_id
    owner = body.get('owner')
    if owner is not None and owner != project:
        raise errors.HTTPError(
            403, '%s is disallowed by policy: the owner must be your '
                 'project.' % rule,
            errors.POLICY_FORBIDDEN)
    return project


def _backfill(req, body, values):
    """Check that the request matches the node it backfills.

    Everything is checked before anything is written, so a refused
    backfill leaves nothing behind.
    """
    node = _node_for(req, body['node'], 'node')
    if node.allocation_id:
        raise exception.NodeAssociated(node=node.uuid,
                                       instance=node.instance_uuid)
    rc = values.get('resource_class')
    if rc is None:
        values['resource_class'] = node.resource_class
    elif rc != node.resource_class:
        raise errors.HTTPError(
            400, 'Invalid resource_class %s: node %s has resource class '
                 '%s.' % (rc, node.uuid, node.resource_class),
            errors.INVALID_FIELD)
    missing = set(values.get('traits') or ()) - set(node.traits or ())
    if missing:
        raise errors.HTTPError(
            400, 'Invalid traits: node %s does not have %s.'
            % (node.uuid, ', '.join(sorted(missing))), errors.INVALID_FIELD)
    candidates = values.get('candidate_nodes')
    if candidates and node.uuid not in candidates:
        raise errors.HTTPError(
            400, 'Invalid candidate_nodes: node %s is not one of them.'
            % node.uuid, errors.INVALID_FIELD)
    if node.instance_uuid:
        if values.get('uuid') is None:
            values['uuid'] = node.instance_uuid
        elif values['uuid'] != node.instance_uuid:
            raise errors.HTTPError(
                400, 'Invalid uuid %s: node %s has instance_uuid %s.'
                % (values['uuid'], node.uuid, node.instance_uuid),
                errors.INVALID_FIELD)
    values['node_id'] = node.id
    return node


def create_allocation(req):
    _require_api(req)
    req.policy.authorize(req.context, 'baremetal:allocation:create')
    body = schema.validate_post(req, util.json_object(req))
    values = {'resource_class': body.get('resource_class'),
              'name': body.get('name'),
              'extra': body.get('extra') or {},
              'uuid': body.get('uuid')}
    owner = check_owner(req, body)
    if req.version.check(mv.ALLOCATION_OWNER) or owner is not None:
        values['owner'] = owner
    if body.get('traits'):
        values['traits'] = trait_obj.validate_traits(body['traits'])
    if body.get('candidate_nodes'):
        values['candidate_nodes'] = candidate_uuids(
            req, body['candidate_nodes'])
    node = None
    if body.get('node') is not None:
        node = _backfill(req, body, values)
    node_uuid = node.uuid if node else None
    # The UUID is fixed before the conductor is asked: the notifications
    # name it, and a creation sent again to another conductor is never
    # made twice. A UUID generated here is new, which the RPC client tells
    # the conductor: it skips the check that no node carries it as
    # instance_uuid.
    generated = values['uuid'] is None
    if generated:
        values['uuid'] = uuidutils.generate_uuid()
    allocation = Allocation(req.context, **{k: v for k, v in values.items()
                                            if v is not None})
    notify.start(req, allocation, 'create', node_uuid)
    with notify.on_error(req, allocation, 'create', node_uuid):
        # The conductor returns the allocation as created (``allocating``,
        # or ``active`` for a backfill); a client polls for the outcome.
        allocation = req.rpcapi.create_allocation(
            req.context, allocation, generated_uuid=generated)
    notify.end(req, allocation, 'create', node_uuid)
    return util.json_response(
        serialize(req, allocation, node_uuid=node_uuid),
        status=201,
        headers={'Location': util.links(req, 'allocations',
                                        allocation.uuid)[0]['href']})


# --- changes -----------------------------------------------------------------

def update_allocation(req, allocation_ident):
    # Before 1.52 too: upstream answers any method but GET with 405 there.
    if not req.version.check(mv.ALLOCATION_UPDATE):
        raise errors.HTTPError(
            405, 'Updating allocations needs API version 1.57 or newer.',
            errors.METHOD_NOT_ALLOWED, headers={'Allow': 'DELETE, GET'})
    allocation = _fetch(req, allocation_ident, 'baremetal:allocation:update')
    patch = util.json_body(req)
    if isinstance(patch, list):
        schema.validate_patch_paths([op for op in patch
                                     if isinstance(op, dict)
                                     and isinstance(op.get('path'), str)])
    doc = {'name': allocation.name, 'extra': allocation.extra or {}}
    doc = util.apply_patch(doc, patch if isinstance(patch, list) else None)
    doc.setdefault('name', None)
    doc.setdefault('extra', {})
    schema.validate_patched(doc)
    for name in schema.PATCHABLE:
        if doc[name] != getattr(allocation, name):
            setattr(allocation, name, doc[name])
    notify.start(req, allocation, 'update')
    with notify.on_error(req, allocation, 'update'):
        allocation.save(req.context)
    notify.end(req, allocation, 'update')
    return util.json_response(serialize(req, allocation))


def retry_allocation(req, allocation_ident):
    """``POST /v1/allocations/{ident}/retry``: process a failed one again.

    An extension of ours, at every version that has allocations. The
    allocation keeps its UUID and name; the answer is 202 with it in
    state ``allocating`` (a client polls for the outcome as after a
    creation). Any state but ``error`` is a 409
    ``baremetal.allocation_not_retryable``.
    """
    _require_api(req)
    allocation = _fetch(req, allocation_ident, 'baremetal:allocation:retry')
    if allocation.state not in allocation_obj.RETRYABLE:
        # Early, to spare a conductor call; the conductor decides again
        # with a compare-and-swap on the state.
        raise exception.AllocationNotRetryable(allocation=allocation.uuid,
                                               state=allocation.state)
    notify.start(req, allocation, 'update')
    with notify.on_error(req, allocation, 'update'):
        allocation = req.rpcapi.retry_allocation(req.context, allocation)
    notify.end(req, allocation, 'update')
    return util.json_response(
        serialize(req, allocation), status=202,
        headers={'Location': util.links(req, 'allocations',
                                        allocation.uuid)[0]['href']})


def _destroy(req, allocation):
    node = None
    if allocation.node_id:
        try:
            node = node_obj.Node.get_by_id(req.context, allocation.node_id)
        except exception.NodeNotFound:
            node = None
    node_uuid = node.uuid if node else None
    notify.start(req, allocation, 'delete', node_uuid)
    with notify.on_error(req, allocation, 'delete', node_uuid):
        if node is not None:
            # Early, without the node lock, to spare a conductor call; the
            # conductor decides again under the lock (a refusal is an
            # error of the deletion either way).
            node_reservation.verify_node_for_deallocation(node,
                                                          allocation.uuid)
        req.rpcapi.destroy_allocation(req.context, allocation)
    notify.end(req, allocation, 'delete', node_uuid)
    return util.no_content()


def delete_allocation(req, allocation_ident):
    _require_api(req)
    allocation = _fetch(req, allocation_ident, 'baremetal:allocation:delete')
    return _destroy(req, allocation)


def delete_node_allocation(req, node_ident):
    _node, allocation = _node_allocation(req, node_ident,
                                         'baremetal:allocation:delete')
    return _destroy(req, allocation)
