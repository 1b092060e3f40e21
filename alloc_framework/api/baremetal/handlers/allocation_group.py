"""Allocation groups: ``/v1/allocation_groups`` (an extension of ours).

Not an upstream resource, so not tied to a microversion: available at
every version. Creation and deletion go to a conductor, which reserves
every member's nodes or none (see ``conductor.allocation_groups``); reads
use the object. A project without ``baremetal:allocation_group:list_all``
sees only its groups; one without ``create_restricted`` creates groups
owned by its project.
"""

from alloc_framework.api.baremetal import errors
from alloc_framework.api.baremetal.handlers import allocation as alloc_api
from alloc_framework.api.baremetal.schemas import allocation_group as schema
from alloc_framework.api.baremetal import util
from alloc_framework.common import exception
from alloc_framework.objects.baremetal import allocation_group as group_obj
from alloc_framework.objects.baremetal import trait as trait_obj

AllocationGroup = group_obj.AllocationGroup

FIELDS = ('uuid', 'name', 'owner', 'state', 'last_error', 'members',
          'spread', 'allocations', 'created_at', 'updated_at')
COLLECTION = 'allocation_groups'


def serialize(req, group):
    data = {name: getattr(group, name) for name in FIELDS}
    data['spread'] = group.spread or None
    data['allocations'] = list(group.allocations or [])
    data['links'] = util.links(req, COLLECTION, group.uuid)
    return data


def _target(group):
    return {'allocation.owner': group.owner}


def _fetch(req, ident, rule):
    """The group, or 404 also when the caller may not see it."""
    group = AllocationGroup.get(req.context, ident)
    if not req.policy.check(req.context, rule, _target(group)):
        if req.policy.check(req.context, 'baremetal:allocation_group:get',
                            _target(group)):
            req.policy.authorize(req.context, rule, _target(group))
        raise exception.AllocationGroupNotFound(group=ident)
    return group


def list_groups(req):
    req.policy.authorize(req.context, 'baremetal:allocation_group:list')
    filters = {}
    state = req.GET.get('state')
    if state is not None:
        if state not in group_obj.STATES:
            raise errors.HTTPError(
                400, 'Invalid state %r: expected one of %s.'
                % (state, ', '.join(group_obj.STATES)), errors.INVALID_QUERY)
        filters['state'] = state
    owner = req.GET.get('owner')
    if owner is not None:
        filters['owner'] = owner
    if not req.policy.check(req.context,
                            'baremetal:allocation_group:list_all'):
        project = req.context.project_id
        if owner is not None and owner != project:
            raise errors.HTTPError(
                403, 'baremetal:allocation_group:list_all is disallowed by '
                     'policy: you may only list allocation groups of your '
                     'project.', errors.POLICY_FORBIDDEN)
        filters['owner'] = project
    limit, marker, sort_key, sort_dir = util.pagination(
        req, group_obj.SORT_KEYS)
    try:
        groups = AllocationGroup.list(
            req.context, filters=filters, limit=limit, marker=marker,
            sort_key=sort_key, sort_dir=sort_dir)
    except exception.AllocationGroupNotFound:
        raise errors.HTTPError(400, 'Invalid marker %s: no such allocation '
                               'group.' % marker, errors.INVALID_QUERY)
    items = [serialize(req, group) for group in groups]
    return util.json_response(util.collection(req, COLLECTION, items,
                                              limit))


def get_group(req, group_ident):
    group = _fetch(req, group_ident, 'baremetal:allocation_group:get')
    return util.json_response(serialize(req, group))


def _members(req, members):
    """The members with traits checked and candidate nodes as UUIDs."""
    result = []
    for index, member in enumerate(members):
        field = 'members/%d/' % index
        value = {'count': member['count'],
                 'resource_class': member['resource_class'],
                 'traits': [], 'candidate_nodes': None}
        try:
            value['traits'] = trait_obj.validate_traits(
                member.get('traits') or [])
        except exception.InvalidTrait as exc:
            raise errors.HTTPError(
                400, 'Invalid allocation group field %straits: %s'
                % (field, exc), errors.INVALID_FIELD)
        if member.get('candidate_nodes'):
            try:
                value['candidate_nodes'] = alloc_api.candidate_uuids(
                    req, member['candidate_nodes'])
            except errors.HTTPError as exc:
                raise errors.HTTPError(
                    exc.status, 'Invalid allocation group field %s%s'
                    % (field, exc.message[len('Invalid '):]), exc.code)
        result.append(value)
    return result


def create_group(req):
    req.policy.authorize(req.context, 'baremetal:allocation_group:create')
    body = schema.validate_post(util.json_object(req),
                                req.conf.allocation.max_group_size)
    values = {'members': _members(req, body['members']),
              'owner': alloc_api.check_owner(
                  req, body,
                  'baremetal:allocation_group:create_restricted'),
              'name': body.get('name'),
              'spread': body.get('spread') or None}
    if body.get('uuid'):
        values['uuid'] = body['uuid']
    group = AllocationGroup(req.context, **values)
    group = req.rpcapi.create_allocation_group(req.context, group)
    return util.json_response(
        serialize(req, group), status=201,
        headers={'Location': util.links(req, COLLECTION,
                                        group.uuid)[0]['href']})


def delete_group(req, group_ident):
    group = _fetch(req, group_ident, 'baremetal:allocation_group:delete')
    req.rpcapi.destroy_allocation_group(req.context, group)
    return util.no_content()
