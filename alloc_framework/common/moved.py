"""Deprecated aliases of modules that moved, kept for one release.

A module that plugin authors may import and that moved to another home
keeps its old path as an alias for one release: importing the old path
emits a ``DeprecationWarning`` (through debtcollector) naming the new
home, and every attribute read through the alias is the new module's
own object, so ``except old.NodeLocked`` catches what the new module
raises. An alias module holds only::

    from alloc_framework.common import exception as _new
    from alloc_framework.common import moved

    __getattr__, __dir__ = moved.alias(__name__, _new)

Like the rest of ``common/``, this imports nothing of alloc_framework.
"""

from debtcollector import removals


def alias(old_name, new_module):
    """Warn that ``old_name`` moved; the module hooks that forward to it.

    :param old_name: the deprecated module's dotted name (its
        ``__name__``).
    :param new_module: the module that now holds its contents.
    :returns: ``(__getattr__, __dir__)`` for the alias module (PEP 562):
        attribute reads and ``from old import name`` reach ``new_module``.
    """
    removals.removed_module(
        old_name, replacement=new_module.__name__, removal_version='?',
        message='The module moved; the old path is kept for one release.')

    def module_getattr(name):
        return getattr(new_module, name)

    def module_dir():
        return dir(new_module)

    return module_getattr, module_dir
