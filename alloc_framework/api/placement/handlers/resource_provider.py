"""Handlers of /resource_providers and /resource_providers/{uuid}."""

from oslo_utils import timeutils
import webob.exc

from alloc_framework.api.placement import content
from alloc_framework.api.placement import errors
from alloc_framework.api.placement.handlers import helpers
from alloc_framework.api.placement import microversion
from alloc_framework.api.placement.policies import resource_provider as \
    policies
from alloc_framework.api.placement import query
from alloc_framework.api.placement import response
from alloc_framework.api.placement.schemas import resource_provider as \
    schema
from alloc_framework.api.placement import urls
from alloc_framework.api.placement import wsgi_wrapper
from alloc_framework.objects.placement import exception
from alloc_framework.objects.placement import research_context
from alloc_framework.objects.placement import resource_provider as rp_obj

# Relations linked from a provider and the version that added each.
_LINKS = (
    ('inventories', (1, 0)),
    ('usages', (1, 0)),
    ('aggregates', (1, 1)),
    ('traits', (1, 6)),
    ('allocations', (1, 11)),
)


# Query schemas of GET /resource_providers, newest first.
_LIST_SCHEMAS = (
    ((1, 39), schema.GET_RPS_SCHEMA_1_39),
    ((1, 24), schema.GET_RPS_SCHEMA_1_24),
    ((1, 18), schema.GET_RPS_SCHEMA_1_18),
    ((1, 14), schema.GET_RPS_SCHEMA_1_14),
    ((1, 4), schema.GET_RPS_SCHEMA_1_4),
    ((1, 3), schema.GET_RPS_SCHEMA_1_3),
    ((1, 0), schema.GET_RPS_SCHEMA_1_0),
)


def _version(req):
    return req.environ[microversion.MICROVERSION_ENVIRON]


def _links(environ, rp):
    url = urls.resource_provider_url(environ, rp)
    want = environ[microversion.MICROVERSION_ENVIRON]
    links = [{'rel': 'self', 'href': url}]
    for rel, since in _LINKS:
        if want.matches(since):
            links.append({'rel': rel, 'href': '%s/%s' % (url, rel)})
    return links


def serialize_provider(environ, rp):
    """The provider document at the request's microversion."""
    data = {
        'uuid': rp.uuid,
        'name': rp.name,
        'generation': rp.generation,
        'links': _links(environ, rp),
    }
    if environ[microversion.MICROVERSION_ENVIRON].matches((1, 14)):
        data['parent_provider_uuid'] = rp.parent_provider_uuid
        data['root_provider_uuid'] = rp.root_provider_uuid
    return data


@wsgi_wrapper.PlacementWsgify
@content.check_accept('application/json')
def list_resource_providers(req):
    """GET /resource_providers, filtered by the query parameters."""
    context = req.environ['placement.context']
    context.can(policies.LIST)
    want = _version(req)
    query.validate_query_params(
        req, next(s for v, s in _LIST_SCHEMAS if want.matches(v)))

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
                req, allow_forbidden=want.matches((1, 22)),
                allow_any_traits=want.matches((1, 39))))
    try:
        providers = research_context.get_all_by_filters(context, **filters)
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
        {'resource_providers': [serialize_provider(req.environ, rp)
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
    want = _version(req)
    data = content.extract_json(
        req.body, schema.POST_RP_SCHEMA_V1_14 if want.matches((1, 14))
        else schema.POST_RESOURCE_PROVIDER_SCHEMA)
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
    if not want.matches((1, 20)):
        return response.no_content(
            req, status=201, location=location, cache_headers=False)
    resp = response.send_json(
        req, serialize_provider(req.environ, rp),
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
        req, serialize_provider(req.environ, rp),
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
    want = _version(req)
    uuid = urls.wsgi_path_item(req.environ, 'uuid')
    rp = helpers.get_provider_or_404(context, uuid)
    data = content.extract_json(
        req.body, schema.PUT_RP_SCHEMA_V1_14 if want.matches((1, 14))
        else schema.PUT_RESOURCE_PROVIDER_SCHEMA)
    kwargs = {'name': data['name'],
              'allow_reparenting': want.matches((1, 37))}
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
        req, serialize_provider(req.environ, rp),
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
