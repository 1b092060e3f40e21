"""Handlers of /resource_providers/{uuid}/inventories[/{resource_class}]."""

import webob.exc

from alloc_framework.api.placement import content
from alloc_framework.api.placement import errors
from alloc_framework.api.placement.handlers import helpers
from alloc_framework.api.placement import microversion
from alloc_framework.api.placement.policies import inventory as policies
from alloc_framework.api.placement import response
from alloc_framework.api.placement.schemas import inventory as schema
from alloc_framework.api.placement import urls
from alloc_framework.api.placement import wsgi_wrapper
from alloc_framework.objects.placement import exception
from alloc_framework.objects.placement import inventory as inv_obj

# Serialized fields of one inventory, in the reference's order.
OUTPUT_FIELDS = ('allocation_ratio', 'max_unit', 'min_unit', 'reserved',
                 'step_size', 'total')


def _serialize(inv, generation=None):
    data = {field: getattr(inv, field) for field in OUTPUT_FIELDS}
    if generation is not None:
        data['resource_provider_generation'] = generation
    return data


def _make_inventory(resource_class, data):
    values = dict(inv_obj.DEFAULTS)
    values.update((k, v) for k, v in data.items() if k in OUTPUT_FIELDS)
    return inv_obj.Inventory(resource_class, **values)


def _validate(req, rp, inventories, action='update'):
    """400 for values that contradict each other (see inv_obj.validate).

    :param action: 'create' for POST, as upstream words that message.
    """
    want = microversion.request_version(req)
    try:
        inv_obj.validate(
            inventories, rp, reserved_can_be_total=want.matches(
                microversion.RESERVED_EQUALS_TOTAL))
    except exception.InvalidInventoryCapacity as exc:
        raise webob.exc.HTTPBadRequest(
            'Unable to %(action)s inventory for resource provider '
            '%(uuid)s: %(error)s' % {'action': action, 'uuid': rp.uuid,
                                     'error': exc})
    except exception.InvalidInventory as exc:
        raise webob.exc.HTTPBadRequest(str(exc))


def _send_inventories(req, rp, inventories):
    last_modified = None
    for inv in inventories:
        last_modified = response.pick_last_modified(last_modified, inv)
    return response.send_json(
        req,
        {'inventories': {inv.resource_class: _serialize(inv)
                         for inv in inventories},
         'resource_provider_generation': rp.generation},
        last_modified=last_modified or response.pick_last_modified(None, rp))


def _send_inventory(req, rp, inv, status=200):
    return response.send_json(
        req, _serialize(inv, rp.generation), status=status,
        last_modified=response.pick_last_modified(None, inv))


def _check_generation(rp, data):
    if data['resource_provider_generation'] != rp.generation:
        raise webob.exc.HTTPConflict(
            'resource provider generation conflict',
            comment=errors.CONCURRENT_UPDATE)


def _conflict(exc):
    return webob.exc.HTTPConflict('update conflict: %s' % exc,
                                  comment=errors.CONCURRENT_UPDATE)


@wsgi_wrapper.PlacementWsgify
@content.check_accept('application/json')
def get_inventories(req):
    """GET /resource_providers/{uuid}/inventories."""
    context = req.environ['placement.context']
    context.can(policies.LIST)
    rp = helpers.get_provider_or_404(
        context, urls.wsgi_path_item(req.environ, 'uuid'))
    return _send_inventories(
        req, rp, inv_obj.get_all_by_resource_provider(context, rp))


@wsgi_wrapper.PlacementWsgify
@content.check_accept('application/json')
def get_inventory(req):
    """GET /resource_providers/{uuid}/inventories/{resource_class}."""
    context = req.environ['placement.context']
    context.can(policies.SHOW)
    uuid = urls.wsgi_path_item(req.environ, 'uuid')
    rc = urls.wsgi_path_item(req.environ, 'resource_class')
    rp = helpers.get_provider_or_404(context, uuid)
    inv = inv_obj.find(inv_obj.get_all_by_resource_provider(context, rp),
                       rc)
    if inv is None:
        raise webob.exc.HTTPNotFound(
            'No inventory of class %(rc)s for %(uuid)s'
            % {'rc': rc, 'uuid': uuid})
    return _send_inventory(req, rp, inv)


@wsgi_wrapper.PlacementWsgify
@content.require_content('application/json')
def create_inventory(req):
    """POST /resource_providers/{uuid}/inventories: add one class (201)."""
    context = req.environ['placement.context']
    context.can(policies.CREATE)
    rp = helpers.get_provider_or_404(
        context, urls.wsgi_path_item(req.environ, 'uuid'))
    data = content.extract_json(req.body, schema.POST_INVENTORY_SCHEMA)
    inv = _make_inventory(data['resource_class'], data)
    _validate(req, rp, [inv], action='create')
    try:
        inv = inv_obj.add_inventory(context, rp, inv)
    except (exception.InventoryExists,
            exception.ResourceProviderConcurrentUpdateDetected) as exc:
        # Upstream capitalises this one message only.
        raise webob.exc.HTTPConflict('Update conflict: %s' % exc,
                                     comment=errors.CONCURRENT_UPDATE)
    except exception.ResourceClassNotFound as exc:
        raise webob.exc.HTTPBadRequest(
            'Unable to create inventory for resource provider %(uuid)s: '
            '%(error)s' % {'uuid': rp.uuid, 'error': exc})
    resp = _send_inventory(req, rp, inv, status=201)
    resp.location = urls.inventory_url(req.environ, rp, inv.resource_class)
    return resp


@wsgi_wrapper.PlacementWsgify
@content.require_content('application/json')
def set_inventories(req):
    """PUT /resource_providers/{uuid}/inventories: replace them all.

    Removing an allocated class is a 409; shrinking one below its usage
    is accepted (the provider is then over capacity), as upstream does.
    """
    context = req.environ['placement.context']
    context.can(policies.UPDATE)
    rp = helpers.get_provider_or_404(
        context, urls.wsgi_path_item(req.environ, 'uuid'))
    data = content.extract_json(req.body, schema.PUT_INVENTORY_SCHEMA)
    _check_generation(rp, data)
    inventories = [_make_inventory(rc, values)
                   for rc, values in sorted(data['inventories'].items())]
    _validate(req, rp, inventories)
    try:
        inventories = inv_obj.set_inventories(context, rp, inventories)
    except exception.ResourceClassNotFound as exc:
        raise webob.exc.HTTPBadRequest(
            'Unknown resource class in inventory for resource provider '
            '%(uuid)s: %(error)s' % {'uuid': rp.uuid, 'error': exc})
    except exception.ResourceProviderConcurrentUpdateDetected as exc:
        raise _conflict(exc)
    except exception.InventoryInUse as exc:
        raise webob.exc.HTTPConflict('update conflict: %s' % exc,
                                     comment=errors.INVENTORY_INUSE)
    return _send_inventories(req, rp, inventories)


@wsgi_wrapper.PlacementWsgify
@microversion.version_handler(microversion.DELETE_INVENTORIES,
                              status_code=405)
def delete_inventories(req):
    """DELETE /resource_providers/{uuid}/inventories (1.5)."""
    context = req.environ['placement.context']
    context.can(policies.DELETE)
    rp = helpers.get_provider_or_404(
        context, urls.wsgi_path_item(req.environ, 'uuid'))
    try:
        inv_obj.set_inventories(context, rp, [])
    except exception.ResourceProviderConcurrentUpdateDetected:
        raise webob.exc.HTTPConflict(
            'Unable to delete inventory for resource provider %s because '
            'the inventory was updated by another process. Please retry '
            'your request.' % rp.uuid,
            comment=errors.CONCURRENT_UPDATE)
    except exception.InventoryInUse as exc:
        raise webob.exc.HTTPConflict(str(exc),
                                     comment=errors.INVENTORY_INUSE)
    return response.no_content(req, cache_headers=False)


@wsgi_wrapper.PlacementWsgify
@content.require_content('application/json')
def update_inventory(req):
    """PUT /resource_providers/{uuid}/inventories/{resource_class}.

    The provider must already have inventory of the class (400 if not).
    A capacity below the usage is accepted (the provider is then over
    capacity), as upstream does.
    """
    context = req.environ['placement.context']
    context.can(policies.UPDATE)
    rc = urls.wsgi_path_item(req.environ, 'resource_class')
    rp = helpers.get_provider_or_404(
        context, urls.wsgi_path_item(req.environ, 'uuid'))
    data = content.extract_json(req.body, schema.BASE_INVENTORY_SCHEMA)
    _check_generation(rp, data)
    inv = _make_inventory(rc, data)
    _validate(req, rp, [inv])
    try:
        inv = inv_obj.update_inventory(context, rp, inv)
    except exception.ResourceProviderConcurrentUpdateDetected as exc:
        raise _conflict(exc)
    except (exception.InventoryWithResourceClassNotFound,
            exception.ResourceClassNotFound) as exc:
        raise webob.exc.HTTPBadRequest(
            'No inventory record with resource class for resource provider '
            '%(uuid)s: %(error)s' % {'uuid': rp.uuid, 'error': exc})
    return _send_inventory(req, rp, inv)


@wsgi_wrapper.PlacementWsgify
def delete_inventory(req):
    """DELETE /resource_providers/{uuid}/inventories/{resource_class}."""
    context = req.environ['placement.context']
    context.can(policies.DELETE)
    rc = urls.wsgi_path_item(req.environ, 'resource_class')
    rp = helpers.get_provider_or_404(
        context, urls.wsgi_path_item(req.environ, 'uuid'))
    try:
        inv_obj.delete_inventory(context, rp, rc)
    except exception.InventoryWithResourceClassNotFound:
        raise webob.exc.HTTPNotFound(
            'No inventory of class %(rc)s found for delete on resource '
            'provider %(uuid)s' % {'rc': rc, 'uuid': rp.uuid})
    except exception.ResourceProviderConcurrentUpdateDetected as exc:
        raise webob.exc.HTTPConflict(
            'Unable to delete inventory of class %(rc)s: %(error)s'
            % {'rc': rc, 'error': exc},
            comment=errors.CONCURRENT_UPDATE)
    except exception.InventoryInUse as exc:
        raise webob.exc.HTTPConflict(
            'Unable to delete inventory of class %(rc)s: %(error)s'
            % {'rc': rc, 'error': exc},
            comment=errors.INVENTORY_INUSE)
    return response.no_content(req, cache_headers=False)
