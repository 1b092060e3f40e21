"""Deprecated alias of :mod:`alloc_framework.common.loader`.

The plugin loader moved to ``common/`` so that every plugin kind (the
metrics emitter and the options of plugins' interface kinds included)
loads through it without importing ``drivers/``. This path is kept for
one release for plugins written against it; importing it emits a
``DeprecationWarning``.
"""

from alloc_framework.common import loader as _new
from alloc_framework.common import moved

__getattr__, __dir__ = moved.alias(__name__, _new)
