"""Handlers of /resource_classes (microversion 1.2 and later)."""

from oslo_serialization import jsonutils
import webob.exc

from alloc_framework.api.placement import content
from alloc_framework.api.placement import errors
from alloc_framework.api.placement import microversion
from alloc_framework.api.placement.policies import resource_class as policies
from alloc_framework.api.placement import response
from alloc_framework.api.placement.schemas import resource_class as schema
from alloc_framework.api.placement import urls
from alloc_framework.api.placement import wsgi_wrapper
from alloc_framework.objects.placement import exception
from alloc_framework.objects.placement import resource_class as rc_obj


def _serialize(environ, rc):
    return {
        'name': rc.name,
        'links': [{'rel': 'self',
                   'href': urls.resource_class_url(environ, rc)}],
    }


@wsgi_wrapper.PlacementWsgify
@microversion.version_handler(microversion.RESOURCE_CLASSES)
@content.require_content('application/json')
def create_resource_class(req):
    """POST /resource_classes: 201 and Location, no body."""
    context = req.environ['placement.context']
    context.can(policies.CREATE)
    data = content.extract_json(req.body, schema.POST_RC_SCHEMA_V1_2)
    try:
        rc = rc_obj.create(context, data['name'])
    except exception.ResourceClassExists:
        raise webob.exc.HTTPConflict(
            'Conflicting resource class already exists: %(name)s'
            % {'name': data['name']}, comment=errors.DUPLICATE_NAME)
    except exception.MaxDBRetriesExceeded:
        raise webob.exc.HTTPConflict(
            'Max retries of DB transaction exceeded attempting to create '
            'resource class: %(name)s, please try again.'
            % {'name': data['name']})
    return response.no_content(req, status=201,
                               location=urls.resource_class_url(req.environ,
                                                                rc),
                               cache_headers=False)


@wsgi_wrapper.PlacementWsgify
@microversion.version_handler(microversion.RESOURCE_CLASSES)
def delete_resource_class(req):
    """DELETE /resource_classes/{name}: custom classes not in use."""
    name = urls.wsgi_path_item(req.environ, 'name')
    context = req.environ['placement.context']
    context.can(policies.DELETE)
    try:
        rc_obj.destroy(context, name)
    except exception.ResourceClassCannotDeleteStandard as exc:
        raise webob.exc.HTTPBadRequest(
            'Error in delete resource class: %(name)s: %(error)s'
            % {'name': name, 'error': exc})
    except exception.ResourceClassInUse as exc:
        raise webob.exc.HTTPConflict(
            'Error in delete resource class: %(name)s: %(error)s'
            % {'name': name, 'error': exc})
    except exception.ResourceClassNotFound as exc:
        raise webob.exc.HTTPNotFound(
            'No such resource class %(name)s: %(error)s'
            % {'name': name, 'error': exc})
    return response.no_content(req, cache_headers=False)


@wsgi_wrapper.PlacementWsgify
@microversion.version_handler(microversion.RESOURCE_CLASSES)
@content.check_accept('application/json')
def get_resource_class(req):
    """GET /resource_classes/{name}."""
    name = urls.wsgi_path_item(req.environ, 'name')
    context = req.environ['placement.context']
    context.can(policies.SHOW)
    try:
        rc = rc_obj.get_by_name(context, name)
    except exception.ResourceClassNotFound as exc:
        raise webob.exc.HTTPNotFound(str(exc))
    return response.send_json(
        req, _serialize(req.environ, rc),
        last_modified=response.pick_last_modified(None, rc))


@wsgi_wrapper.PlacementWsgify
@microversion.version_handler(microversion.RESOURCE_CLASSES)
@content.check_accept('application/json')
def list_resource_classes(req):
    """GET /resource_classes: standard classes first, then custom."""
    context = req.environ['placement.context']
    context.can(policies.LIST)
    last_modified = None
    items = []
    for rc in rc_obj.get_all(context):
        last_modified = response.pick_last_modified(last_modified, rc)
        items.append(_serialize(req.environ, rc))
    return response.send_json(
        req, {'resource_classes': items}, last_modified=last_modified)


@wsgi_wrapper.PlacementWsgify
@microversion.version_handler(microversion.RESOURCE_CLASSES)
@content.require_content('application/json')
def update_resource_class(req):
    """PUT /resource_classes/{name} before 1.7: rename a custom class."""
    name = urls.wsgi_path_item(req.environ, 'name')
    context = req.environ['placement.context']
    context.can(policies.UPDATE)
    data = content.extract_json(req.body, schema.PUT_RC_SCHEMA_V1_2)
    try:
        rc = rc_obj.rename(context, name, data['name'])
    except exception.ResourceClassExists:
        raise webob.exc.HTTPConflict(
            'Resource class already exists: %(name)s'
            % {'name': data['name']}, comment=errors.DUPLICATE_NAME)
    except exception.ResourceClassCannotUpdateStandard:
        raise webob.exc.HTTPBadRequest(
            'Cannot update standard resource class %(name)s'
            % {'name': name})
    except exception.ResourceClassNotFound as exc:
        raise webob.exc.HTTPNotFound(str(exc))
    return response.send_json(
        req, _serialize(req.environ, rc),
        last_modified=response.pick_last_modified(None, rc))


@wsgi_wrapper.PlacementWsgify  # noqa: F811 (a version variant)
@microversion.version_handler(microversion.RESOURCE_CLASS_PUT_CREATES)
def update_resource_class(req):  # noqa: F811
    """PUT /resource_classes/{name} from 1.7: create or confirm, no body."""
    name = urls.wsgi_path_item(req.environ, 'name')
    context = req.environ['placement.context']
    context.can(policies.UPDATE)
    # The path carries the name: validate it as the body would be.
    content.extract_json(jsonutils.dumps({'name': name}),
                         schema.PUT_RC_SCHEMA_V1_2)
    status = 204
    try:
        rc = rc_obj.get_by_name(context, name)
    except exception.ResourceClassNotFound:
        try:
            rc = rc_obj.create(context, name)
            status = 201
        except exception.ResourceClassExists:
            # Created concurrently: it exists, which is all PUT asks.
            rc = rc_obj.get_by_name(context, name)
        except exception.MaxDBRetriesExceeded:
            raise webob.exc.HTTPConflict(
                'Max retries of DB transaction exceeded attempting to '
                'create resource class: %(name)s, please try again.'
                % {'name': name})
    return response.no_content(req, status=status,
                               location=urls.resource_class_url(req.environ,
                                                                rc),
                               cache_headers=False)
