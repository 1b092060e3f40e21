"""Strict JSON for request bodies, shared by both APIs.

``loads`` accepts what RFC 8259 calls interoperable JSON and nothing that
would fail later, deeper in the service:

* at most ``MAX_DEPTH`` nested arrays and objects (checked on the text,
  before parsing, so that no document can exhaust the interpreter's
  recursion limit in the parser, in a schema error message or in a copy);
* no ``NaN``, ``Infinity`` or number too large for a float, which strict
  parsers (and our own responses) cannot represent;
* no lone surrogate (``"\\ud800"``) in a string or key: it is not
  Unicode, and no database driver can encode it.

The last two are refused with the JSON pointer of the value (``field``),
so that the message names the field, as a schema error does.

Each API turns ``InvalidJSON`` into a 400 of its own error format.
"""

import json
import math
import re

# How deeply arrays and objects may nest in a request body. The deepest
# documented bodies (reshaper, POST /allocations) nest 6 levels.
MAX_DEPTH = 32

# A JSON string (skipped whole) or a bracket.
_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[][{}]')


class InvalidJSON(ValueError):
    """The body is not strict JSON.

    :ivar field: a JSON pointer to the offending value (``/extra/a``), or
        None when the problem is the document's syntax or shape.
    """

    def __init__(self, message, field=None):
        super().__init__(message)
        self.field = field


def _check_depth(text):
    if text.count('[') + text.count('{') <= MAX_DEPTH:
        return
    depth = 0
    for token in _TOKENS.finditer(text):
        char = token.group()
        if char in '[{':
            depth += 1
            if depth > MAX_DEPTH:
                raise InvalidJSON('Arrays and objects may not be nested '
                                  'more than %d levels deep.' % MAX_DEPTH)
        elif char in ']}':
            depth -= 1


def _is_unicode(text):
    if text.isascii():
        return True
    try:
        text.encode('utf-8')
    except UnicodeEncodeError:
        return False
    return True


def _pointer(path):
    return '/' + '/'.join(str(p).replace('~', '~0').replace('/', '~1')
                          for p in path)


def _refusal(value):
    """Why a parsed value is refused, or None."""
    if isinstance(value, float):
        if not math.isfinite(value):
            return '%s is not a valid JSON number' % value
    elif isinstance(value, str) and not _is_unicode(value):
        return '%s is not valid Unicode (lone surrogate)' % ascii(value)
    return None


def check_values(document):
    """Raise InvalidJSON naming the first value that is not acceptable.

    :param document: a parsed JSON document (at most MAX_DEPTH deep).
    """
    stack = [((), document)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict):
            for key in value:
                if not _is_unicode(key):
                    raise InvalidJSON(
                        'The key %s in %s is not valid Unicode (lone '
                        'surrogate).' % (ascii(key), _pointer(path)),
                        field=_pointer(path))
            stack.extend((path + (k,), v) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((path + (i,), v) for i, v in enumerate(value))
        else:
            reason = _refusal(value)
            if reason is not None:
                raise InvalidJSON('Invalid value for field %s: %s.'
                                  % (_pointer(path), reason),
                                  field=_pointer(path))


def loads(data):
    """The document of a request body.

    :param data: the body, bytes (UTF-8) or str.
    :raises InvalidJSON: it is not strict JSON within the limits above.
    """
    if isinstance(data, bytes):
        try:
            data = data.decode('utf-8')
        except UnicodeDecodeError as exc:
            raise InvalidJSON(str(exc))
    _check_depth(data)
    try:
        document = json.loads(data)
    except ValueError as exc:
        raise InvalidJSON(str(exc))
    check_values(document)
    return document


def depth(document):
    """How deeply arrays and objects nest in a parsed document."""
    deepest = 0
    stack = [(0, document)]
    while stack:
        level, value = stack.pop()
        if isinstance(value, dict):
            value = value.values()
        elif not isinstance(value, list):
            continue
        level += 1
        deepest = max(deepest, level)
        stack.extend((level, item) for item in value)
    return deepest


def check_depth(document):
    """Raise InvalidJSON when a built document nests beyond MAX_DEPTH.

    For documents assembled from several requests (a JSON patch adds a
    value below an existing one).
    """
    if depth(document) > MAX_DEPTH:
        raise InvalidJSON('Arrays and objects may not be nested more than '
                          '%d levels deep.' % MAX_DEPTH)
