"""Handlers of /allocations and /resource_providers/{uuid}/allocations.

Bodies are normalised to one shape, ``allocation.ConsumerAllocations``,
whatever the microversion (list form before 1.12, dict form after), and
written by one call of ``allocation.replace_all``: one transaction, all or
nothing.
"""

import collections

from oslo_utils import timeutils
from oslo_utils import uuidutils
import webob.exc

from alloc_framework.api.placement import content
from alloc_framework.api.placement import errors
from alloc_framework.api.placement.handlers import helpers
from alloc_framework.api.placement import microversion
from alloc_framework.api.placement.policies import allocation as policies
from alloc_framework.api.placement import response
from alloc_framework.api.placement.schemas import allocation as schema
from alloc_framework.api.placement import urls
from alloc_framework.api.placement import wsgi_wrapper
from alloc_framework.objects.placement import allocation as alloc_obj
from alloc_framework.objects.placement import consumer_type as ct_obj
from alloc_framework.objects.placement import exception


def _last_modified(allocations, want):
    if not want.matches(microversion.CACHE_HEADERS):
        return None
    last = None
    for alloc in allocations:
        last = response.pick_last_modified(last, alloc)
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
    if (allocations and consumer is not None
            and want.matches(microversion.ALLOCATIONS_DICT)):
        result['project_id'] = consumer.project.external_id
        result['user_id'] = consumer.user.external_id
        if want.matches(microversion.CONSUMER_GENERATIONS):
            result['consumer_generation'] = consumer.generation
        if want.matches(microversion.CONSUMER_TYPES):
            result['consumer_type'] = (consumer.consumer_type or
                                       ct_obj.NULL_CONSUMER_TYPE_ALIAS)
    return result


def _serialize_provider_allocations(provider, allocations, want):
    by_consumer = collections.OrderedDict()
    for alloc in allocations:
        entry = by_consumer.setdefault(alloc.consumer.uuid,
                                       {'resources': {}})
        entry['resources'][alloc.resource_class] = alloc.used
        if want.matches(microversion.CONSUMER_GENERATIONS):
            entry['consumer_generation'] = alloc.consumer.generation
    return {'allocations': by_consumer,
            'resource_provider_generation': provider.generation}


@wsgi_wrapper.PlacementWsgify
@content.check_accept('application/json')
def list_for_consumer(req):
    """GET /allocations/{consumer_uuid}: empty for an unknown consumer."""
    context = req.environ['placement.context']
    context.can(policies.ALLOC_LIST)
    consumer_uuid = urls.wsgi_path_item(req.environ, 'consumer_uuid')
    want = microversion.request_version(req)
    consumer, allocations = alloc_obj.get_all_by_consumer_id(context,
                                                             consumer_uuid)
    return response.send_json(
        req, serialize_consumer_allocations(consumer, allocations, want),
        last_modified=_last_modified(allocations, want))


@wsgi_wrapper.PlacementWsgify
@content.check_accept('application/json')
def list_for_resource_provider(req):
    """GET /resource_providers/{uuid}/allocations, keyed by consumer."""
    context = req.environ['placement.context']
    context.can(policies.RP_ALLOC_LIST)
    rp_uuid = urls.wsgi_path_item(req.environ, 'uuid')
    want = microversion.request_version(req)
    try:
        provider, allocations = alloc_obj.get_all_by_resource_provider(
            context, rp_uuid)
    except exception.ResourceProviderNotFound as exc:
        raise webob.exc.HTTPNotFound(
            "Resource provider '%(rp_uuid)s' not found: %(error)s" %
            {'rp_uuid': rp_uuid, 'error': exc})
    return response.send_json(
        req, _serialize_provider_allocations(provider, allocations, want),
        last_modified=_last_modified(allocations, want))


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


def _put_schema(want):
    """The PUT /allocations/{consumer_uuid} schema at ``want``."""
    return microversion.newest(want, (
        (microversion.CONSUMER_TYPES, schema.ALLOCATION_SCHEMA_V1_38),
        (microversion.ALLOCATION_MAPPINGS, schema.ALLOCATION_SCHEMA_V1_34),
        (microversion.CONSUMER_GENERATIONS, schema.ALLOCATION_SCHEMA_V1_28),
        (microversion.ALLOCATIONS_DICT, schema.ALLOCATION_SCHEMA_V1_12),
        (microversion.ALLOCATION_OWNER, schema.ALLOCATION_SCHEMA_V1_8),
        (microversion.INITIAL, schema.ALLOCATION_SCHEMA)))


def _post_schema(want):
    """The POST /allocations schema at ``want``."""
    return microversion.newest(want, (
        (microversion.CONSUMER_TYPES, schema.POST_ALLOCATIONS_V1_38),
        (microversion.ALLOCATION_MAPPINGS, schema.POST_ALLOCATIONS_V1_34),
        (microversion.CONSUMER_GENERATIONS, schema.POST_ALLOCATIONS_V1_28),
        (microversion.POST_ALLOCATIONS, schema.POST_ALLOCATIONS_V1_13)))


@wsgi_wrapper.PlacementWsgify
@content.require_content('application/json')
def set_allocations_for_consumer(req):
    """PUT /allocations/{consumer_uuid}: replace its allocations."""
    context = req.environ['placement.context']
    context.can(policies.ALLOC_UPDATE)
    consumer_uuid = urls.wsgi_path_item(req.environ, 'consumer_uuid')
    if not uuidutils.is_uuid_like(consumer_uuid):
        raise webob.exc.HTTPBadRequest(
            'Malformed consumer_uuid: %(consumer_uuid)s' %
            {'consumer_uuid': consumer_uuid})
    consumer_uuid = helpers.canonical_uuid(consumer_uuid)
    want = microversion.request_version(req)
    data = content.extract_json(req.body, _put_schema(want))
    allocations = data['allocations']
    if not want.matches(microversion.ALLOCATIONS_DICT):
        allocations = helpers.list_form_as_dict(allocations)
    request = helpers.consumer_request(context, consumer_uuid, data,
                                       allocations, want)
    write(context, [request], ' for consumer %s' % consumer_uuid)
    return response.no_content(req)


@wsgi_wrapper.PlacementWsgify
@microversion.version_handler(microversion.POST_ALLOCATIONS)
@content.require_content('application/json')
def set_allocations(req):
    """POST /allocations: replace the allocations of many consumers."""
    context = req.environ['placement.context']
    context.can(policies.ALLOC_MANAGE)
    want = microversion.request_version(req)
    data = content.extract_json(req.body, _post_schema(want))
    write(context, helpers.consumer_requests(context, data, want), '')
    return response.no_content(req)


@wsgi_wrapper.PlacementWsgify
def delete_allocations(req):
    """DELETE /allocations/{consumer_uuid}: 404 if it has none."""
    context = req.environ['placement.context']
    context.can(policies.ALLOC_DELETE)
    consumer_uuid = urls.wsgi_path_item(req.environ, 'consumer_uuid')
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
    return response.no_content(req)
