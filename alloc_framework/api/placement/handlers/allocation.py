"""Handlers of /allocations and /resource_providers/{uuid}/allocations.

Bodies are normalised to one shape, ``allocation.ConsumerAllocations``,
whatever the microversion (list form before 1.12, dict form after), and
written by one call of ``allocation.replace_all``: one transaction, all or
nothing.
"""

import collections
import uuid

from oslo_utils import timeutils
from oslo_utils import uuidutils
import webob.exc

from alloc_framework.api.placement import errors
from alloc_framework.api.placement import microversion
from alloc_framework.api.placement.policies import allocation as policies
from alloc_framework.api.placement.schemas import allocation as schema
from alloc_framework.api.placement import util
from alloc_framework.api.placement import wsgi_wrapper
from alloc_framework.objects.placement import allocation as alloc_obj
from alloc_framework.objects.placement import consumer_type as ct_obj
from alloc_framework.objects.placement import exception


def _canonical(value):
    """A uuid in its dashed lower-case form (bodies may omit dashes)."""
    return str(uuid.UUID(value))


def _want(req):
    return req.environ[microversion.MICROVERSION_ENVIRON]


def _last_modified(allocations, want):
    if not want.matches((1, 15)):
        return None
    last = None
    for alloc in allocations:
        last = util.pick_last_modified(last, alloc)
    return last or timeutils.utcnow(with_timezone=True)


def serialize_consumer_allocations(consumer, allocations, want):
    """The body of GET /allocations/{uuid} (the shape PUT accepts)."""
    by_rp = collections.OrderedDict()
    for alloc in allocations:
        entry = by_rp.setdefault(alloc.resource_provider.uuid, {
            'generation': alloc.resource_provider.generation,
            'resources': {}})
        entry['resources'][alloc.resource_class] = alloc.used
    result = {'allocations': by_rp}
    if allocations and consumer is not None and want.matches((1, 12)):
        result['project_id'] = consumer.project.external_id
        result['user_id'] = consumer.user.external_id
        if want.matches((1, 28)):
            result['consumer_generation'] = consumer.generation
        if want.matches((1, 38)):
            result['consumer_type'] = (consumer.consumer_type or
                                       ct_obj.NULL_CONSUMER_TYPE_ALIAS)
    return result


def _serialize_provider_allocations(provider, allocations, want):
    by_consumer = collections.OrderedDict()
    for alloc in allocations:
        entry = by_consumer.setdefault(alloc.consumer.uuid,
                                       {'resources': {}})
        entry['resources'][alloc.resource_class] = alloc.used
        if want.matches((1, 28)):
            entry['consumer_generation'] = alloc.consumer.generation
    return {'allocations': by_consumer,
            'resource_provider_generation': provider.generation}


@wsgi_wrapper.PlacementWsgify
@util.check_accept('application/json')
def list_for_consumer(req):
    """GET /allocations/{consumer_uuid}: empty for an unknown consumer."""
    context = req.environ['placement.context']
    context.can(policies.ALLOC_LIST)
    consumer_uuid = util.wsgi_path_item(req.environ, 'consumer_uuid')
    want = _want(req)
    consumer, allocations = alloc_obj.get_all_by_consumer_id(context,
                                                             consumer_uuid)
    return util.send_json(
        req, serialize_consumer_allocations(consumer, allocations, want),
        last_modified=_last_modified(allocations, want))


@wsgi_wrapper.PlacementWsgify
@util.check_accept('application/json')
def list_for_resource_provider(req):
    """GET /resource_providers/{uuid}/allocations, keyed by consumer."""
    context = req.environ['placement.context']
    context.can(policies.RP_ALLOC_LIST)
    rp_uuid = util.wsgi_path_item(req.environ, 'uuid')
    want = _want(req)
    try:
        provider, allocations = alloc_obj.get_all_by_resource_provider(
            context, rp_uuid)
    except exception.ResourceProviderNotFound as exc:
        raise webob.exc.HTTPNotFound(
            "Resource provider '%(rp_uuid)s' not found: %(error)s" %
            {'rp_uuid': rp_uuid, 'error': exc})
    return util.send_json(
        req, _serialize_provider_allocations(provider, allocations, want),
        last_modified=_last_modified(allocations, want))


def _list_form_as_dict(allocations):
    """The list form (before 1.12) keyed by provider, as from 1.12.

    ``[{resource_provider: {uuid}, resources}]``: a provider named in
    several entries gets the sum of their amounts, which the capacity
    check then sees whole.
    """
    as_dict = {}
    for item in allocations:
        rp_uuid = _canonical(item['resource_provider']['uuid'])
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
        rp_uuid = _canonical(rp_uuid)
        if rp_uuid in result:
            raise webob.exc.HTTPBadRequest(
                'Resource provider %(uuid)s is given more than once.' %
                {'uuid': rp_uuid})
        result[rp_uuid] = dict(entry['resources'])
    return result


def _consumer_request(context, consumer_uuid, data, allocations, want):
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
        check_generation=want.matches((1, 28)),
        consumer_type=data.get('consumer_type'))


def write(context, requests, what):
    """Write ``requests`` with one call, mapping domain errors to HTTP.

    :param what: how the error messages name the write.
    """
    retries = context.config.placement.allocation_conflict_retry_count
    try:
        alloc_obj.replace_all(context, requests, retries=retries)
    except exception.ResourceProviderNotFound as exc:
        # Upstream names the first unknown provider only.
        missing = exc.kwargs.get('uuids') or ['']
        raise webob.exc.HTTPBadRequest(
            "Allocation for resource provider '%(uuid)s' that does not "
            "exist." % {'uuid': missing[0]},
            comment=errors.RESOURCE_PROVIDER_NOT_FOUND)
    except exception.ResourceClassNotFound as exc:
        raise webob.exc.HTTPBadRequest(
            'Unable to allocate inventory%(what)s: %(error)s' %
            {'what': what, 'error': exc})
    except exception.InvalidInventory as exc:
        # Missing inventory, capacity exceeded, min/max/step violated.
        raise webob.exc.HTTPConflict(
            'Unable to allocate inventory: %(error)s' % {'error': exc})
    except exception.ConsumerGenerationConflict as exc:
        # The client's fault, not a race: upstream sends it unprefixed.
        raise webob.exc.HTTPConflict(str(exc),
                                     comment=errors.CONCURRENT_UPDATE)
    except exception.ConcurrentUpdateDetected as exc:
        raise webob.exc.HTTPConflict(
            'Inventory and/or allocations changed while attempting to '
            'allocate: %(error)s' % {'error': exc},
            comment=errors.CONCURRENT_UPDATE)


def _set_allocations_for_consumer(req, want_schema):
    context = req.environ['placement.context']
    context.can(policies.ALLOC_UPDATE)
    consumer_uuid = util.wsgi_path_item(req.environ, 'consumer_uuid')
    if not uuidutils.is_uuid_like(consumer_uuid):
        raise webob.exc.HTTPBadRequest(
            'Malformed consumer_uuid: %(consumer_uuid)s' %
            {'consumer_uuid': consumer_uuid})
    consumer_uuid = _canonical(consumer_uuid)
    want = _want(req)
    data = util.extract_json(req.body, want_schema)
    allocations = data['allocations']
    if not want.matches((1, 12)):
        allocations = _list_form_as_dict(allocations)
    request = _consumer_request(context, consumer_uuid, data, allocations,
                                want)
    write(context, [request], ' for consumer %s' % consumer_uuid)
    return util.no_content(req)


@wsgi_wrapper.PlacementWsgify
@microversion.version_handler('1.0', '1.7')
@util.require_content('application/json')
def set_allocations_for_consumer(req):
    """PUT /allocations/{consumer_uuid}: replace its allocations."""
    return _set_allocations_for_consumer(req, schema.ALLOCATION_SCHEMA)


@wsgi_wrapper.PlacementWsgify  # noqa: F811
@microversion.version_handler('1.8', '1.11')
@util.require_content('application/json')
def set_allocations_for_consumer(req):  # noqa: F811
    return _set_allocations_for_consumer(req, schema.ALLOCATION_SCHEMA_V1_8)


@wsgi_wrapper.PlacementWsgify  # noqa: F811
@microversion.version_handler('1.12', '1.27')
@util.require_content('application/json')
def set_allocations_for_consumer(req):  # noqa: F811
    return _set_allocations_for_consumer(req, schema.ALLOCATION_SCHEMA_V1_12)


@wsgi_wrapper.PlacementWsgify  # noqa: F811
@microversion.version_handler('1.28', '1.33')
@util.require_content('application/json')
def set_allocations_for_consumer(req):  # noqa: F811
    return _set_allocations_for_consumer(req, schema.ALLOCATION_SCHEMA_V1_28)


@wsgi_wrapper.PlacementWsgify  # noqa: F811
@microversion.version_handler('1.34', '1.37')
@util.require_content('application/json')
def set_allocations_for_consumer(req):  # noqa: F811
    return _set_allocations_for_consumer(req, schema.ALLOCATION_SCHEMA_V1_34)


@wsgi_wrapper.PlacementWsgify  # noqa: F811
@microversion.version_handler('1.38')
@util.require_content('application/json')
def set_allocations_for_consumer(req):  # noqa: F811
    return _set_allocations_for_consumer(req, schema.ALLOCATION_SCHEMA_V1_38)


def post_schema(want):
    """The POST /allocations schema of the request's microversion."""
    if want.matches((1, 38)):
        return schema.POST_ALLOCATIONS_V1_38
    if want.matches((1, 34)):
        return schema.POST_ALLOCATIONS_V1_34
    if want.matches((1, 28)):
        return schema.POST_ALLOCATIONS_V1_28
    return schema.POST_ALLOCATIONS_V1_13


def consumer_requests(context, data, want):
    """POST-shaped ``{consumer uuid: body}`` as a list of requests.

    :raises webob.exc.HTTPBadRequest: two keys name the same consumer
        (they differ only in case or dashes).
    """
    requests = {}
    for c_uuid, body in sorted(data.items()):
        consumer_uuid = _canonical(c_uuid)
        if consumer_uuid in requests:
            raise webob.exc.HTTPBadRequest(
                'Consumer %(uuid)s is given more than once.' %
                {'uuid': consumer_uuid})
        requests[consumer_uuid] = _consumer_request(
            context, consumer_uuid, body, body['allocations'], want)
    return list(requests.values())


@wsgi_wrapper.PlacementWsgify
@microversion.version_handler('1.13')
@util.require_content('application/json')
def set_allocations(req):
    """POST /allocations: replace the allocations of many consumers."""
    context = req.environ['placement.context']
    context.can(policies.ALLOC_MANAGE)
    want = _want(req)
    data = util.extract_json(req.body, post_schema(want))
    write(context, consumer_requests(context, data, want), '')
    return util.no_content(req)


@wsgi_wrapper.PlacementWsgify
def delete_allocations(req):
    """DELETE /allocations/{consumer_uuid}: 404 if it has none."""
    context = req.environ['placement.context']
    context.can(policies.ALLOC_DELETE)
    consumer_uuid = util.wsgi_path_item(req.environ, 'consumer_uuid')
    retries = context.config.placement.allocation_conflict_retry_count
    try:
        alloc_obj.delete_all(context, consumer_uuid, retries=retries)
    except exception.ConsumerNotFound:
        raise webob.exc.HTTPNotFound(
            "No allocations for consumer '%(consumer_uuid)s'" %
            {'consumer_uuid': consumer_uuid})
    except exception.ConcurrentUpdateDetected as exc:
        raise webob.exc.HTTPConflict(
            'Allocations changed while attempting to delete: %(error)s' %
            {'error': exc}, comment=errors.CONCURRENT_UPDATE)
    return util.no_content(req)
