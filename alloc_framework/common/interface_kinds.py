"""The kinds of hardware interface: the built-in list and plugins' kinds.

A *hardware interface* is one concern (*kind*) of driving a node:
``power``, ``deploy``, ``management`` and the optional kinds listed in
:data:`INTERFACE_KINDS`, followed by the optional kinds that installed
packages declare (:func:`plugin_kinds`). Each kind has its own
entry-point namespace, its own ``enabled_<kind>_interfaces`` and
``default_<kind>_interface`` options and a node field or ``driver_info``
key naming its implementation.

The list is data that two floors read: ``conf/hardware.py`` generates the
per-kind options from it (so it must not import ``drivers/``) and the
driver factory loads one namespace per kind. It lives here, a leaf of
the package; :mod:`alloc_framework.drivers.base`, the contract plugin
authors read, offers the same names.
"""

import re

from alloc_framework.common import exception
from alloc_framework.common import loader


class InterfaceKind:
    """One kind of hardware interface.

    :param name: the kind (``power`` ...), used in entry-point namespaces,
        option and node field names, and as the attribute of a node's
        driver (``task.driver.<name>``).
    :param description: what implementations of the kind do (option help).
    :param required: a required kind must have an enabled implementation
        supported by every enabled hardware type; an optional one falls
        back to its no-op ``no-<name>``.
    """

    def __init__(self, name, description, required=False):
        self.name = name
        self.description = description
        self.required = required

    @property
    def noop(self):
        """Entry-point name of the no-op of an optional kind, else None."""
        return None if self.required else 'no-%s' % self.name


INTERFACE_KINDS = (
    InterfaceKind('power', 'turn nodes on and off', required=True),
    InterfaceKind('deploy', 'put an instance on a node and take it away',
                  required=True),
    InterfaceKind('management', 'set the boot device and other '
                  'out-of-band management', required=True),
    InterfaceKind('boot', 'prepare what a node boots (ramdisk, instance)'),
    InterfaceKind('bios', 'read and apply BIOS settings'),
    InterfaceKind('firmware', 'read and update firmware components'),
)
"""The hardware interface kinds, in the order nodes list them. A new kind
is appended here (optional, with its no-op) and gets a node column."""

KINDS = {kind.name: kind for kind in INTERFACE_KINDS}

INTERFACE_TYPES = tuple(kind.name for kind in INTERFACE_KINDS)
"""The names of ``INTERFACE_KINDS``."""

KIND_NAMESPACE = 'alloc_framework.hardware.interface_kinds'
"""Entry points naming the interface kinds of third-party packages."""

_KIND_NAME = re.compile(r'^[a-z][a-z0-9_]{0,31}$')


def plugin_kinds():
    """The interface kinds installed packages declare, sorted by name.

    Each entry point of ``KIND_NAMESPACE`` names an :class:`InterfaceKind`
    instance whose ``name`` is the entry point's name. Such a kind must be
    optional (existing hardware types know nothing of it) and must not
    reuse the name of one of ``INTERFACE_KINDS``. Read each time it is
    called: the driver factory calls it once, when it loads the plugins.

    :raises: DriverLoadError for a kind that cannot be loaded or breaks
        these rules.
    """
    kinds = []
    for name, kind in loader.load_objects(KIND_NAMESPACE).items():
        reason = None
        if not isinstance(kind, InterfaceKind):
            reason = 'not an InterfaceKind: %r' % (kind,)
        elif kind.name != name:
            reason = 'the kind is named %r' % kind.name
        elif not _KIND_NAME.match(name):
            reason = 'a kind name is lower case letters, digits and _'
        elif name in KINDS or name == 'hardware':
            reason = 'a kind of that name exists'
        elif kind.required:
            reason = 'a plugin kind must be optional (required=False)'
        if reason:
            raise exception.DriverLoadError(name=name,
                                            namespace=KIND_NAMESPACE,
                                            reason=reason)
        kinds.append(kind)
    return tuple(kinds)


def interface_kinds():
    """``INTERFACE_KINDS`` followed by :func:`plugin_kinds`."""
    return INTERFACE_KINDS + plugin_kinds()
