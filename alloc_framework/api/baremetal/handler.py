"""The route table of the bare metal API and the request dispatcher.

``ROUTES`` is the one declarative table: URL template -> HTTP method ->
handler. A URL that matches with a method it does not list answers 405
with ``Allow``. Up to version 1.90 a trailing ``.json`` on a path that
matches nothing is stripped and the path matched again, as the upstream
service accepts it; from 1.91 it is part of the path.

The dispatcher negotiates the API version, builds the request context,
calls the handler, turns domain exceptions into error responses and logs
one line per request.
"""

from oslo_log import log
import routes
import webob

from alloc_framework.api.baremetal import errors
from alloc_framework.api.baremetal.handlers import allocation
from alloc_framework.api.baremetal.handlers import allocation_group
from alloc_framework.api.baremetal.handlers import conductor
from alloc_framework.api.baremetal.handlers import deferred_action
from alloc_framework.api.baremetal.handlers import driver
from alloc_framework.api.baremetal.handlers import metrics
from alloc_framework.api.baremetal.handlers import node
from alloc_framework.api.baremetal.handlers import node_extra
from alloc_framework.api.baremetal.handlers import node_links
from alloc_framework.api.baremetal.handlers import root
from alloc_framework.api.baremetal import microversion
from alloc_framework.api.baremetal import notify
from alloc_framework.api.baremetal import policy
from alloc_framework.api import prometheus
from alloc_framework.common import context as af_context

LOG = log.getLogger(__name__)

NODE = '/v1/nodes/{node_ident}'
ALLOCATION = '/v1/allocations/{allocation_ident}'

ROUTES = {
    '/': {'GET': root.home},
    '/v1': {'GET': root.v1},
    '/v1/nodes': {'GET': node.list_nodes, 'POST': node.create_node},
    '/v1/nodes/detail': {'GET': node.list_nodes_detail},
    NODE: {'GET': node.get_node, 'PATCH': node.update_node,
           'DELETE': node.delete_node},
    NODE + '/traits': {'GET': node_extra.list_traits,
                       'PUT': node_extra.set_traits,
                       'DELETE': node_extra.delete_traits},
    NODE + '/traits/{trait}': {'PUT': node_extra.add_trait,
                               'DELETE': node_extra.delete_trait},
    NODE + '/states': {'GET': node_extra.get_states},
    NODE + '/states/provision': {'PUT': node_extra.set_provision_state},
    NODE + '/states/power': {'PUT': node_extra.set_power_state},
    NODE + '/validate': {'GET': node_extra.validate},
    NODE + '/management/boot_device': {
        'GET': node_extra.get_boot_device,
        'PUT': node_extra.set_boot_device},
    NODE + '/management/boot_device/supported': {
        'GET': node_extra.get_supported_boot_devices},
    NODE + '/maintenance': {'PUT': node_extra.set_maintenance,
                            'DELETE': node_extra.clear_maintenance},
    NODE + '/history': {'GET': node_extra.list_history},
    NODE + '/history/{event_ident}': {'GET': node_extra.get_history},
    NODE + '/children': {'GET': node_links.list_children},
    NODE + '/inventory': {'GET': node_links.get_inventory},
    '/v1/shards': {'GET': node_links.list_shards},
    '/v1/continue_inspection': {'POST': node_links.continue_inspection},
    NODE + '/firmware': {'GET': node_extra.list_firmware},
    NODE + '/allocation': {'GET': allocation.get_node_allocation,
                           'DELETE': allocation.delete_node_allocation},
    '/v1/allocations': {'GET': allocation.list_allocations,
                        'POST': allocation.create_allocation},
    ALLOCATION: {'GET': allocation.get_allocation,
                 'PATCH': allocation.update_allocation,
                 'DELETE': allocation.delete_allocation},
    # An extension of ours (upstream has no such path).
    ALLOCATION + '/retry': {'POST': allocation.retry_allocation},
    # Extensions of ours, at every version (no upstream counterpart).
    '/v1/allocation_groups': {'GET': allocation_group.list_groups,
                              'POST': allocation_group.create_group},
    '/v1/allocation_groups/{group_ident}': {
        'GET': allocation_group.get_group,
        'DELETE': allocation_group.delete_group},
    '/v1/conductors': {'GET': conductor.list_conductors},
    '/v1/conductors/{hostname}': {'GET': conductor.get_conductor},
    '/v1/drivers': {'GET': driver.list_drivers},
    '/v1/drivers/{driver_name}': {'GET': driver.get_driver},
    '/v1/drivers/{driver_name}/properties': {
        'GET': driver.get_driver_properties},
    '/v1/deferred_actions': {'GET': deferred_action.list_actions},
    '/v1/deferred_actions/{action_id}': {'GET': deferred_action.get_action},
    # Not upstream's: the Prometheus metrics of this API.
    prometheus.PATH: {'GET': metrics.get_metrics},
}

# Paths answered without authentication: the version documents, and the
# inspection call-back, which ramdisks reach without credentials.
PUBLIC_PATHS = ('/', '/v1', '/v1/', '/.json', '/v1.json',
                '/v1/continue_inspection')


class Request(webob.Request):
    """A request with the API's per-request state attached."""

    context = None
    version = None
    conf = None
    policy = None
    dispatcher = None

    @property
    def rpcapi(self):
        return self.dispatcher.rpcapi


def _make_mapper():
    mapper = routes.Mapper()
    for template, methods in ROUTES.items():
        # Routes turns extra arguments into strings: keep the template.
        mapper.connect(template, _template=template)
        if template != '/':
            mapper.connect(template + '/', _template=template)
    return mapper


# Dispatcher.notifier before its first use (None is a made notifier: none).
_NOT_MADE = object()


class Dispatcher:
    """The WSGI application behind the middleware."""

    def __init__(self, conf):
        self.conf = conf
        self.mapper = _make_mapper()
        self.policy = policy.Policy(conf)
        self._rpcapi = None
        self._notifier = _NOT_MADE

    @property
    def notifier(self):
        """The notifier of the versioned notifications, made on first use.

        None when no notification driver is configured.
        """
        if self._notifier is _NOT_MADE:
            self._notifier = notify.make_notifier(self.conf)
        return self._notifier

    @property
    def rpcapi(self):
        """The conductor RPC client, made on first use."""
        if self._rpcapi is None:
            from alloc_framework.conductor import rpcapi
            self._rpcapi = rpcapi.ConductorAPI(self.conf)
        return self._rpcapi

    def _match(self, path, version):
        match = self.mapper.match(path)
        # Up to 1.90 a trailing ``.json`` may be stripped; from 1.91 it is
        # part of the path, as upstream.
        if path.endswith('.json') and version < microversion.NO_JSON_SUFFIX:
            stripped = self.mapper.match(path[:-len('.json')])
            # ``/v1/nodes/detail.json`` is the detail listing, not a node
            # named ``detail.json``; names ending in .json are resolved by
            # the lookups (util.get_node), which try both.
            if stripped is not None and (
                    match is None or '{' not in stripped['_template']):
                match = stripped
        return match

    def __call__(self, environ, start_response):
        req = Request(environ)
        req.conf = self.conf
        req.policy = self.policy
        req.dispatcher = self
        version = None
        try:
            under_v1 = (req.path_info == '/v1'
                        or req.path_info.startswith('/v1/')
                        or req.path_info.startswith('/v1.'))
            version = microversion.negotiate(req.headers)
            req.version = version
            req.context = af_context.RequestContext.from_environ(environ)
            resp = self._dispatch(req)
        except Exception as exc:
            resp = errors.from_exception(exc)
            if resp is None:
                raise
        if under_v1 or req.path_info in ('/', ''):
            microversion.add_headers(resp, version)
        LOG.info('%(remote)s "%(method)s %(path)s" status: %(status)s '
                 'len: %(length)s version: %(version)s',
                 {'remote': req.remote_addr, 'method': req.method,
                  'path': req.path_qs, 'status': resp.status_int,
                  'length': resp.content_length, 'version': version})
        return resp(environ, start_response)

    def _dispatch(self, req):
        match = self._match(req.path_info or '/', req.version)
        if match is None:
            raise errors.HTTPError(
                404, 'The resource could not be found.', errors.NOT_FOUND)
        template = match.pop('_template')
        # The template, not the path: what the latency metrics are
        # labelled with (api/prometheus.py).
        req.environ[prometheus.ROUTE_KEY] = template
        methods = ROUTES[template]
        handler = methods.get(req.method)
        if handler is None and req.method == 'HEAD':
            handler = methods.get('GET')
        if handler is None:
            allow = ', '.join(sorted(methods))
            raise errors.HTTPError(
                405, 'The method %s is not allowed for this resource.'
                % req.method, errors.METHOD_NOT_ALLOWED,
                headers={'Allow': allow})
        return handler(req, **match)
