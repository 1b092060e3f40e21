"""Handlers of /resource_providers and /resource_providers/{uuid}."""

from oslo_utils import timeutils
import webob.exc

from alloc_framework.api.placement import content
from alloc_framework.api.placement import errors
from alloc_framework.api.placement.handlers import helpers
from alloc_framework.api.placement import microversion
from alloc_framework.api.placement.policies import \
    resource_provider as policies
from alloc_framework.api.placement import query
from alloc_framework.api.placement import response
from alloc_framework.api.placement.schemas import resource_provider as schema
from alloc_framework.api.placement import urls
from alloc_framework.api.placement import wsgi_wrapper
from alloc_framework.objects.placement import exception
from alloc_framework.objects.placement import provider_search
from alloc_framework.objects.placement import resource_provider as rp_obj

# Relations linked from a provider and the version that added each.
_LINKS = (
    ('inventories', microversion.INITIAL),
    ('usages', microversion.INITIAL),
    ('aggregates', microversion.AGGREGATES),
    ('traits', microversion.TRAITS),
    ('allocations', microversion.ALLOCATIONS_LINK),
)


def _list_schema(want):
    """The query schema of GET /resource_providers at ``want``."""
    return microversion.newest(want, (
        (microversion.ANY_TRAITS, schema.GET_RPS_SCHEMA_1_39),
        (microversion.MULTIPLE_MEMBER_OF, schema.GET_RPS_SCHEMA_1_24),
        (microversion.REQUIRED_TRAITS, schema.GET_RPS_SCHEMA_1_18),
        (microversion.NESTED_PROVIDERS, schema.GET_RPS_SCHEMA_1_14),
        (microversion.RESOURCES_FILTER, schema.GET_RPS_SCHEMA_1_4),
        (microversion.MEMBER_OF, schema.GET_RPS_SCHEMA_1_3),
        (microversion.INITIAL, schema.GET_RPS_SCHEMA_1_0)))


def _links(req, rp):
    url = urls.resource_provider_url(req.environ, rp)
    want = microversion.request_version(req)
    links = [{'rel': 'self', 'href': url}]
    for rel, since in _LINKS:
        if want.matches(since):
            links.append({'rel': rel, 'href': '%s/%s' % (url, rel)})
    return links


def serialize_provider(req, rp):
    """The provider document at the request's microversion."""
    want = microversion.request_version(req)
    data = {
        'uuid': rp.uuid,
        'name': rp.name,
        'generation': rp.generation,
        'links': _links(req, rp),
    }
    if want.matches(microversion.NESTED_PROVIDERS):
        data['parent_provider_uuid'] = rp.parent_provider_uuid
        data['root_provider_uuid'] = rp.root_provider_uuid
    return data


@wsgi_wrapper.PlacementWsgify
@content.check_accept('application/json')
def list_resource_providers(req):
    """GET /resource_providers, filtered by the query parameters."""
    context = req.environ['placement.context']
    context.can(policies.LIST)
    want = microversion.request_version(req)
    query.validate_query_params(req, _list_schema(want))

    filters = {}
    for key in ('name', 'uuid'):
        if key in req.GET:
            filters[key] = req.GET[key]
    if 'uuid' in filters:
        filters['uuid'] = helpers.canonical_uuid(filters['uuid'])
    if 'in_tree' in req.GET:
        filters['in_tree'] = helpers.canonical_uuid(
            query.normalize_in_tree_qs_params(req.GET['in_tree']))
    if 'member_of' in req.GET:
        filters['member_of'], filters['forbidden_aggs'] = (
            query.normalize_member_of_qs_params(req))
    if 'resources' in req.GET:
        filters['resources'] = query.normalize_resources_qs_param(
            req.GET['resources'])
    if 'required' in req.GET:
        filters['required_traits'], filters['forbidden_traits'] = (
            query.normalize_traits_qs_params(
                req,
                allow_forbidden=want.matches(microversion.FORBIDDEN_TRAITS),
                allow_any_traits=want.matches(microversion.ANY_TRAITS)))
    try:
        providers = provider_search.get_all_by_filters(context, **filters)
    except exception.ResourceClassNotFound as exc:
        raise webob.exc.HTTPBadRequest(
            'Invalid resource class in resources parameter: %s' % exc)
    except exception.TraitNotFound as exc:
        raise webob.exc.HTTPBadRequest(
            'Invalid trait(s) in "required" parameter: %s' % exc)

    last_modified = None
    for rp in providers:
        last_modified = response.pick_last_modified(last_modified, rp)
    return response.send_json(
        req,
        {'resource_providers': [serialize_provider(req, rp)
                                for rp in providers]},
        last_modified=last_modified or timeutils.utcnow(with_timezone=True))


@wsgi_wrapper.PlacementWsgify
@content.require_content('application/json')
def create_resource_provider(req):
    """POST /resource_providers.

    201 with only a Location before 1.20; 200 with the provider from 1.20.
    """
    context = req.environ['placement.context']
    context.can(policies.CREATE)
    want = microversion.request_version(req)
    body_schema = (schema.POST_RP_SCHEMA_V1_14
                   if want.matches(microversion.NESTED_PROVIDERS)
                   else schema.POST_RESOURCE_PROVIDER_SCHEMA)
    data = content.extract_json(req.body, body_schema)
    uuid = helpers.canonical_uuid(data.get('uuid'))
    parent = helpers.canonical_uuid(data.get('parent_provider_uuid'))
    try:
        rp = rp_obj.create(context, data['name'], uuid=uuid,
                           parent_provider_uuid=parent)
    except exception.ResourceProviderExists as exc:
        raise webob.exc.HTTPConflict(str(exc),
                                     comment=errors.DUPLICATE_NAME)
    except exception.InvalidResourceProviderParent as exc:
        raise webob.exc.HTTPBadRequest(
            'Unable to create resource provider "%(name)s", %(uuid)s: '
            '%(error)s' % {'name': data['name'], 'uuid': uuid,
                           'error': exc})
    location = urls.resource_provider_url(req.environ, rp)
    if not want.matches(microversion.POST_PROVIDER_BODY):
        return response.no_content(
            req, status=201, location=location, cache_headers=False)
    resp = response.send_json(
        req, serialize_provider(req, rp),
        last_modified=response.pick_last_modified(None, rp))
    resp.location = location
    return resp


@wsgi_wrapper.PlacementWsgify
@content.check_accept('application/json')
def get_resource_provider(req):
    """GET /resource_providers/{uuid}."""
    context = req.environ['placement.context']
    context.can(policies.SHOW)
    rp = helpers.get_provider_or_404(
        context, urls.wsgi_path_item(req.environ, 'uuid'))
    return response.send_json(
        req, serialize_provider(req, rp),
        last_modified=response.pick_last_modified(None, rp))


@wsgi_wrapper.PlacementWsgify
@content.require_content('application/json')
def update_resource_provider(req):
    """PUT /resource_providers/{uuid}: name, and the parent from 1.14.

    Before 1.37 a parent can only be given to a root provider; from 1.37
    a provider can be moved anywhere but under itself, or made a root.
    """
    context = req.environ['placement.context']
    context.can(policies.UPDATE)
    want = microversion.request_version(req)
    uuid = urls.wsgi_path_item(req.environ, 'uuid')
    rp = helpers.get_provider_or_404(context, uuid)
    body_schema = (schema.PUT_RP_SCHEMA_V1_14
                   if want.matches(microversion.NESTED_PROVIDERS)
                   else schema.PUT_RESOURCE_PROVIDER_SCHEMA)
    data = content.extract_json(req.body, body_schema)
    kwargs = {'name': data['name'],
              'allow_reparenting': want.matches(microversion.REPARENTING)}
    if 'parent_provider_uuid' in data:
        kwargs['parent_provider_uuid'] = helpers.canonical_uuid(
            data['parent_provider_uuid'])
    try:
        rp = rp_obj.update(context, rp, **kwargs)
    except exception.ResourceProviderExists as exc:
        raise webob.exc.HTTPConflict(str(exc),
                                     comment=errors.DUPLICATE_NAME)
    except exception.InvalidResourceProviderParent as exc:
        raise webob.exc.HTTPBadRequest(
            'Unable to save resource provider %(uuid)s: %(error)s'
            % {'uuid': uuid, 'error': exc})
    except exception.ResourceProviderConcurrentUpdateDetected as exc:
        raise webob.exc.HTTPConflict(str(exc),
                                     comment=errors.CONCURRENT_UPDATE)
    except exception.ResourceProviderNotFound:
        raise webob.exc.HTTPNotFound(
            'No resource provider with uuid %s found' % uuid)
    return response.send_json(
        req, serialize_provider(req, rp),
        last_modified=response.pick_last_modified(None, rp))


@wsgi_wrapper.PlacementWsgify
def delete_resource_provider(req):
    """DELETE /resource_providers/{uuid} with its inventories and links."""
    context = req.environ['placement.context']
    context.can(policies.DELETE)
    uuid = urls.wsgi_path_item(req.environ, 'uuid')
    try:
        rp = rp_obj.get_by_uuid(context, uuid)
        rp_obj.destroy(context, rp)
    except exception.ResourceProviderNotFound:
        raise webob.exc.HTTPNotFound(
            'No resource provider with uuid %s found for delete' % uuid)
    except exception.ResourceProviderInUse as exc:
        raise webob.exc.HTTPConflict(
            'Unable to delete resource provider %(uuid)s: %(error)s'
            % {'uuid': uuid, 'error': exc},
            comment=errors.PROVIDER_IN_USE)
    except exception.CannotDeleteParentResourceProvider:
        raise webob.exc.HTTPConflict(
            'Unable to delete parent resource provider %s: It has child '
            'resource providers.' % uuid,
            comment=errors.PROVIDER_CANNOT_DELETE_PARENT)
    return response.no_content(req, cache_headers=False)
