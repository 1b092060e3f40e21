"""Handlers of usages: per provider and per project/user."""

from oslo_utils import timeutils
import webob.exc

from alloc_framework.api.placement import content
from alloc_framework.api.placement import microversion
from alloc_framework.api.placement.policies import usage as policies
from alloc_framework.api.placement import query
from alloc_framework.api.placement import response
from alloc_framework.api.placement.schemas import usage as schema
from alloc_framework.api.placement import urls
from alloc_framework.api.placement import wsgi_wrapper
from alloc_framework.objects.placement import exception
from alloc_framework.objects.placement import usage as usage_obj


def _send(req, body):
    # Usages are computed now: "now" is their last modification time.
    return response.send_json(
        req, body, last_modified=timeutils.utcnow(with_timezone=True))


@wsgi_wrapper.PlacementWsgify
@content.check_accept('application/json')
def list_usages(req):
    """GET /resource_providers/{uuid}/usages."""
    context = req.environ['placement.context']
    context.can(policies.PROVIDER_USAGES)
    rp_uuid = urls.wsgi_path_item(req.environ, 'uuid')
    try:
        generation, usages = usage_obj.get_all_by_resource_provider_uuid(
            context, rp_uuid)
    except exception.ResourceProviderNotFound as exc:
        raise webob.exc.HTTPNotFound(
            'No resource provider with uuid %(uuid)s found: %(error)s' %
            {'uuid': rp_uuid, 'error': exc})
    return _send(req, {'resource_provider_generation': generation,
                       'usages': usages})


@wsgi_wrapper.PlacementWsgify
@microversion.version_handler(microversion.USAGES)
@content.check_accept('application/json')
def get_total_usages(req):
    """GET /usages?project_id=&user_id=[&consumer_type=] (1.9 and later).

    From 1.38 the usages are grouped by consumer type, with a
    ``consumer_count`` per group.
    """
    context = req.environ['placement.context']
    want = microversion.request_version(req)
    if want.matches(microversion.CONSUMER_TYPES):
        query.validate_query_params(req, schema.GET_USAGES_SCHEMA_1_38)
    else:
        query.validate_query_params(req, schema.GET_USAGES_SCHEMA_1_9)
    project_id = req.GET.get('project_id')
    user_id = req.GET.get('user_id')
    # A project reader may see the usages of its own project only.
    context.can(policies.TOTAL_USAGES, target={'project_id': project_id})
    if want.matches(microversion.CONSUMER_TYPES):
        usages = usage_obj.get_by_consumer_type(
            context, project_id, user_id=user_id,
            consumer_type=req.GET.get('consumer_type'))
    else:
        usages = usage_obj.get_all_by_project_user(context, project_id,
                                                   user_id=user_id)
    return _send(req, {'usages': usages})
