"""Content negotiation and JSON request bodies of the Placement API.

``require_content`` (415) and ``check_accept`` (406) decorate handlers;
``extract_json`` parses and validates a body against a schema (400).
"""

import functools

import jsonschema
from oslo_utils import uuidutils
import webob.exc

from alloc_framework.api import strict_json
from alloc_framework.common import schema as schema_utils

# Request bodies check ``format: uuid`` as the reference does: any string
# uuid.UUID accepts, dashes optional (jsonschema's own check wants them).
_BODY_FORMAT_CHECKER = jsonschema.FormatChecker()
_BODY_FORMAT_CHECKER.checks('uuid')(uuidutils.is_uuid_like)


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
        # jsonschema's full text, as the reference gives it: the problem,
        # the failed rule ("Failed validating 'maxLength' in schema[...]")
        # and the offending field ("On instance['name']").
        raise webob.exc.HTTPBadRequest(
            'JSON does not validate: %(error)s' % {'error': exc})
    return data


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
