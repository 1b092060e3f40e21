"""Query strings of the dashboard's pages, checked field by field.

Each page declares the fields it accepts (:class:`Field`); anything else,
a field given twice, a value too long, with control characters or of
the wrong shape is a :class:`BadParam`, which the application answers
with a 400 page naming the field. Values are never put into markup
unescaped (the templates autoescape), so this is about clear answers
rather than about safety.
"""

import re

from oslo_utils import uuidutils

MAX_LENGTH = 1024

_NAME = re.compile(r'^[A-Z0-9_]+$')
_NAMES = re.compile(r'^[A-Z0-9_]+(,[A-Z0-9_]+)*$')
_RESOURCES = re.compile(r'^[A-Z0-9_]+:[0-9]{1,9}(,[A-Z0-9_]+:[0-9]{1,9})*$')
_CONTROL = re.compile(r'[\x00-\x1f\x7f]')


class BadParam(ValueError):
    """A query parameter the page cannot use: ``field`` names it."""

    def __init__(self, field, message):
        super().__init__('%s: %s' % (field, message))
        self.field = field
        self.message = message


def text(field, value):
    return value


def uuid(field, value):
    if not uuidutils.is_uuid_like(value):
        raise BadParam(field, 'not a UUID')
    return value.lower()


def uuids(field, value):
    return [uuid(field, item.strip()) for item in value.split(',')]


def name(field, value):
    if not _NAME.match(value) or len(value) > 255:
        raise BadParam(field, 'expected a name of capital letters, digits '
                              'and underscores')
    return value


def names(field, value):
    if not _NAMES.match(value.replace(' ', '')):
        raise BadParam(field, 'expected names of capital letters, digits '
                              'and underscores, separated by commas')
    return value.replace(' ', '').split(',')


def resources(field, value):
    value = value.replace(' ', '')
    if not _RESOURCES.match(value):
        raise BadParam(field, 'expected CLASS:AMOUNT, separated by commas '
                              '(for example VCPU:2,MEMORY_MB:1024)')
    return value


def integer(low, high):
    def check(field, value):
        if not value.isdigit() or not low <= int(value) <= high:
            raise BadParam(field, 'expected a whole number from %d to %d'
                           % (low, high))
        return int(value)
    return check


def choice(*choices):
    def check(field, value):
        if value not in choices:
            raise BadParam(field, 'expected one of %s' % ', '.join(choices))
        return value
    return check


def parse(req, fields):
    """``{field: value}`` of the query string of ``req``; empty values are
    left out.

    :param fields: ``{field: check}``, ``check(field, value)`` returning
        the value to use or raising :class:`BadParam`.
    :raises: BadParam
    """
    result = {}
    try:
        items = list(req.GET.items())
    except UnicodeDecodeError:
        raise BadParam('query string', 'not UTF-8')
    seen = set()
    for key, value in items:
        if key not in fields:
            raise BadParam(key[:64], 'not a parameter of this page')
        if key in seen:
            raise BadParam(key, 'given more than once')
        seen.add(key)
        if len(value) > MAX_LENGTH:
            raise BadParam(key, 'longer than %d characters' % MAX_LENGTH)
        if _CONTROL.search(value):
            raise BadParam(key, 'contains control characters')
        value = value.strip()
        if value:
            result[key] = fields[key](key, value)
    return result
