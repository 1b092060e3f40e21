"""JSON Schema validation with validators built once per schema.

``jsonschema.validate`` checks the schema against its metaschema and builds
a new validator on every call, a cost that dominated the validation of a
request (``doc/source/performance.rst``). Schemas here are module
constants, so their validators are
built once and kept (the cache holds the schema, so its id stays unique).

Most documents a service receives are valid, and finding that out is
most of jsonschema's cost: each keyword of each subschema is a generator
and each step down a new validator (about 3 ms of CPU for the body of a
claim, ``PUT /allocations/{uuid}``, a sixth of that request). So each
schema is also compiled, once, into plain Python checks for the keywords
our schemas use (:func:`_compile`). They answer "certainly valid" or
"not sure": a document they do not accept, and any schema with another
keyword, goes through jsonschema as before, which then finds the error
it always found, with the same message. The checks may refuse a valid
document (a float where an integer is asked), never accept one that
jsonschema refuses.
"""

import numbers
import re
import threading

import jsonschema

FORMAT_CHECKER = jsonschema.FormatChecker()

_cache = {}
_fast_cache = {}
_lock = threading.Lock()

# Keywords that constrain nothing.
_ANNOTATIONS = frozenset(('description', 'title', 'default', 'examples',
                          '$comment'))
# The JSON types of the "type" keyword, as exact Python types: a
# subclass, a float integer (1.0) or a bool where a number is asked are
# left to jsonschema.
_TYPES = {'object': (dict,), 'array': (list,), 'string': (str,),
          'integer': (int,), 'number': (int, float), 'boolean': (bool,),
          'null': (type(None),)}


class _Unsupported(Exception):
    """A keyword (or a shape of one) the fast checks do not know."""


def _compared(instance):
    """Whether a bound applies to ``instance`` (a JSON number), None if
    not sure (a number of another type)."""
    kind = type(instance)
    if kind is int or kind is float:
        return True
    if kind is bool or not isinstance(instance, numbers.Number):
        return False
    return None


def _compile(schema, format_checker):
    """A function ``check(instance) -> bool``: True only if valid.

    Exact for what it accepts: each keyword is checked as jsonschema's
    Draft 2020-12 does (``validator_for`` of a schema without
    ``$schema``), applying only to the instances of its type.

    :raises _Unsupported: the schema uses another keyword.
    """
    if schema is True:
        return lambda instance: True
    if not isinstance(schema, dict):
        raise _Unsupported(schema)
    checks = []
    for keyword, value in schema.items():
        if keyword in _ANNOTATIONS:
            continue
        maker = _KEYWORDS.get(keyword)
        if maker is None:
            raise _Unsupported(keyword)
        checks.append(maker(value, schema, format_checker))
    if len(checks) == 1:
        return checks[0]
    checks = tuple(checks)

    def check(instance):
        for one in checks:
            if not one(instance):
                return False
        return True
    return check


def _type(value, schema, format_checker):
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or any(n not in _TYPES for n in names):
        raise _Unsupported('type', value)
    types = tuple({t for n in names for t in _TYPES[n]})
    return lambda instance: type(instance) in types


def _properties(value, schema, format_checker):
    subs = tuple((name, _compile(sub, format_checker))
                 for name, sub in value.items())

    def check(instance):
        if isinstance(instance, dict):
            for name, sub in subs:
                if name in instance and not sub(instance[name]):
                    return False
        return True
    return check


def _pattern_properties(value, schema, format_checker):
    subs = tuple((re.compile(pattern), _compile(sub, format_checker))
                 for pattern, sub in value.items())

    def check(instance):
        if isinstance(instance, dict):
            for pattern, sub in subs:
                for key, item in instance.items():
                    if pattern.search(key) and not sub(item):
                        return False
        return True
    return check


def _additional_properties(value, schema, format_checker):
    # jsonschema's own test of "additional": not a property, and not
    # matching the patterns joined into one.
    known = frozenset(schema.get('properties', ()))
    joined = '|'.join(schema.get('patternProperties', ()))
    patterns = re.compile(joined) if joined else None
    if value is False:
        sub = None
    elif isinstance(value, dict) or value is True:
        sub = _compile(value, format_checker)
    else:
        raise _Unsupported('additionalProperties', value)

    def check(instance):
        if isinstance(instance, dict):
            for key in instance:
                if key in known or (patterns is not None and
                                    patterns.search(key)):
                    continue
                if sub is None or not sub(instance[key]):
                    return False
        return True
    return check


def _required(value, schema, format_checker):
    names = tuple(value)
    return lambda instance: (not isinstance(instance, dict) or
                             all(name in instance for name in names))


def _items(value, schema, format_checker):
    if not isinstance(value, dict):
        raise _Unsupported('items', value)
    sub = _compile(value, format_checker)
    return lambda instance: (not isinstance(instance, list) or
                             all(sub(item) for item in instance))


def _size(kind, least):
    def maker(value, schema, format_checker):
        if type(value) is not int:
            raise _Unsupported(value)
        if least:
            return lambda instance: (not isinstance(instance, kind) or
                                     len(instance) >= value)
        return lambda instance: (not isinstance(instance, kind) or
                                 len(instance) <= value)
    return maker


def _bound(compare):
    def maker(value, schema, format_checker):
        if type(value) not in (int, float):
            raise _Unsupported(value)

        def check(instance):
            applies = _compared(instance)
            if applies:
                return compare(instance, value)
            return applies is False
        return check
    return maker


def _pattern(value, schema, format_checker):
    pattern = re.compile(value)
    return lambda instance: (not isinstance(instance, str) or
                             pattern.search(instance) is not None)


def _format(value, schema, format_checker):
    if format_checker is None:
        return lambda instance: True
    return lambda instance: format_checker.conforms(instance, value)


def _enum(value, schema, format_checker):
    # Scalars only, compared with their type: jsonschema tells 1 from
    # True and 1 from 1.0 where Python does not.
    members = tuple(value)

    def check(instance):
        if type(instance) not in (str, int, bool, type(None)):
            return False
        return any(type(m) is type(instance) and m == instance
                   for m in members)
    return check


def _all_of(value, schema, format_checker):
    subs = tuple(_compile(sub, format_checker) for sub in value)
    return lambda instance: all(sub(instance) for sub in subs)


def _any_of(value, schema, format_checker):
    subs = tuple(_compile(sub, format_checker) for sub in value)
    return lambda instance: any(sub(instance) for sub in subs)


_KEYWORDS = {
    'type': _type,
    'properties': _properties,
    'patternProperties': _pattern_properties,
    'additionalProperties': _additional_properties,
    'required': _required,
    'items': _items,
    'minItems': _size(list, True),
    'maxItems': _size(list, False),
    'minProperties': _size(dict, True),
    'maxProperties': _size(dict, False),
    'minLength': _size(str, True),
    'maxLength': _size(str, False),
    'minimum': _bound(lambda a, b: a >= b),
    'maximum': _bound(lambda a, b: a <= b),
    'exclusiveMinimum': _bound(lambda a, b: a > b),
    'exclusiveMaximum': _bound(lambda a, b: a < b),
    'pattern': _pattern,
    'format': _format,
    'enum': _enum,
    'allOf': _all_of,
    'anyOf': _any_of,
}


def fast_check(schema, format_checker=FORMAT_CHECKER):
    """The compiled checks of ``schema`` (cached), or None if it has a
    keyword they do not know."""
    key = (id(schema), id(format_checker))
    try:
        return _fast_cache[key][0]
    except KeyError:
        pass
    try:
        found = _compile(schema, format_checker)
    except _Unsupported:
        found = None
    with _lock:
        # The schema is kept so that its id stays unique.
        _fast_cache[key] = (found, schema)
    return found


def validator(schema, format_checker=FORMAT_CHECKER):
    """The (cached) validator of ``schema``."""
    key = (id(schema), id(format_checker))
    found = _cache.get(key)
    if found is None:
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        found = cls(schema, format_checker=format_checker)
        with _lock:
            _cache[key] = found
    return found


def validate(instance, schema, format_checker=FORMAT_CHECKER):
    """Like ``jsonschema.validate``: raise the most relevant error.

    :raises jsonschema.ValidationError: ``instance`` does not match.
    """
    check = fast_check(schema, format_checker)
    if check is not None and check(instance):
        return
    error = jsonschema.exceptions.best_match(
        validator(schema, format_checker).iter_errors(instance))
    if error is not None:
        raise error
