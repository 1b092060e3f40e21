"""Helpers shared by the Placement handlers.

Handler modules import what they share from here, never from one
another: provider lookups with the reference's 404, uuid normalisation,
and the translation of allocation bodies into
``allocation.ConsumerAllocations`` (used by POST /allocations, PUT
/allocations/{consumer_uuid} and POST /reshaper).
"""

import webob.exc

from alloc_framework.api.placement import microversion
from alloc_framework.common import utils
from alloc_framework.objects.placement import allocation as alloc_obj
from alloc_framework.objects.placement import exception
from alloc_framework.objects.placement import resource_provider as rp_obj


def canonical_uuid(value):
    """``value`` as a dashed lower-case uuid (clients may omit dashes).

    As ``common.utils.canonical_uuid``, except that None or an empty
    string (an optional uuid not given) is returned as given.
    """
    return utils.canonical_uuid(value) if value else value


def get_provider_or_404(context, uuid):
    """The provider ``uuid`` for the handlers of its sub-resources."""
    try:
        return rp_obj.get_by_uuid(context, uuid)
    except exception.ResourceProviderNotFound:
        raise webob.exc.HTTPNotFound(
            'No resource provider with uuid %s found' % uuid)


def consumer_request(context, consumer_uuid, data, allocations, want):
    """One consumer's body as an ``allocation.ConsumerAllocations``."""
    project_id = data.get('project_id')
    user_id = data.get('user_id')
    if project_id is None:
        # Before 1.8 the body carries no owner.
        project_id = context.config.placement.incomplete_consumer_project_id
        user_id = context.config.placement.incomplete_consumer_user_id
    return alloc_obj.ConsumerAllocations(
        consumer_uuid, _by_provider(allocations), project_id, user_id,
        consumer_generation=data.get('consumer_generation'),
        check_generation=want.matches(microversion.CONSUMER_GENERATIONS),
        consumer_type=data.get('consumer_type'))


def list_form_as_dict(allocations):
    """The list form (before 1.12) keyed by provider, as from 1.12.

    ``[{resource_provider: {uuid}, resources}]``: a provider named in
    several entries gets the sum of their amounts, which the capacity
    check then sees whole.
    """
    as_dict = {}
    for item in allocations:
        rp_uuid = canonical_uuid(item['resource_provider']['uuid'])
        resources = as_dict.setdefault(rp_uuid, {'resources': {}})[
            'resources']
        for rc_name, amount in item['resources'].items():
            resources[rc_name] = resources.get(rc_name, 0) + amount
    return as_dict


def _by_provider(allocations):
    """``{provider uuid: resources}`` with canonical uuids.

    :raises webob.exc.HTTPBadRequest: two keys name the same provider
        (they differ only in case or dashes).
    """
    result = {}
    for rp_uuid, entry in allocations.items():
        rp_uuid = canonical_uuid(rp_uuid)
        if rp_uuid in result:
            raise webob.exc.HTTPBadRequest(
                'Resource provider %(uuid)s is given more than once.' %
                {'uuid': rp_uuid})
        result[rp_uuid] = dict(entry['resources'])
    return result


def consumer_requests(context, data, want):
    """POST-shaped ``{consumer uuid: body}`` as a list of requests.

    :raises webob.exc.HTTPBadRequest: two keys name the same consumer
        (they differ only in case or dashes).
    """
    requests = {}
    for c_uuid, body in sorted(data.items()):
        consumer_uuid = canonical_uuid(c_uuid)
        if consumer_uuid in requests:
            raise webob.exc.HTTPBadRequest(
                'Consumer %(uuid)s is given more than once.' %
                {'uuid': consumer_uuid})
        requests[consumer_uuid] = consumer_request(
            context, consumer_uuid, body, body['allocations'], want)
    return list(requests.values())
