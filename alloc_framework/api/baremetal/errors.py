"""Error responses of the bare metal API and their stable error codes.

The body has the upstream bare metal service's shape, which its clients
parse: ``{"error_message": "<JSON string>"}`` where the JSON string holds
``faultstring`` (the message), ``faultcode`` (``Client`` for 4xx,
``Server`` for 5xx) and ``debuginfo`` (always null). We add ``code``, a
stable machine-readable error code: clients branch on it, never on the
message. Codes are never changed or reused.
"""

import json
import re

import webob

from alloc_framework.common import exception

# Codes raised by the web layer itself.
INVALID_JSON = 'baremetal.invalid_json'
INVALID_BODY = 'baremetal.invalid_body'
INVALID_QUERY = 'baremetal.invalid_query'
INVALID_FIELD = 'baremetal.invalid_field'
READ_ONLY_FIELD = 'baremetal.read_only_field'
INVALID_PATCH = 'baremetal.invalid_patch'
VERSION_INVALID = 'baremetal.version_invalid'
VERSION_NOT_ACCEPTABLE = 'baremetal.version_not_acceptable'
NOT_FOUND = 'baremetal.not_found'
METHOD_NOT_ALLOWED = 'baremetal.method_not_allowed'
UNSUPPORTED_MEDIA_TYPE = 'baremetal.unsupported_media_type'
AUTH_REQUIRED = 'baremetal.auth_required'
POLICY_FORBIDDEN = 'baremetal.policy_forbidden'
INTERNAL_ERROR = 'baremetal.internal_error'
NODE_ALLOCATION_MISMATCH = 'baremetal.node_allocation_mismatch'
INVALID_URL = 'baremetal.invalid_url'
REQUEST_TOO_LARGE = 'baremetal.request_too_large'

_CAMEL = re.compile(r'(?<!^)(?=[A-Z])')


def code_for(exc):
    """Stable code of a domain exception: its class name in snake case.

    Domain exception classes are never renamed (their names are part of the
    contract of the exception module), which keeps these codes stable.
    """
    explicit = getattr(exc, 'error_code', None)
    if explicit:
        return explicit
    return 'baremetal.' + _CAMEL.sub('_', type(exc).__name__).lower()


class HTTPError(Exception):
    """An error decided by the web layer, with its status and code."""

    def __init__(self, status, message, code, headers=None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.headers = headers or {}


def body_for(status, message, code):
    fault = {
        'faultstring': message,
        'faultcode': 'Client' if status < 500 else 'Server',
        'debuginfo': None,
        'code': code,
    }
    return {'error_message': json.dumps(fault)}


def response(status, message, code, headers=None):
    resp = webob.Response(status=status, content_type='application/json',
                          charset='utf-8')
    resp.json_body = body_for(status, message, code)
    for name, value in (headers or {}).items():
        resp.headers[name] = value
    return resp


def from_exception(exc):
    """A response for an HTTPError or a domain exception (4xx/5xx)."""
    if isinstance(exc, HTTPError):
        return response(exc.status, exc.message, exc.code, exc.headers)
    if isinstance(exc, exception.AllocFrameworkException):
        status = int(getattr(exc, 'code', 500) or 500)
        if status == 406:
            code = VERSION_NOT_ACCEPTABLE
        else:
            code = code_for(exc)
        return response(status, str(exc), code)
    return None
