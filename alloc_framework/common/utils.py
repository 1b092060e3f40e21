"""Small helpers shared by the API, the conductor and the objects."""

import re
import uuid

from oslo_utils import strutils
from oslo_utils import uuidutils

# Logical names of nodes and allocations: the URL-safe characters of
# RFC 3986 (unreserved set), as the upstream bare metal API accepts.
_LOGICAL_NAME_RE = re.compile(r'^[A-Za-z0-9\-._~]+$')
MAX_NAME_LENGTH = 255


def is_valid_logical_name(name):
    """Whether ``name`` is acceptable as a node or allocation name.

    A UUID-like string is not: it would shadow lookups by UUID.
    """
    if not isinstance(name, str) or not name:
        return False
    if len(name) > MAX_NAME_LENGTH:
        return False
    if uuidutils.is_uuid_like(name):
        return False
    return bool(_LOGICAL_NAME_RE.match(name))


def is_int_like(value):
    """Whether ``value`` is an int or a string of one."""
    return strutils.is_int_like(value)


def canonical_uuid(value):
    """A UUID in its lower-case hyphenated form.

    Any spelling ``uuid.UUID`` accepts (upper case, no hyphens, braces,
    ``urn:uuid:``) names the same UUID: it is stored and looked up in this
    one form, as Placement does.

    :raises ValueError: ``value`` is not a UUID.
    """
    return str(uuid.UUID(value))
