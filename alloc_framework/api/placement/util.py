"""Helpers shared by the Placement handlers and middleware.

Error bodies, JSON in and out, query parameter normalisation and URL
building. Nothing here touches the database.
"""

import copy
import functools
import re

import jsonschema
from oslo_middleware import request_id
from oslo_serialization import jsonutils
from oslo_utils import timeutils
from oslo_utils import uuidutils
import webob
import webob.exc

from alloc_framework.api import limits
from alloc_framework.api.placement import errors
from alloc_framework.api.placement import microversion
from alloc_framework.api import strict_json
from alloc_framework.common import schema as schema_utils

# Where a handler's error code travels from the raised exception to the
# error body formatter.
ENV_ERROR_CODE = 'placement.error_code'
# Prefix of a forbidden trait or aggregate in query parameters.
FORBIDDEN_PREFIX = '!'
# Value prefix of "any of" lists (member_of=in:..., required=in:...).
IN_PREFIX = 'in:'
_QS_RESOURCES = 'resources'

# Request bodies check ``format: uuid`` as the reference does: any string
# uuid.UUID accepts, dashes optional (jsonschema's own check wants them).
_BODY_FORMAT_CHECKER = jsonschema.FormatChecker()
_BODY_FORMAT_CHECKER.checks('uuid')(uuidutils.is_uuid_like)
_QS_REQUIRED = 'required'
_QS_MEMBER_OF = 'member_of'
_QS_IN_TREE = 'in_tree'
_QS_KEY_PATTERN = re.compile(
    r'^(%s)([a-zA-Z0-9_-]{1,64})?$' % '|'.join(
        (_QS_RESOURCES, _QS_REQUIRED, _QS_MEMBER_OF, _QS_IN_TREE)))


# --- errors ------------------------------------------------------------------

def json_error_formatter(body, status, title, environ):
    """A webob ``json_formatter`` producing the API's error document.

    ``{"errors": [{"status", "title", "detail", "request_id", "code"}]}``;
    ``code`` only when the request's microversion is 1.23 or later.
    """
    # webob hands over an HTML-ish body; keep the plain text.
    body = webob.exc.strip_tags(body)
    status_code = int(status.split(None, 1)[0])
    error = {
        'status': status_code,
        'title': title,
        'detail': body,
    }
    # The version is missing when parsing it was the error: then the
    # minimum version applies and there is no code.
    want = environ.get(microversion.MICROVERSION_ENVIRON)
    if want is not None and want.matches((1, 23)):
        error['code'] = environ.get(ENV_ERROR_CODE) or errors.DEFAULT
    if request_id.ENV_REQUEST_ID in environ:
        error['request_id'] = environ[request_id.ENV_REQUEST_ID]
    return {'errors': [error]}


def _wants_json(accept):
    """True unless the client explicitly prefers HTML or plain text.

    Clients that send no Accept header, or only wildcards, get the JSON
    error document of the reference.
    """
    if not accept:
        return True
    header = webob.acceptparse.create_accept_header(accept)
    # Ordered by the client's preference; ties keep JSON first.
    offers = header.acceptable_offers(['application/json', 'text/html',
                                       'text/plain'])
    return not offers or offers[0][0] == 'application/json'


def error_response(req, exc, code=None):
    """Turn a webob HTTP exception into the response the client gets."""
    environ = dict(req.environ)
    if code is not None:
        environ[ENV_ERROR_CODE] = code
    if _wants_json(environ.get('HTTP_ACCEPT')):
        environ['HTTP_ACCEPT'] = 'application/json'
    exc.json_formatter = json_error_formatter
    # Keep the original environ for the caller; render on a copy.
    return webob.Request(environ).get_response(exc)


# --- request body and headers ------------------------------------------------

def extract_json(body, schema):
    """The JSON document of ``body`` validated against ``schema``.

    :raises webob.exc.HTTPBadRequest: not strict JSON (see
        ``strict_json``), or not valid; the message names the offending
        field.
    """
    try:
        data = strict_json.loads(body)
    except ValueError as exc:
        raise webob.exc.HTTPBadRequest(
            'Malformed JSON: %(error)s' % {'error': exc})
    try:
        schema_utils.validate(data, schema,
                              format_checker=_BODY_FORMAT_CHECKER)
    except jsonschema.ValidationError as exc:
        raise webob.exc.HTTPBadRequest(
            'JSON does not validate: %(error)s' % {'error': _schema_msg(exc)})
    return data


def _schema_msg(exc):
    # jsonschema's full text, as the reference gives it: the problem, the
    # failed rule ("Failed validating 'maxLength' in schema[...]") and the
    # offending field ("On instance['name']").
    return str(exc)


def require_content(content_type):
    """Decorator: 415 unless the request body has ``content_type``."""
    def decorator(f):
        @functools.wraps(f)
        def decorated(req, *args, **kwargs):
            if req.content_type != content_type:
                # webob's exceptions add their own explanation to the body;
                # keep only ours.
                if not req.content_type:
                    msg = 'The media type None is not supported, use %s'
                    raise webob.exc.HTTPUnsupportedMediaType(
                        msg % content_type)
                raise webob.exc.HTTPUnsupportedMediaType(
                    'The media type %(bad)s is not supported, use %(good)s'
                    % {'bad': req.content_type, 'good': content_type})
            return f(req, *args, **kwargs)
        return decorated
    return decorator


def check_accept(*types):
    """Decorator: 406 if the client accepts none of ``types``."""
    def decorator(f):
        @functools.wraps(f)
        def decorated(req, *args, **kwargs):
            if req.accept:
                if not req.accept.acceptable_offers(list(types)):
                    raise webob.exc.HTTPNotAcceptable(
                        'Only %(type)s is provided' % {
                            'type': ', '.join(types)})
            return f(req, *args, **kwargs)
        return decorated
    return decorator


def send_json(req, data, status=200, last_modified=None):
    """Put ``data`` as JSON in ``req.response`` and return the response.

    From microversion 1.15 the response carries ``cache-control:
    no-cache`` and, when given, ``last-modified``.
    """
    resp = req.response
    resp.status = status
    resp.body = jsonutils.dump_as_bytes(data)
    resp.content_type = 'application/json'
    resp.charset = None
    want = req.environ[microversion.MICROVERSION_ENVIRON]
    if want.matches((1, 15)):
        resp.cache_control = 'no-cache'
        if last_modified is not None:
            resp.last_modified = last_modified
    return resp


def no_content(req, status=204, location=None, cache_headers=True):
    """An empty response (204 by default), with ``location`` if given.

    From 1.15 it has ``cache-control`` and ``last-modified`` unless
    ``cache_headers`` is False (the reference omits them on creations and
    deletions of resource classes, for example).
    """
    resp = req.response
    resp.status = status
    resp.content_type = None
    resp.body = b''
    if location:
        resp.location = location
    want = req.environ[microversion.MICROVERSION_ENVIRON]
    if cache_headers and want.matches((1, 15)):
        resp.cache_control = 'no-cache'
        resp.last_modified = timeutils.utcnow(with_timezone=True)
    return resp


def pick_last_modified(last_modified, obj):
    """The later of ``last_modified`` and ``obj``'s updated/created time."""
    current = getattr(obj, 'updated_at', None) or getattr(
        obj, 'created_at', None)
    if current is None:
        current = timeutils.utcnow(with_timezone=True)
    if current.tzinfo is None:
        current = current.replace(tzinfo=timeutils.utcnow(
            with_timezone=True).tzinfo)
    if last_modified is None or current > last_modified:
        return current
    return last_modified


# --- URLs --------------------------------------------------------------------

def wsgi_path_item(environ, name):
    """The value of ``{name}`` in the matched route, or None."""
    try:
        return environ['wsgiorg.routing_args'][1][name]
    except (KeyError, IndexError):
        return None


def _prefix(environ):
    return environ.get('SCRIPT_NAME', '')


def resource_provider_url(environ, resource_provider):
    return '%s/resource_providers/%s' % (_prefix(environ),
                                         resource_provider.uuid)


def inventory_url(environ, resource_provider, resource_class=None):
    url = '%s/inventories' % resource_provider_url(environ,
                                                   resource_provider)
    if resource_class:
        url = '%s/%s' % (url, resource_class)
    return url


def resource_class_url(environ, resource_class):
    name = getattr(resource_class, 'name', resource_class)
    return '%s/resource_classes/%s' % (_prefix(environ), name)


def trait_url(environ, trait):
    name = getattr(trait, 'name', trait)
    return '%s/traits/%s' % (_prefix(environ), name)


# --- query parameters --------------------------------------------------------

def validate_query_params(req, schema):
    """Validate ``req.GET`` (as a dict of lists or values) against schema.

    Keys the schema declares as arrays get every value; other keys get the
    last one. 400 with the offending parameter in the message.
    """
    props = schema.get('properties', {})
    params = {}
    for key in req.GET.keys():
        values = req.GET.getall(key)
        if props.get(key, {}).get('type') == 'array':
            params[key] = values
        else:
            params[key] = values[-1]
    # Keys matching patternProperties of type array also get every value.
    for pattern, sub in schema.get('patternProperties', {}).items():
        if sub.get('type') == 'array':
            regex = re.compile(pattern)
            for key in req.GET.keys():
                if regex.match(key):
                    params[key] = req.GET.getall(key)
    try:
        schema_utils.validate(params, schema)
    except jsonschema.ValidationError as exc:
        raise webob.exc.HTTPBadRequest(
            'Invalid query string parameters: %(exc)s' % {
                'exc': _schema_msg(exc)})


def normalize_resources_qs_param(qs):
    """``"VCPU:2,MEMORY_MB:1024"`` -> ``{'VCPU': 2, 'MEMORY_MB': 1024}``.

    :raises webob.exc.HTTPBadRequest: malformed value or amount.
    """
    if qs.strip() == '':
        raise webob.exc.HTTPBadRequest(
            'Badly formed resources parameter. Expected resources query '
            'string parameter in form: ?resources=VCPU:2,MEMORY_MB:1024. '
            'Got: empty string.')
    result = {}
    for pair in qs.split(','):
        try:
            rc_name, amount = pair.split(':')
        except ValueError:
            # The bad part, as the reference reports it ('' for a
            # trailing comma).
            raise webob.exc.HTTPBadRequest(
                'Badly formed resources parameter. Expected resources query '
                'string parameter in form: ?resources=VCPU:2,MEMORY_MB:1024. '
                'Got: %s.' % pair)
        try:
            amount = int(amount)
        except ValueError:
            raise webob.exc.HTTPBadRequest(
                'Requested resource %(name)s expected positive integer '
                'amount. Got: %(amount)s.' % {'name': rc_name,
                                              'amount': amount})
        if amount < 1:
            raise webob.exc.HTTPBadRequest(
                'Requested resource %(name)s requires amount >= 1. '
                'Got: %(amount)d.' % {'name': rc_name, 'amount': amount})
        if amount > limits.MAX_INT:
            raise webob.exc.HTTPBadRequest(
                'Requested resource %(name)s requires amount <= %(max)d. '
                'Got: %(amount)d.' % {'name': rc_name, 'amount': amount,
                                      'max': limits.MAX_INT})
        result[rc_name] = amount
    return result


def _bad_required(val, allow_forbidden):
    form = ('HW_CPU_X86_VMX,!CUSTOM_MAGIC' if allow_forbidden
            else 'HW_CPU_X86_VMX,CUSTOM_MAGIC')
    return webob.exc.HTTPBadRequest(
        "Invalid query string parameters: Expected 'required' parameter "
        "value of the form: %(form)s. Got: %(val)s"
        % {'form': form, 'val': val})


def normalize_traits_qs_param_to_legacy_value(val, allow_forbidden=False):
    """One ``required`` value as (required set, forbidden set).

    Accepts ``T1,!T2``; forbidden traits only when ``allow_forbidden``
    (microversion 1.22), before that ``!T2`` is a malformed value.
    """
    required, forbidden = set(), set()
    for trait in (t.strip() for t in val.split(',')):
        if not trait or trait == FORBIDDEN_PREFIX:
            raise _bad_required(val, allow_forbidden)
        if trait.startswith(FORBIDDEN_PREFIX):
            if not allow_forbidden:
                raise _bad_required(val, allow_forbidden)
            forbidden.add(trait[1:])
        else:
            required.add(trait)
    return required, forbidden


def normalize_traits_qs_param(val, allow_forbidden=False,
                              allow_any_traits=False):
    """One ``required`` value as (list of any-of sets, forbidden set).

    Each entry of the list is a set of traits of which at least one is
    required; ``T1,T2`` is ``[{T1}, {T2}]`` and, from microversion 1.39
    (``allow_any_traits``), ``in:T1,T2`` is ``[{T1, T2}]``.

    :raises webob.exc.HTTPBadRequest: empty names, ``in:`` before 1.39,
        ``!`` before 1.22, or a forbidden trait inside ``in:``.
    """
    if val.startswith(IN_PREFIX):
        if not allow_any_traits:
            raise webob.exc.HTTPBadRequest(
                "The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported "
                "since microversion 1.39. Got: %s" % val)
        names = [t.strip() for t in val[len(IN_PREFIX):].split(',')]
        if not all(names) or any(n.startswith(FORBIDDEN_PREFIX)
                                 for n in names):
            raise webob.exc.HTTPBadRequest(
                "Invalid query string parameters: Expected 'required' "
                "parameter value of the form: in:HW_CPU_X86_VMX,"
                "CUSTOM_MAGIC. Got: %s" % val)
        return [set(names)], set()
    required, forbidden = normalize_traits_qs_param_to_legacy_value(
        val, allow_forbidden)
    return [{t} for t in sorted(required)], forbidden


def normalize_traits_qs_params(req, suffix='', allow_forbidden=False,
                               allow_any_traits=False):
    """Every ``required<suffix>`` value merged (repeatable from 1.39)."""
    any_traits = []
    forbidden = set()
    values = req.GET.getall(_QS_REQUIRED + suffix)
    if len(values) > 1 and not allow_any_traits:
        values = values[-1:]
    for value in values:
        a, f = normalize_traits_qs_param(value, allow_forbidden,
                                         allow_any_traits)
        any_traits.extend(a)
        forbidden |= f
    return any_traits, forbidden


def _member_of_value(value, allow_forbidden):
    """One ``member_of`` value as (uuid set, is_forbidden)."""
    original = value
    forbidden = value.startswith(FORBIDDEN_PREFIX)
    if forbidden and not allow_forbidden:
        raise webob.exc.HTTPBadRequest(
            'Forbidden member_of parameters are not supported in the '
            'specified microversion')
    if forbidden:
        value = value[1:]
    if value.startswith(IN_PREFIX):
        value = value[len(IN_PREFIX):]
    elif ',' in value:
        raise webob.exc.HTTPBadRequest(
            "Multiple values for 'member_of' must be prefixed with the "
            "'in:' keyword. Got: %s" % original)
    uuids = [v.strip() for v in value.split(',')]
    for uuid in uuids:
        if not uuidutils.is_uuid_like(uuid):
            raise webob.exc.HTTPBadRequest(
                "Invalid query string parameters: Expected 'member_of' "
                "parameter to contain valid UUID(s). Got: %s" % original)
    return set(uuids), forbidden


def normalize_member_of_qs_params(req, suffix=''):
    """The ``member_of<suffix>`` parameters as (list of sets, forbidden).

    Each set of the list is an any-of group (``in:a,b``) that must all be
    satisfied. Before 1.24 only one parameter is allowed; from 1.32
    ``!uuid`` and ``!in:...`` name forbidden aggregates.
    """
    want = req.environ[microversion.MICROVERSION_ENVIRON]
    allow_multi = want.matches((1, 24))
    allow_forbidden = want.matches((1, 32))
    values = req.GET.getall(_QS_MEMBER_OF + suffix)
    if len(values) > 1 and not allow_multi:
        raise webob.exc.HTTPBadRequest(
            'Multiple member_of parameters are not supported until '
            'microversion 1.24.')
    required = []
    forbidden = set()
    for value in values:
        uuids, is_forbidden = _member_of_value(value, allow_forbidden)
        if is_forbidden:
            forbidden |= uuids
        else:
            required.append(uuids)
    return required, forbidden


def normalize_in_tree_qs_params(value):
    """The ``in_tree`` value: a provider uuid (400 if not a uuid)."""
    if not uuidutils.is_uuid_like(value):
        raise webob.exc.HTTPBadRequest(
            'Invalid query string parameters: Expected \'in_tree\' '
            'parameter to be a format of uuid. Got: %s' % value)
    return value


def parse_qs_request_groups_keys(req):
    """The request group suffixes present in the query string, sorted."""
    suffixes = set()
    for key in req.GET.keys():
        match = _QS_KEY_PATTERN.match(key)
        if match:
            suffixes.add(match.group(2) or '')
    return sorted(suffixes)


def deepcopy_schema(schema):
    """A copy of ``schema`` to derive the next microversion's schema."""
    return copy.deepcopy(schema)
