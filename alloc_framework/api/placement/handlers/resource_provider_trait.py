"""Handlers of /resource_providers/{uuid}/traits (microversion 1.6)."""

import webob.exc

from alloc_framework.api.placement import content
from alloc_framework.api.placement import errors
from alloc_framework.api.placement.handlers import helpers
from alloc_framework.api.placement import microversion
from alloc_framework.api.placement.policies import trait as policies
from alloc_framework.api.placement import response
from alloc_framework.api.placement.schemas import \
    resource_provider_trait as schema
from alloc_framework.api.placement import urls
from alloc_framework.api.placement import wsgi_wrapper
from alloc_framework.objects.placement import exception
from alloc_framework.objects.placement import \
    resource_provider_trait as rp_trait_obj

_STALE = ("Resource provider's generation already changed. Please update "
          "the generation and try again.")


def _send_traits(req, rp, traits):
    return response.send_json(
        req, {'traits': traits, 'resource_provider_generation': rp.generation},
        last_modified=response.pick_last_modified(None, rp))


@wsgi_wrapper.PlacementWsgify
@microversion.version_handler(microversion.TRAITS)
@content.check_accept('application/json')
def list_traits_for_resource_provider(req):
    """GET /resource_providers/{uuid}/traits."""
    context = req.environ['placement.context']
    context.can(policies.RP_TRAIT_LIST)
    rp = helpers.get_provider_or_404(
        context, urls.wsgi_path_item(req.environ, 'uuid'))
    return _send_traits(req, rp,
                        rp_trait_obj.get_traits_by_provider(context, rp))


@wsgi_wrapper.PlacementWsgify
@microversion.version_handler(microversion.TRAITS)
@content.require_content('application/json')
def update_traits_for_resource_provider(req):
    """PUT /resource_providers/{uuid}/traits: replace them all."""
    context = req.environ['placement.context']
    context.can(policies.RP_TRAIT_UPDATE)
    rp = helpers.get_provider_or_404(
        context, urls.wsgi_path_item(req.environ, 'uuid'))
    data = content.extract_json(req.body, schema.SET_TRAITS_FOR_RP_SCHEMA)
    if data['resource_provider_generation'] != rp.generation:
        raise webob.exc.HTTPConflict(_STALE,
                                     comment=errors.CONCURRENT_UPDATE)
    try:
        traits = rp_trait_obj.set_traits(context, rp, data['traits'])
    except exception.TraitNotFound as exc:
        raise webob.exc.HTTPBadRequest(str(exc))
    except exception.ResourceProviderConcurrentUpdateDetected:
        raise webob.exc.HTTPConflict(_STALE,
                                     comment=errors.CONCURRENT_UPDATE)
    return _send_traits(req, rp, traits)


@wsgi_wrapper.PlacementWsgify
@microversion.version_handler(microversion.TRAITS)
def delete_traits_for_resource_provider(req):
    """DELETE /resource_providers/{uuid}/traits: remove them all."""
    context = req.environ['placement.context']
    context.can(policies.RP_TRAIT_DELETE)
    rp = helpers.get_provider_or_404(
        context, urls.wsgi_path_item(req.environ, 'uuid'))
    try:
        rp_trait_obj.delete_traits(context, rp)
    except exception.ResourceProviderConcurrentUpdateDetected as exc:
        raise webob.exc.HTTPConflict(
            'Unable to delete traits of resource provider %(uuid)s: '
            '%(error)s' % {'uuid': rp.uuid, 'error': exc},
            comment=errors.CONCURRENT_UPDATE)
    return response.no_content(req, cache_headers=False)
