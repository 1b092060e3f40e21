"""Handler of POST /reshaper (microversion 1.30 and later).

Moves inventories and the allocations against them between providers in
one transaction; see ``objects/placement/reshaper.py``.
"""

import types

import webob.exc

from alloc_framework.api.placement import content
from alloc_framework.api.placement import errors
from alloc_framework.api.placement.handlers import helpers
from alloc_framework.api.placement import microversion
from alloc_framework.api.placement.policies import reshaper as policies
from alloc_framework.api.placement import response
from alloc_framework.api.placement.schemas import reshaper as schema
from alloc_framework.api.placement import wsgi_wrapper
from alloc_framework.objects.placement import exception
from alloc_framework.objects.placement import inventory as inv_obj
from alloc_framework.objects.placement import reshaper as reshaper_obj


def _schema(want):
    return microversion.newest(want, (
        (microversion.CONSUMER_TYPES, schema.POST_RESHAPER_SCHEMA_V1_38),
        (microversion.ALLOCATION_MAPPINGS, schema.POST_RESHAPER_SCHEMA_V1_34),
        (microversion.INITIAL, schema.POST_RESHAPER_SCHEMA)))


def _provider_inventories(rp_uuid, body):
    inventories = []
    for rc_name, record in sorted(body['inventories'].items()):
        values = dict(inv_obj.DEFAULTS)
        values.update(record)
        inventories.append(inv_obj.Inventory(rc_name, **values))
    try:
        inv_obj.validate(inventories, types.SimpleNamespace(uuid=rp_uuid))
    except exception.InvalidInventory as exc:
        raise webob.exc.HTTPBadRequest(
            'Unable to update inventory: %(error)s' % {'error': exc})
    return reshaper_obj.ProviderInventories(
        rp_uuid, body['resource_provider_generation'], inventories)


@wsgi_wrapper.PlacementWsgify
@microversion.version_handler(microversion.RESHAPER)
@content.require_content('application/json')
def reshape(req):
    """POST /reshaper: 204, or nothing changed at all."""
    context = req.environ['placement.context']
    context.can(policies.RESHAPE)
    want = microversion.request_version(req)
    data = content.extract_json(req.body, _schema(want))
    inventories = [_provider_inventories(rp_uuid, body)
                   for rp_uuid, body in sorted(data['inventories'].items())]
    requests = helpers.consumer_requests(context, data['allocations'], want)
    try:
        reshaper_obj.reshape(context, inventories, requests)
    except exception.ResourceProviderNotFound as exc:
        raise webob.exc.HTTPBadRequest(
            'Resource provider not found in reshaper data: %(error)s' %
            {'error': exc}, comment=errors.RESOURCE_PROVIDER_NOT_FOUND)
    except exception.ConcurrentUpdateDetected as exc:
        raise webob.exc.HTTPConflict(
            'update conflict: %(error)s' % {'error': exc},
            comment=errors.CONCURRENT_UPDATE)
    except exception.NotFound as exc:
        # An unknown resource class.
        raise webob.exc.HTTPBadRequest(
            'malformed reshaper data: %(error)s' % {'error': exc})
    except exception.InventoryInUse as exc:
        raise webob.exc.HTTPConflict(
            'update conflict: %(error)s' % {'error': exc},
            comment=errors.INVENTORY_INUSE)
    except exception.InvalidInventoryCapacity as exc:
        raise webob.exc.HTTPBadRequest(
            'Unable to update inventory: %(error)s' % {'error': exc})
    except exception.InvalidInventory as exc:
        # Allocations that do not fit, or min_unit above max_unit.
        raise webob.exc.HTTPConflict(
            'Unable to allocate inventory: %(error)s' % {'error': exc})
    return response.no_content(req)
