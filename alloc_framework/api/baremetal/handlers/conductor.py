"""Conductors: ``/v1/conductors`` and ``/v1/conductors/{hostname}`` (1.49).

Read-only, straight from the Conductor objects. A conductor is ``alive``
while it is online and its heartbeat is younger than
``[conductor]heartbeat_timeout``, the condition under which it is on the
hash ring.
"""

from alloc_framework.api.baremetal import errors
from alloc_framework.api.baremetal import microversion as mv
from alloc_framework.api.baremetal import util
from alloc_framework.objects.baremetal import conductor as conductor_obj

# Every field of the representation -> first minor version.
FIELDS = {'hostname': mv.CONDUCTORS, 'conductor_group': mv.CONDUCTORS,
          'alive': mv.CONDUCTORS, 'drivers': mv.CONDUCTORS,
          'created_at': mv.CONDUCTORS, 'updated_at': mv.CONDUCTORS}
# What the listing shows without ``fields`` or ``detail``.
SUMMARY_FIELDS = ('hostname', 'conductor_group', 'alive')
RULE = 'baremetal:conductor:get'


def _check_version(req):
    # As upstream, the resource does not exist before its version.
    if not req.version.check(mv.CONDUCTORS):
        raise util.resource_not_found()


def serialize(req, conductor, fields=None):
    data = {'hostname': conductor.hostname,
            'conductor_group': conductor.conductor_group or '',
            'alive': conductor.is_alive(
                req.conf.conductor.heartbeat_timeout),
            'drivers': sorted(conductor.drivers or []),
            'created_at': conductor.created_at,
            'updated_at': conductor.updated_at,
            'links': util.links(req, 'conductors', conductor.hostname)}
    return util.filter_fields(data, fields)


def list_conductors(req):
    _check_version(req)
    req.policy.authorize(req.context, RULE)
    fields = util.fields_param(req, FIELDS)
    detail = util.query_bool(req, 'detail')
    if detail and fields is not None:
        raise errors.HTTPError(400, 'Can not specify ?detail=True and '
                               'fields in the same request.',
                               errors.INVALID_QUERY)
    limit, marker, sort_key, sort_dir = util.pagination(
        req, conductor_obj.SORT_KEYS, uuid_marker=False)
    conductors = conductor_obj.Conductor.list(
        req.context, limit=limit, marker=marker, sort_key=sort_key,
        sort_dir=sort_dir)
    if fields is None and not detail:
        fields = SUMMARY_FIELDS
    items = [serialize(req, c, fields) for c in conductors]
    body = {'conductors': items}
    if items and len(items) >= limit:
        # The marker of conductors is their host name.
        body['next'] = util.next_link(req, 'conductors',
                                      conductors[-1].hostname, limit)
    return util.json_response(body)


def get_conductor(req, hostname):
    _check_version(req)
    req.policy.authorize(req.context, RULE)
    fields = util.fields_param(req, FIELDS)
    conductor = conductor_obj.Conductor.get_by_hostname(req.context,
                                                        hostname)
    return util.json_response(serialize(req, conductor, fields))
