"""Handlers of /traits (microversion 1.6 and later)."""

import webob.exc

from alloc_framework.api.placement import content
from alloc_framework.api.placement import microversion
from alloc_framework.api.placement.policies import trait as policies
from alloc_framework.api.placement import query
from alloc_framework.api.placement import response
from alloc_framework.api.placement.schemas import trait as schema
from alloc_framework.api.placement import urls
from alloc_framework.api.placement import wsgi_wrapper
from alloc_framework.objects.placement import exception
from alloc_framework.objects.placement import trait as trait_obj

_BAD_NAME_PARAM = ('Badly formatted name parameter. Expected name query '
                   'string parameter in form: '
                   '?name=[in|startswith]:[name1,name2|prefix]. Got: "%s"')
_INVALID_TRAIT = ('The trait is invalid. A valid trait must be no longer '
                  'than 255 characters, start with the prefix "CUSTOM_" and '
                  'use following characters: "A"-"Z", "0"-"9" and "_"')


def _name_filters(value):
    """``startswith:P`` -> {'prefix': P}; ``in:A,B`` -> {'name_in': ...}."""
    if value.startswith('startswith:'):
        return {'prefix': value[len('startswith:'):]}
    if value.startswith('in:'):
        names = [n.strip() for n in value[len('in:'):].split(',')]
        return {'name_in': [n for n in names if n]}
    raise webob.exc.HTTPBadRequest(_BAD_NAME_PARAM % value)


@wsgi_wrapper.PlacementWsgify
@microversion.version_handler(microversion.TRAITS)
def put_trait(req):
    """PUT /traits/{name}: create a custom trait (201) or confirm (204)."""
    context = req.environ['placement.context']
    context.can(policies.TRAITS_UPDATE)
    name = urls.wsgi_path_item(req.environ, 'name')
    if not schema.CUSTOM_TRAIT_RE.match(name) or len(name) > 255:
        raise webob.exc.HTTPBadRequest(_INVALID_TRAIT)
    status = 204
    try:
        trait = trait_obj.get_by_name(context, name)
    except exception.TraitNotFound:
        try:
            trait = trait_obj.create(context, name)
            status = 201
        except exception.TraitExists:
            # Created concurrently: it exists, which is all PUT asks.
            trait = trait_obj.get_by_name(context, name)
        except exception.MaxDBRetriesExceeded as exc:
            raise webob.exc.HTTPConflict(
                '%(error)s, please try again.' % {'error': exc})
    resp = response.no_content(req, status=status,
                               location=urls.trait_url(req.environ, trait))
    want = microversion.request_version(req)
    if want.matches(microversion.CACHE_HEADERS):
        resp.last_modified = response.pick_last_modified(None, trait)
    return resp


@wsgi_wrapper.PlacementWsgify
@microversion.version_handler(microversion.TRAITS)
def get_trait(req):
    """GET /traits/{name}: 204 if the trait exists, else 404."""
    context = req.environ['placement.context']
    context.can(policies.TRAITS_SHOW)
    name = urls.wsgi_path_item(req.environ, 'name')
    try:
        trait = trait_obj.get_by_name(context, name)
    except exception.TraitNotFound as exc:
        raise webob.exc.HTTPNotFound(str(exc))
    resp = response.no_content(req)
    want = microversion.request_version(req)
    if want.matches(microversion.CACHE_HEADERS):
        resp.last_modified = response.pick_last_modified(None, trait)
    return resp


@wsgi_wrapper.PlacementWsgify
@microversion.version_handler(microversion.TRAITS)
def delete_trait(req):
    """DELETE /traits/{name}: custom traits no provider has."""
    context = req.environ['placement.context']
    context.can(policies.TRAITS_DELETE)
    name = urls.wsgi_path_item(req.environ, 'name')
    try:
        trait_obj.destroy(context, name)
    except exception.TraitNotFound as exc:
        raise webob.exc.HTTPNotFound(str(exc))
    except exception.TraitCannotDeleteStandard as exc:
        raise webob.exc.HTTPBadRequest(str(exc))
    except exception.TraitInUse as exc:
        raise webob.exc.HTTPConflict(str(exc))
    return response.no_content(req, cache_headers=False)


@wsgi_wrapper.PlacementWsgify
@microversion.version_handler(microversion.TRAITS)
@content.check_accept('application/json')
def list_traits(req):
    """GET /traits with optional ``name`` and ``associated`` filters."""
    context = req.environ['placement.context']
    context.can(policies.TRAITS_LIST)
    query.validate_query_params(req, schema.LIST_TRAIT_SCHEMA)
    filters = {}
    if 'associated' in req.GET:
        value = req.GET['associated'].lower()
        if value not in ('true', 'false'):
            raise webob.exc.HTTPBadRequest(
                'The query parameter "associated" only accepts "true" or '
                '"false"')
        filters['associated'] = value == 'true'
    if 'name' in req.GET:
        filters.update(_name_filters(req.GET['name']))
    traits = trait_obj.get_all(context, **filters)
    last_modified = None
    for trait in traits:
        last_modified = response.pick_last_modified(last_modified, trait)
    return response.send_json(req, {'traits': [t.name for t in traits]},
                              last_modified=last_modified)
