"""Responses of the Placement API: JSON documents and error bodies.

``send_json`` and ``no_content`` fill ``req.response`` with the headers
the request's microversion calls for; ``error_response`` renders a webob
HTTP exception as the API's JSON error document. Nothing here touches the
database.
"""

import json

from oslo_middleware import request_id
from oslo_serialization import jsonutils
from oslo_utils import timeutils
import webob
import webob.exc

from alloc_framework.api.placement import errors
from alloc_framework.api.placement import microversion

# Where a handler's error code travels from the raised exception to the
# error body formatter.
ENV_ERROR_CODE = 'placement.error_code'


def json_error_formatter(body, status, title, environ):
    """A webob ``json_formatter`` producing the API's error document.

    ``{"errors": [{"status", "title", "detail", "request_id", "code"}]}``;
    ``code`` only when the request's microversion is 1.23 or later;
    ``min_version`` and ``max_version`` on a 406 refusing the requested
    microversion.
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
    if want is not None and want.matches(microversion.ERROR_CODES):
        error['code'] = environ.get(ENV_ERROR_CODE) or errors.DEFAULT
    if request_id.ENV_REQUEST_ID in environ:
        error['request_id'] = environ[request_id.ENV_REQUEST_ID]
    # A 406 before any version was chosen refused the requested version:
    # say which ones are served, as the reference does.
    if status_code == 406 and want is None:
        error['min_version'] = microversion.min_version_string()
        error['max_version'] = microversion.max_version_string()
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


def send_json(req, data, status=200, last_modified=None):
    """Put ``data`` as JSON in ``req.response`` and return the response.

    From microversion 1.15 the response carries ``cache-control:
    no-cache`` and, when given, ``last-modified``.
    """
    return send_json_text(req, jsonutils.dumps(data), status=status,
                          last_modified=last_modified)


# The text of a JSON document: the same separators (", " and ": ") as
# jsonutils.dumps, for the plain values (str, int, float, bool, None,
# list, dict) it is given.
json_text = json.JSONEncoder().encode


def json_list(items):
    """The JSON text of a list of plain values, encoded one at a time.

    The same text as ``jsonutils.dumps(list(items))``; a large list of
    small documents is then never held as nested objects all at once
    (only as their text), and is encoded without them.
    """
    return '[%s]' % ', '.join(map(json_text, items))


def json_object(members, encoded=False):
    """The JSON text of an object given as ``(name, plain value)`` pairs,
    in order, encoded one at a time (see ``json_list``); with
    ``encoded``, the values are JSON text already."""
    if encoded:
        return '{%s}' % ', '.join('%s: %s' % (json_text(name), value)
                                  for name, value in members)
    return '{%s}' % ', '.join('%s: %s' % (json_text(name), json_text(value))
                              for name, value in members)


def send_json_text(req, text, status=200, last_modified=None):
    """``send_json`` for a document already encoded as JSON ``text``."""
    resp = req.response
    resp.status = status
    resp.body = text.encode('utf-8')
    resp.content_type = 'application/json'
    resp.charset = None
    want = microversion.request_version(req)
    if want.matches(microversion.CACHE_HEADERS):
        resp.cache_control = 'no-cache'
        if last_modified is not None:
            resp.last_modified = last_modified
    return resp


def send_json_chunks(req, first, stream=None, status=200,
                     last_modified=None):
    """``send_json_text`` for a document of one chunk of text, ``first``,
    or, with ``stream``, sent as ``stream`` (bytes) yields it: then
    without a ``Content-Length`` (chunked), and a WSGI server may write
    each piece as it comes (``common.wsgi_service`` does)."""
    resp = send_json_text(req, first, status=status,
                          last_modified=last_modified)
    if stream is not None:
        resp.app_iter = stream
        resp.content_length = None
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
    want = microversion.request_version(req)
    if cache_headers and want.matches(microversion.CACHE_HEADERS):
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
