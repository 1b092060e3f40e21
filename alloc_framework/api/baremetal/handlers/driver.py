"""Drivers (hardware types): ``/v1/drivers``, ``/v1/drivers/{name}`` and
``/v1/drivers/{name}/properties``.

A hardware type is listed while a live conductor has it loaded; its
``hosts`` are those conductors. What depends on a conductor's
configuration (the enabled and default interfaces, the ``driver_info``
keys they take) is asked of one of those conductors over RPC, as upstream
asks a conductor for the properties.
"""

from alloc_framework.api.baremetal import errors
from alloc_framework.api.baremetal import microversion as mv
from alloc_framework.api.baremetal import util
from alloc_framework.common import exception
from alloc_framework.common import interface_kinds
from alloc_framework.objects.baremetal import conductor as conductor_obj

# The interface kinds shown from each version on (upstream's, for the
# kinds we have); kinds of plugins are shown with the first ones.
KIND_VERSIONS = {'bios': mv.BIOS_INTERFACE, 'firmware': mv.FIRMWARE}
# Upstream's types: only dynamic drivers (hardware types) remain.
TYPES = ('classic', 'dynamic')
SUMMARY_FIELDS = {'name': 1, 'hosts': 1, 'links': 1, 'properties': 1,
                  'type': mv.DRIVER_DETAILS}


def _hosts(req):
    """``{hardware type: sorted host names}`` of the live conductors."""
    hosts = {}
    for conductor in conductor_obj.Conductor.list_alive(
            req.context, req.conf.conductor.heartbeat_timeout):
        for name in conductor.drivers or []:
            hosts.setdefault(name, []).append(conductor.hostname)
    return {name: sorted(found) for name, found in hosts.items()}


def _kinds(req):
    return [kind.name for kind in interface_kinds.interface_kinds()
            if req.version.check(KIND_VERSIONS.get(kind.name,
                                                   mv.DRIVER_DETAILS))]


def _all_fields(req):
    """Every field of the representation at the request's version."""
    fields = [name for name, minor in SUMMARY_FIELDS.items()
              if req.version.check(minor)]
    if req.version.check(mv.DRIVER_DETAILS):
        for kind in _kinds(req):
            fields += ['default_%s_interface' % kind,
                       'enabled_%s_interfaces' % kind]
    return fields


def _fields_param(req):
    """``fields`` (1.77; 406 before, 400 for an unknown field)."""
    if 'fields' not in req.GET:
        return None
    if not req.version.check(mv.DRIVER_FIELDS):
        raise util.not_acceptable(req, 'The fields parameter')
    return util.fields_param(req, dict.fromkeys(_all_fields(req), 1))


def serialize(req, name, hosts, detail, fields=None):
    base = util.base_url(req)
    data = {'name': name, 'hosts': hosts,
            'links': util.links(req, 'drivers', name),
            'properties': [
                {'href': '%s/v1/drivers/%s/properties' % (base, name),
                 'rel': 'self'},
                {'href': '%s/drivers/%s/properties' % (base, name),
                 'rel': 'bookmark'}]}
    if req.version.check(mv.DRIVER_DETAILS):
        data['type'] = 'dynamic'
        wanted = fields is not None and any(
            f.endswith('_interface') or f.endswith('_interfaces')
            for f in fields)
        if detail or wanted:
            details = req.rpcapi.get_driver_details(req.context, name)
            for kind in _kinds(req):
                found = details.get(kind) or {}
                data['default_%s_interface' % kind] = found.get('default')
                data['enabled_%s_interfaces' % kind] = found.get(
                    'enabled', [])
    # As upstream, ``links`` stays whatever the fields.
    return util.filter_fields(data, fields)


def list_drivers(req):
    req.policy.authorize(req.context, 'baremetal:driver:get')
    driver_type = req.GET.get('type')
    detail = util.query_bool(req, 'detail')
    if ((driver_type is not None or detail is not None)
            and not req.version.check(mv.DRIVER_DETAILS)):
        raise util.not_acceptable(req, 'The type and detail parameters')
    if driver_type is not None and driver_type not in TYPES:
        raise errors.HTTPError(
            400, 'Invalid driver type %r: expected one of %s.'
            % (driver_type, ', '.join(TYPES)), errors.INVALID_QUERY)
    fields = _fields_param(req)
    if detail and fields is not None:
        raise errors.HTTPError(400, 'Can not specify ?detail=True and '
                               'fields in the same request.',
                               errors.INVALID_QUERY)
    if driver_type == 'classic':
        return util.json_response({'drivers': []})
    items = []
    for name, hosts in sorted(_hosts(req).items()):
        try:
            items.append(serialize(req, name, hosts, detail, fields))
        except exception.DriverNotFound:
            # Its conductors died since they were listed.
            continue
    return util.json_response({'drivers': items})


def get_driver(req, driver_name):
    req.policy.authorize(req.context, 'baremetal:driver:get')
    fields = _fields_param(req)
    hosts = _hosts(req).get(driver_name)
    if not hosts:
        raise exception.DriverNotFound(driver_name=driver_name)
    return util.json_response(serialize(req, driver_name, hosts, True,
                                        fields))


def get_driver_properties(req, driver_name):
    req.policy.authorize(req.context, 'baremetal:driver:get_properties')
    return util.json_response(
        req.rpcapi.get_driver_properties(req.context, driver_name))
