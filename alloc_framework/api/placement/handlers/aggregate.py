"""Handlers of /resource_providers/{uuid}/aggregates (microversion 1.1).

Before 1.19 the document is a bare list of aggregate uuids and carries no
generation; from 1.19 it is ``{"aggregates": [...],
"resource_provider_generation": N}`` both ways and a stale generation is a
409.
"""

import webob.exc

from alloc_framework.api.placement import content
from alloc_framework.api.placement import errors
from alloc_framework.api.placement.handlers import helpers
from alloc_framework.api.placement import microversion
from alloc_framework.api.placement.policies import aggregate as policies
from alloc_framework.api.placement import response
from alloc_framework.api.placement.schemas import aggregate as schema
from alloc_framework.api.placement import urls
from alloc_framework.api.placement import wsgi_wrapper
from alloc_framework.objects.placement import aggregate as agg_obj
from alloc_framework.objects.placement import exception

_STALE = ("Resource provider's generation already changed. Please update "
          "the generation and try again.")


def _send_aggregates(req, rp, aggregate_uuids):
    data = {'aggregates': aggregate_uuids}
    want = microversion.request_version(req)
    if want.matches(microversion.AGGREGATES_GENERATION):
        data['resource_provider_generation'] = rp.generation
    return response.send_json(
        req, data, last_modified=response.pick_last_modified(None, rp))


@wsgi_wrapper.PlacementWsgify
@microversion.version_handler(microversion.AGGREGATES)
@content.check_accept('application/json')
def get_aggregates(req):
    """GET /resource_providers/{uuid}/aggregates."""
    context = req.environ['placement.context']
    context.can(policies.LIST)
    rp = helpers.get_provider_or_404(
        context, urls.wsgi_path_item(req.environ, 'uuid'))
    return _send_aggregates(req, rp,
                            agg_obj.get_aggregates_by_provider(context, rp))


@wsgi_wrapper.PlacementWsgify
@microversion.version_handler(microversion.AGGREGATES)
@content.require_content('application/json')
def set_aggregates(req):
    """PUT /resource_providers/{uuid}/aggregates: replace them all."""
    context = req.environ['placement.context']
    context.can(policies.UPDATE)
    rp = helpers.get_provider_or_404(
        context, urls.wsgi_path_item(req.environ, 'uuid'))
    want = microversion.request_version(req)
    with_generation = want.matches(microversion.AGGREGATES_GENERATION)
    if with_generation:
        data = content.extract_json(req.body,
                                    schema.PUT_AGGREGATES_SCHEMA_V1_19)
        if data['resource_provider_generation'] != rp.generation:
            raise webob.exc.HTTPConflict(_STALE,
                                         comment=errors.CONCURRENT_UPDATE)
        uuids = data['aggregates']
    else:
        uuids = content.extract_json(req.body,
                                     schema.PUT_AGGREGATES_SCHEMA_V1_1)
    try:
        agg_obj.set_aggregates(
            context, rp, [helpers.canonical_uuid(u) for u in uuids],
            increment_generation=with_generation)
    except exception.ResourceProviderConcurrentUpdateDetected:
        raise webob.exc.HTTPConflict(_STALE,
                                     comment=errors.CONCURRENT_UPDATE)
    # The reference answers with the list as it was sent, in its order.
    return _send_aggregates(req, rp, uuids)
