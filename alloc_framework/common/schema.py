"""JSON Schema validation with validators built once per schema.

``jsonschema.validate`` checks the schema against its metaschema and builds
a new validator on every call, a cost that dominated the validation of a
request (``doc/source/performance.rst``). Schemas here are module
constants, so their validators are
built once and kept (the cache holds the schema, so its id stays unique).
"""

import threading

import jsonschema

FORMAT_CHECKER = jsonschema.FormatChecker()

_cache = {}
_lock = threading.Lock()


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
    error = jsonschema.exceptions.best_match(
        validator(schema, format_checker).iter_errors(instance))
    if error is not None:
        raise error
