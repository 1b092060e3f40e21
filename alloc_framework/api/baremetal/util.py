"""Helpers shared by the bare metal API handlers.

JSON bodies and responses, ``fields``, pagination and links, JSON patch,
and lookups of nodes and allocations by UUID or name.
"""

import datetime
import json
from urllib import parse

import jsonpatch
from oslo_utils import strutils
from oslo_utils import uuidutils
import webob

from alloc_framework.api.baremetal import errors
from alloc_framework.api.baremetal import microversion as mv
from alloc_framework.api.baremetal import policy
from alloc_framework.api import strict_json
from alloc_framework.common import exception
from alloc_framework.common import utils
from alloc_framework.objects import baremetal as _objects  # noqa: F401
from alloc_framework.objects.baremetal import allocation as allocation_obj
from alloc_framework.objects.baremetal import node as node_obj

MASK = '******'


def _default(value):
    if hasattr(value, 'isoformat'):
        if value.tzinfo is None:
            value = value.replace(tzinfo=datetime.timezone.utc)
        return value.isoformat()
    raise TypeError('%r is not JSON serializable' % value)


def json_response(body, status=200, headers=None):
    resp = webob.Response(status=status, content_type='application/json',
                          charset='utf-8')
    resp.text = json.dumps(body, default=_default)
    for name, value in (headers or {}).items():
        resp.headers[name] = value
    return resp


def no_content(status=204):
    resp = webob.Response(status=status)
    resp.content_type = None
    return resp


def json_body(req):
    """The request body as a JSON document (None when there is none).

    :raises: HTTPError 415 when a body is not ``application/json``, 400
        when it is not strict JSON (see ``strict_json``).
    """
    body = req.body
    if body and req.content_type != 'application/json':
        raise errors.HTTPError(
            415, 'The media type %s is not supported, use application/json'
            % (req.content_type or None), errors.UNSUPPORTED_MEDIA_TYPE)
    try:
        return strict_json.loads(body or b'null')
    except strict_json.InvalidJSON as exc:
        if exc.field is not None:
            raise errors.HTTPError(400, str(exc), errors.INVALID_FIELD)
        raise errors.HTTPError(400, 'The request body is not valid JSON: %s'
                               % exc, errors.INVALID_JSON)


def json_object(req):
    body = json_body(req)
    if not isinstance(body, dict):
        raise errors.HTTPError(400, 'The request body must be a JSON object.',
                               errors.INVALID_BODY)
    return body


def not_acceptable(req, what):
    """406 for a feature that the requested version does not have."""
    return errors.HTTPError(
        406, '%s is not available in API version %s.' % (what, req.version),
        errors.VERSION_NOT_ACCEPTABLE)


def resource_not_found():
    return errors.HTTPError(404, 'The resource could not be found.',
                            errors.NOT_FOUND)


# --- query parameters --------------------------------------------------------

def query_bool(req, name):
    value = req.GET.get(name)
    if value is None:
        return None
    try:
        return strutils.bool_from_string(value, strict=True)
    except ValueError:
        raise errors.HTTPError(400, 'Invalid value %r for %s: expected a '
                               'boolean.' % (value, name),
                               errors.INVALID_QUERY)


def fields_param(req, available):
    """The ``fields`` query parameter as a list, or None when absent.

    :param available: {field: minimum minor version}.
    :raises: 400 for an unknown field, 406 for a field of a later version.
    """
    value = req.GET.get('fields')
    if value is None:
        return None
    fields = [f.strip() for f in value.split(',') if f.strip()]
    unknown = [f for f in fields if f not in available]
    if unknown or not fields:
        bad = ', '.join(unknown or [value])
        raise errors.HTTPError(400, 'Field(s) "%s" are not valid' % bad,
                               errors.INVALID_FIELD)
    for name in fields:
        if not req.version.check(available[name]):
            raise errors.HTTPError(
                406, 'Field %s is not available in API version %s.'
                % (name, req.version), errors.VERSION_NOT_ACCEPTABLE)
    return fields


def pagination(req, sort_keys, default_sort='id', uuid_marker=True):
    """``limit``, ``marker``, ``sort_key`` and ``sort_dir``.

    A missing or zero limit means ``[api]max_limit``; larger limits are
    capped to it.

    :param uuid_marker: whether the marker is a UUID (checked and made
        canonical); else it is returned as given.
    """
    max_limit = req.conf.api.max_limit
    raw = req.GET.get('limit')
    if raw is None:
        limit = max_limit
    else:
        try:
            limit = int(raw)
        except ValueError:
            raise errors.HTTPError(400, 'Invalid limit %r: expected an '
                                   'integer.' % raw, errors.INVALID_QUERY)
        if limit < 0:
            raise errors.HTTPError(400, 'Limit must be positive',
                                   errors.INVALID_QUERY)
        limit = min(limit, max_limit) if limit else max_limit
    sort_key = req.GET.get('sort_key', default_sort)
    if sort_key not in sort_keys:
        raise errors.HTTPError(
            400, 'The sort_key value "%s" is an invalid field for sorting'
            % sort_key, errors.INVALID_QUERY)
    sort_dir = req.GET.get('sort_dir', 'asc')
    if sort_dir not in ('asc', 'desc'):
        raise errors.HTTPError(
            400, "Invalid sort direction: %s. Acceptable values are 'asc' "
                 "or 'desc'" % sort_dir, errors.INVALID_QUERY)
    marker = req.GET.get('marker')
    if marker is not None and uuid_marker:
        if not uuidutils.is_uuid_like(marker):
            raise errors.HTTPError(400, 'Invalid marker %r: expected a '
                                   'UUID.' % marker, errors.INVALID_QUERY)
        marker = utils.canonical_uuid(marker)
    return limit, marker, sort_key, sort_dir


# --- links -------------------------------------------------------------------

def base_url(req):
    public = req.conf.api.public_endpoint
    if public:
        return public.rstrip('/')
    return req.host_url + req.script_name


def links(req, collection, ident):
    base = base_url(req)
    return [{'href': '%s/v1/%s/%s' % (base, collection, ident),
             'rel': 'self'},
            {'href': '%s/%s/%s' % (base, collection, ident),
             'rel': 'bookmark'}]


def collection(req, key, items, limit, path=None):
    """``{key: items}`` plus a ``next`` link when the page is full."""
    body = {key: items}
    if items and limit and len(items) >= limit and 'uuid' in items[-1]:
        body['next'] = next_link(req, path or key, items[-1]['uuid'],
                                 limit)
    return body


def next_link(req, path, marker, limit):
    """The URL of the page after ``marker``, with the request's query."""
    params = [(k, v) for k, v in req.GET.items() if k != 'marker']
    if 'limit' not in req.GET:
        params.append(('limit', str(limit)))
    params.append(('marker', marker))
    return '%s/v1/%s?%s' % (base_url(req), path, parse.urlencode(params))


def filter_fields(data, fields):
    if fields is None:
        return data
    return {k: v for k, v in data.items() if k in fields or k == 'links'}


# --- JSON patch --------------------------------------------------------------

def apply_patch(doc, patch):
    """Apply a JSON patch to ``doc`` (a dict).

    :raises: 400 for a malformed patch or one that cannot apply.
    """
    if not isinstance(patch, list) or not patch:
        raise errors.HTTPError(400, 'The request body must be a non-empty '
                               'JSON patch (a list of operations).',
                               errors.INVALID_PATCH)
    for op in patch:
        if (not isinstance(op, dict) or op.get('op') not in
                ('add', 'replace', 'remove')
                or not isinstance(op.get('path'), str)
                or not op['path'].startswith('/')):
            raise errors.HTTPError(
                400, 'Invalid patch operation %s: "op" must be add, '
                     'replace or remove and "path" must start with "/".'
                % json.dumps(op), errors.INVALID_PATCH)
        if op['op'] != 'remove' and 'value' not in op:
            raise errors.HTTPError(400, "'add' and 'replace' operations "
                                   "need a value (path %s)" % op['path'],
                                   errors.INVALID_PATCH)
    try:
        patched = jsonpatch.apply_patch(doc, patch)
        # Values added below existing ones must not grow a document
        # beyond the nesting limit of request bodies.
        strict_json.check_depth(patched)
    except (jsonpatch.JsonPatchException,
            jsonpatch.JsonPointerException, KeyError, TypeError,
            IndexError, strict_json.InvalidJSON) as exc:
        raise errors.HTTPError(400, 'Patch cannot be applied: %s' % exc,
                               errors.INVALID_PATCH)
    return patched


# --- lookups -----------------------------------------------------------------

def _with_suffix(req, lookup, ident):
    try:
        return lookup(ident)
    except exception.NotFound:
        # Up to 1.90 ``foo.json`` may be ``foo`` asked for with the JSON
        # suffix; from 1.91 it is only ``foo.json``.
        if (isinstance(ident, str) and ident.endswith('.json')
                and req.version < mv.NO_JSON_SUFFIX):
            return lookup(ident[:-len('.json')])
        raise


def get_node(req, ident, rule=None):
    """The node by UUID or name, checking ``rule`` when given.

    A node the caller may not even see (``baremetal:node:get``) is not
    found (404), so that other projects' nodes are not revealed; a visible
    node whose ``rule`` is denied answers 403.

    :raises: 400 when ``ident`` is neither, NodeNotFound (404).
    """
    node = _get_node(req, ident)
    if rule is not None:
        target = policy.node_target(node)
        if not req.policy.check(req.context, 'baremetal:node:get', target):
            raise exception.NodeNotFound(node=ident)
        req.policy.authorize(req.context, rule, target)
    return node


def _get_node(req, ident):
    def lookup(value):
        if uuidutils.is_uuid_like(value):
            return node_obj.Node.get_by_uuid(req.context,
                                             utils.canonical_uuid(value))
        if req.version.check(5) and utils.is_valid_logical_name(value):
            return node_obj.Node.get_by_name(req.context, value)
        raise exception.InvalidIdentity(identity=value)

    return _with_suffix(req, lookup, ident)


def get_allocation(req, ident, fields=None):
    """The allocation by UUID or name.

    :param fields: the object fields to read, or None for all (see
        ``Allocation.get_by_name``).
    :raises: 400 when ``ident`` is neither, AllocationNotFound (404).
    """
    def lookup(value):
        if uuidutils.is_uuid_like(value):
            return allocation_obj.Allocation.get_by_uuid(
                req.context, utils.canonical_uuid(value), fields=fields)
        if utils.is_valid_logical_name(value):
            return allocation_obj.Allocation.get_by_name(
                req.context, value, fields=fields)
        raise exception.InvalidIdentity(identity=value)

    return _with_suffix(req, lookup, ident)


def mask_secrets(data):
    """A copy of a dict with password-like values replaced by ******."""
    if not data:
        return data
    return strutils.mask_dict_password(data, MASK)
