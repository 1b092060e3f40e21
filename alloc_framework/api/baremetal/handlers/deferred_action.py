"""Deferred actions: a read-only operator view of the conductors' work.

``GET /v1/deferred_actions`` (``state``, ``node``, ``limit``, ``marker``,
``detail``) and ``GET /v1/deferred_actions/{uuid}``, for admins only.
Actions the clean-up deleted are not shown.
"""

from oslo_utils import uuidutils

from alloc_framework.api.baremetal.schemas import deferred_action as schema
from alloc_framework.api.baremetal import util
from alloc_framework.common import exception
from alloc_framework.common import utils
from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import deferred_action as da

RULE = 'baremetal:deferred_action:get'
FIELDS = ('uuid', 'node_uuid', 'state', 'call', 'start_after',
          'retry_remaining', 'created_at', 'updated_at')
DETAIL_FIELDS = FIELDS + ('arguments', 'result', 'reschedule_count',
                          'deadline', 'conductor', 'created_by',
                          'request_id', 'user_id', 'parent_action')


def _action(req, action, node_uuids, fields):
    data = {name: getattr(action, name) for name in fields
            if name != 'node_uuid'}
    data['node_uuid'] = node_uuids.get(action.node_id)
    data['links'] = util.links(req, 'deferred_actions', action.uuid)
    return data


def list_actions(req):
    req.policy.authorize(req.context, RULE)
    query = schema.validate_list_query(req.GET)
    limit, marker, _key, _dir = util.pagination(req, ('id',))
    filters = {'state': query.get('state')}
    if 'node' in query:
        filters['node_id'] = util.get_node(req, query['node']).id
    actions = objects.DeferredAction.list(req.context, filters=filters,
                                          limit=limit, marker=marker)
    node_uuids = da.node_uuids(req.context, {a.node_id for a in actions})
    fields = DETAIL_FIELDS if util.query_bool(req, 'detail') else FIELDS
    items = [_action(req, a, node_uuids, fields) for a in actions]
    return util.json_response(util.collection(
        req, 'deferred_actions', items, limit, path='deferred_actions'))


def get_action(req, action_id):
    req.policy.authorize(req.context, RULE)
    if not uuidutils.is_uuid_like(action_id):
        raise exception.DeferredActionNotFound(action=action_id)
    action = objects.DeferredAction.get_by_uuid(
        req.context, utils.canonical_uuid(action_id))
    node_uuids = da.node_uuids(req.context, {action.node_id})
    return util.json_response(_action(req, action, node_uuids,
                                      DETAIL_FIELDS))
