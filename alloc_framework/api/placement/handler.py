"""The route table of the Placement API and its dispatcher.

``ROUTE_DECLARATIONS`` maps a URL template to ``{METHOD: handler}``. A
known URL with an undeclared method gets a 405 with an ``Allow`` header;
an unknown URL a 404. Both, like every error, carry the JSON error body.
Domain errors a handler lets escape are mapped here once: ``NotFound`` ->
404, ``PolicyNotAuthorized`` -> 403.
"""

import routes
import webob
import webob.exc

from alloc_framework.api.placement.handlers import aggregate
from alloc_framework.api.placement.handlers import allocation
from alloc_framework.api.placement.handlers import allocation_candidate
from alloc_framework.api.placement.handlers import inventory
from alloc_framework.api.placement.handlers import metrics
from alloc_framework.api.placement.handlers import reshaper
from alloc_framework.api.placement.handlers import resource_class
from alloc_framework.api.placement.handlers import resource_provider
from alloc_framework.api.placement.handlers import resource_provider_trait
from alloc_framework.api.placement.handlers import root
from alloc_framework.api.placement.handlers import trait
from alloc_framework.api.placement.handlers import usage
from alloc_framework.api.placement import response
from alloc_framework.api.placement import urls
from alloc_framework.api import prometheus
from alloc_framework.objects.placement import allocation_candidate as ac_obj
from alloc_framework.objects.placement import attribute_cache
from alloc_framework.objects.placement import exception

# URL template -> {HTTP method: handler}. Handlers are
# PlacementWsgify-decorated functions of handlers/<resource>.py.
ROUTE_DECLARATIONS = {
    '/': {
        'GET': root.home,
    },
    '/resource_classes': {
        'GET': resource_class.list_resource_classes,
        'POST': resource_class.create_resource_class,
    },
    '/resource_classes/{name}': {
        'GET': resource_class.get_resource_class,
        'PUT': resource_class.update_resource_class,
        'DELETE': resource_class.delete_resource_class,
    },
    '/resource_providers': {
        'GET': resource_provider.list_resource_providers,
        'POST': resource_provider.create_resource_provider,
    },
    '/resource_providers/{uuid}': {
        'GET': resource_provider.get_resource_provider,
        'PUT': resource_provider.update_resource_provider,
        'DELETE': resource_provider.delete_resource_provider,
    },
    '/resource_providers/{uuid}/inventories': {
        'GET': inventory.get_inventories,
        'POST': inventory.create_inventory,
        'PUT': inventory.set_inventories,
        'DELETE': inventory.delete_inventories,
    },
    '/resource_providers/{uuid}/inventories/{resource_class}': {
        'GET': inventory.get_inventory,
        'PUT': inventory.update_inventory,
        'DELETE': inventory.delete_inventory,
    },
    '/resource_providers/{uuid}/aggregates': {
        'GET': aggregate.get_aggregates,
        'PUT': aggregate.set_aggregates,
    },
    '/resource_providers/{uuid}/traits': {
        'GET': resource_provider_trait.list_traits_for_resource_provider,
        'PUT': resource_provider_trait.update_traits_for_resource_provider,
        'DELETE':
            resource_provider_trait.delete_traits_for_resource_provider,
    },
    '/resource_providers/{uuid}/allocations': {
        'GET': allocation.list_for_resource_provider,
    },
    '/resource_providers/{uuid}/usages': {
        'GET': usage.list_usages,
    },
    '/allocations': {
        'POST': allocation.set_allocations,
    },
    '/allocations/{consumer_uuid}': {
        'GET': allocation.list_for_consumer,
        'PUT': allocation.set_allocations_for_consumer,
        'DELETE': allocation.delete_allocations,
    },
    '/allocation_candidates': {
        'GET': allocation_candidate.list_allocation_candidates,
    },
    '/usages': {
        'GET': usage.get_total_usages,
    },
    '/reshaper': {
        'POST': reshaper.reshape,
    },
    '/traits': {
        'GET': trait.list_traits,
    },
    '/traits/{name}': {
        'GET': trait.get_trait,
        'PUT': trait.put_trait,
        'DELETE': trait.delete_trait,
    },
    # Not upstream's: the Prometheus metrics of this API.
    prometheus.PATH: {
        'GET': metrics.get_metrics,
    },
}


def dispatch(environ, start_response, mapper):
    """Call the handler of the route matching ``environ``, or 404."""
    found = mapper.routematch(environ=environ)
    if found is None:
        raise webob.exc.HTTPNotFound(
            'The resource could not be found.')
    result, route = found
    # The template, not the path: what the latency metrics are labelled
    # with (api/prometheus.py).
    environ[prometheus.ROUTE_KEY] = route.routepath
    handler = result.pop('action')
    environ['wsgiorg.routing_args'] = ((), result)
    return handler(environ, start_response)


def handle_405(environ, start_response):
    """405 with the methods the URL does support in ``Allow``."""
    methods = urls.wsgi_path_item(environ, '_methods')
    headers = {}
    if methods:
        # webob wants str header values.
        headers['allow'] = str(methods)
    raise webob.exc.HTTPMethodNotAllowed(
        'The method specified is not allowed for this resource.',
        headers=headers)


def make_map(declarations):
    """A routes.Mapper of ``declarations`` plus 405 catch-alls."""
    mapper = routes.Mapper()
    for route, targets in declarations.items():
        allowed = []
        for method in targets:
            mapper.connect(route, action=targets[method],
                           conditions=dict(method=[method]))
            allowed.append(method)
        mapper.connect(route, action=handle_405,
                       _methods=', '.join(allowed))
    return mapper


class PlacementHandler:
    """Serve the route table (the innermost WSGI application)."""

    def __init__(self, conf):
        self.conf = conf
        # Resource class and trait ids of this application's requests.
        self.attribute_cache = attribute_cache.AttributeCache()
        # What the candidates search reads to choose how to search.
        self.class_counts = ac_obj.ClassCounts()
        self._map = make_map(ROUTE_DECLARATIONS)

    def __call__(self, environ, start_response):
        req = webob.Request(environ)
        try:
            self._check_content_type(environ)
            ctx = environ.get('placement.context')
            if ctx is not None:
                # Handlers needing options and the objects needing the
                # caches of the application find them here rather than
                # in globals.
                ctx.config = self.conf
                ctx.attribute_cache = self.attribute_cache
                ctx.class_counts = self.class_counts
            environ['placement.conf'] = self.conf
            return dispatch(environ, start_response, self._map)
        except exception.NotFound as exc:
            err = webob.exc.HTTPNotFound(str(exc))
        except exception.PolicyNotAuthorized as exc:
            err = webob.exc.HTTPForbidden(exc.format_message())
        except webob.exc.HTTPException as exc:
            err = exc
        code = err.comment
        err.comment = None
        return response.error_response(req, err, code=code)(environ,
                                                            start_response)

    @staticmethod
    def _check_content_type(environ):
        # A body without a content type cannot be interpreted.
        clen = environ.get('CONTENT_LENGTH')
        try:
            if clen and int(clen) > 0 and not environ.get('CONTENT_TYPE'):
                raise webob.exc.HTTPBadRequest(
                    'content-type header required when content-length > 0')
        except ValueError:
            raise webob.exc.HTTPBadRequest(
                'content-length header must be an integer')
