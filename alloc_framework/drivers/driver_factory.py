"""Loading hardware types and interfaces, and composing a node's driver.

Each namespace is loaded once per conductor over its ``enabled_*`` option
(:func:`alloc_framework.common.loader.load_enabled`). An enabled plugin
that is missing or fails to import stops the start with
``DriverLoadError``: a conductor that silently lacks a driver would accept
nodes it cannot manage.

An interface kind whose ``enabled_<kind>_interfaces`` is unset loads
every implementation that an enabled hardware type supports, as
upstream's defaults do for its usual hardware types: enabling a hardware
type is one line. A list the operator sets restricts the kind to those
listed; an enabled hardware type none of whose supported
implementations of a required kind is listed then stops the start,
naming the option. For an optional kind its nodes get the kind's no-op,
which is always loaded.
"""

import itertools

from oslo_log import log

from alloc_framework.common import exception
from alloc_framework.common import loader
from alloc_framework.conf import hardware as hardware_conf
from alloc_framework.drivers import base

LOG = log.getLogger(__name__)

HARDWARE_TYPES_NAMESPACE = 'alloc_framework.hardware.types'
INTERFACE_NAMESPACE = 'alloc_framework.hardware.interfaces.%s'


class Driver:
    """The interfaces composing one node's driver.

    One attribute per interface kind (``power``, ``deploy``, ``boot``...;
    so ``task.driver.<kind>.<method>`` names any interface call), each a
    shared interface instance; ``hardware_type`` is the node's hardware
    type.
    """

    def __init__(self, name, hardware_type, interfaces):
        self.name = name
        self.hardware_type = hardware_type
        self._types = tuple(base.INTERFACE_TYPES) + tuple(
            t for t in interfaces if t not in base.INTERFACE_TYPES)
        for iface_type in self._types:
            setattr(self, iface_type, interfaces.get(iface_type))

    def all_interfaces(self):
        """``{type: instance}`` of the composed interfaces (plugin kinds
        included)."""
        return {t: getattr(self, t) for t in self._types}


class DriverFactory:
    """The hardware types and interfaces loaded by one conductor.

    :param conf: the service's ``ConfigOpts``.
    :param hardware_types: ``{name: instance}`` to use instead of loading
        from entry points (tests).
    :param interfaces: ``{type: {name: instance}}``, idem.
    :raises: DriverLoadError
    """

    def __init__(self, conf, hardware_types=None, interfaces=None):
        self.conf = conf
        hardware_conf.register_plugin_opts(conf)
        if hardware_types is None:
            hardware_types = loader.load_enabled(
                HARDWARE_TYPES_NAMESPACE, conf.enabled_hardware_types)
        self.hardware_types = hardware_types
        if interfaces is None:
            self.kinds = base.interface_kinds()
            interfaces = {kind.name: self._load_kind(kind)
                          for kind in self.kinds}
        else:
            self.kinds = tuple(base.INTERFACE_KINDS) + tuple(
                base.InterfaceKind(name, name) for name in interfaces
                if name not in base.KINDS)
        self.interfaces = interfaces
        # (node uuid, kind) already warned about a deprecated interface:
        # per factory, so per conductor and per test.
        self._deprecation_warned = set()
        for plugin in itertools.chain(
                self.hardware_types.values(),
                *(kind.values() for kind in self.interfaces.values())):
            plugin.conf = conf
        for name, hw_type in self.hardware_types.items():
            # A hardware type without one usable implementation of a
            # required kind could never drive a node.
            for kind in self.kinds:
                iface_type = kind.name
                if (kind.required
                        and not self._enabled_supported(hw_type, iface_type)):
                    raise exception.DriverLoadError(
                        name=name, namespace=HARDWARE_TYPES_NAMESPACE,
                        reason=self._unusable_reason(hw_type, kind))
        LOG.info('Loaded hardware types: %s',
                 ', '.join(sorted(self.hardware_types)))

    def _configured(self, kind):
        """The operator's ``enabled_<kind>_interfaces``, or None if unset."""
        return getattr(self.conf, 'enabled_%s_interfaces' % kind.name)

    def _enabled_names(self, kind):
        """The names of the implementations of ``kind`` to load, in order.

        Unset, those the enabled hardware types support, in the order of
        the types and of their preferences.
        """
        configured = self._configured(kind)
        if configured is not None:
            return list(configured)
        names = []
        for hw_type in self.hardware_types.values():
            for name in hw_type.supported_interfaces(kind.name):
                if name not in names:
                    names.append(name)
        return names

    def _unusable_reason(self, hw_type, kind):
        supported = hw_type.supported_interfaces(kind.name)
        configured = self._configured(kind)
        if configured is None:
            # Only a hardware type that declares no implementation of a
            # required kind gets here.
            return 'it supports no %s interface' % kind.name
        return ('none of its %(kind)s interfaces (%(own)s) is enabled: '
                '[DEFAULT]enabled_%(kind)s_interfaces = %(listed)s. Add one '
                'of them to the list, or remove the option to enable the '
                '%(kind)s interfaces of every enabled hardware type'
                % {'kind': kind.name, 'own': ', '.join(supported),
                   'listed': ','.join(configured) or '(empty)'})

    def _load_kind(self, kind):
        names = self._enabled_names(kind)
        if kind.noop is not None and kind.noop not in names:
            names.append(kind.noop)
        return loader.load_enabled(INTERFACE_NAMESPACE % kind.name, names)

    @property
    def names(self):
        """Sorted names of the loaded hardware types."""
        return sorted(self.hardware_types)

    def _enabled_supported(self, hw_type, iface_type):
        enabled = self.interfaces.get(iface_type, {})
        return [n for n in hw_type.supported_interfaces(iface_type)
                if n in enabled]

    def get_hardware_type(self, name):
        """:raises: DriverNotFound"""
        try:
            return self.hardware_types[name]
        except KeyError:
            raise exception.DriverNotFound(driver_name=name)

    def default_interface(self, driver_name, iface_type):
        """The implementation a node of ``driver_name`` gets by default.

        ``default_<kind>_interface`` when the hardware type supports it and
        it is enabled, else the first enabled one the hardware type
        supports.
        """
        hw_type = self.get_hardware_type(driver_name)
        candidates = self._enabled_supported(hw_type, iface_type)
        preferred = getattr(self.conf, 'default_%s_interface' % iface_type,
                            None)
        if preferred in candidates:
            return preferred
        return candidates[0]

    def check_and_update_node_interfaces(self, node):
        """Validate the node's driver and interfaces, filling defaults.

        Unset interfaces get the hardware type's default. The node is
        changed in place, not saved. The implementations of plugin kinds,
        named in ``driver_info`` (see ``base.node_interface``), are checked
        but never written: unset, they follow the default.

        :returns: whether the node was changed.
        :raises: DriverNotFound for an unknown hardware type.
        :raises: InterfaceNotFoundInEntrypoint for a disabled interface.
        :raises: IncompatibleInterface when the hardware type does not
            support the interface.
        """
        hw_type = self.get_hardware_type(node.driver)
        changed = False
        for kind in self.kinds:
            iface_type = kind.name
            value = base.node_interface(node, kind)
            if not value:
                if iface_type in base.KINDS:
                    setattr(node, '%s_interface' % iface_type,
                            self.default_interface(node.driver, iface_type))
                    changed = True
                continue
            enabled = self.interfaces.get(iface_type, {})
            if value not in enabled:
                raise exception.InterfaceNotFoundInEntrypoint(
                    iface=INTERFACE_NAMESPACE % iface_type, names=value,
                    valid=', '.join(sorted(enabled)))
            if value not in hw_type.supported_interfaces(iface_type):
                raise exception.IncompatibleInterface(
                    interface_type=iface_type, interface_impl=value,
                    hardware_type=node.driver)
        return changed

    def build_driver(self, node):
        """Compose the driver of ``node`` (its interfaces must be valid).

        :raises: DriverNotFound, InterfaceNotFoundInEntrypoint
        """
        hw_type = self.get_hardware_type(node.driver)
        interfaces = {}
        for kind in self.kinds:
            iface_type = kind.name
            name = (base.node_interface(node, kind)
                    or self.default_interface(node.driver, iface_type))
            try:
                interfaces[iface_type] = self.interfaces[iface_type][name]
            except KeyError:
                raise exception.InterfaceNotFoundInEntrypoint(
                    iface=INTERFACE_NAMESPACE % iface_type, names=name,
                    valid=', '.join(sorted(self.interfaces[iface_type])))
        self._warn_deprecated(node, hw_type)
        return Driver(node.driver, hw_type, interfaces)

    def _warn_deprecated(self, node, hw_type):
        """Log once per node and kind that it names a deprecated
        interface of its hardware type (``deprecated_interfaces``)."""
        for iface_type, names in (hw_type.deprecated_interfaces
                                  or {}).items():
            kind = base.KINDS.get(iface_type)
            name = base.node_interface(node, kind) if kind else None
            if name not in names:
                continue
            key = (node.uuid, iface_type)
            if key in self._deprecation_warned:
                continue
            self._deprecation_warned.add(key)
            LOG.warning('Node %(node)s: the %(name)s %(kind)s interface of '
                        'the %(type)s hardware type is deprecated and will '
                        'be removed; set %(kind)s_interface to %(new)s '
                        '(when the node is not deployed).',
                        {'node': node.uuid, 'name': name, 'kind': iface_type,
                         'type': node.driver, 'new': names[name]})

    def interface_details(self, driver_name):
        """The interfaces a hardware type's nodes may have, per kind.

        :returns: ``{kind: {'default': name, 'enabled': [names]}}``: the
            enabled implementations the hardware type supports, in its
            order of preference, and the one its nodes get by default.
        :raises: DriverNotFound
        """
        hw_type = self.get_hardware_type(driver_name)
        return {kind.name: {
            'default': self.default_interface(driver_name, kind.name),
            'enabled': self._enabled_supported(hw_type, kind.name)}
            for kind in self.kinds}

    def get_properties(self, driver_name):
        """The ``driver_info`` keys of a hardware type's default driver.

        :returns: ``{key: description}``
        :raises: DriverNotFound
        """
        properties = {}
        for kind in self.kinds:
            name = self.default_interface(driver_name, kind.name)
            properties.update(
                self.interfaces[kind.name][name].get_properties())
        return properties
