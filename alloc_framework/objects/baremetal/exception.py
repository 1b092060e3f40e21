"""Deprecated alias of :mod:`alloc_framework.common.exception`.

The exception hierarchy moved to ``common/`` so that every floor of the
package may raise and catch it without importing the object model. This
path is kept for one release for plugins written against it; importing it
emits a ``DeprecationWarning``.
"""

from alloc_framework.common import exception as _new
from alloc_framework.common import moved

__getattr__, __dir__ = moved.alias(__name__, _new)
