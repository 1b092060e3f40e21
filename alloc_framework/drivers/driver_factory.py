"""Loading hardware types and interfaces, and composing a node's driver.

Each namespace is loaded once per conductor over its ``enabled_*`` option
(:func:`alloc_framework.drivers.loader.load_enabled`). An enabled plugin
that is missing or fails to import stops the start with
``DriverLoadError``: a conductor that silently lacks a driver would accept
nodes it cannot manage.
"""

from oslo_log import log

from alloc_framework.objects.baremetal import exception
from alloc_framework.drivers import base
from alloc_framework.drivers import loader

LOG = log.getLogger(__name__)

HARDWARE_TYPES_NAMESPACE = 'alloc_framework.hardware.types'
INTERFACE_NAMESPACE = 'alloc_framework.hardware.interfaces.%s'


class Driver:
    """The interfaces composing one node's driver.

    ``power``, ``deploy`` and ``management`` are shared interface
    instances; ``hardware_type`` is the node's hardware type.
    """

    def __init__(self, name, hardware_type, interfaces):
        self.name = name
        self.hardware_type = hardware_type
        for iface_type in base.INTERFACE_TYPES:
            setattr(self, iface_type, interfaces.get(iface_type))

    def all_interfaces(self):
        """``{type: instance}`` of the composed interfaces."""
        return {t: getattr(self, t) for t in base.INTERFACE_TYPES}


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
        if hardware_types is None:
            hardware_types = loader.load_enabled(
                HARDWARE_TYPES_NAMESPACE, conf.enabled_hardware_types)
        self.hardware_types = hardware_types
        if interfaces is None:
            interfaces = {
                t: loader.load_enabled(
                    INTERFACE_NAMESPACE % t,
                    getattr(conf, 'enabled_%s_interfaces' % t))
                for t in base.INTERFACE_TYPES}
        self.interfaces = interfaces
        for name, hw_type in self.hardware_types.items():
            # A hardware type without one usable implementation of an
            # interface could never drive a node.
            for iface_type in base.INTERFACE_TYPES:
                if not self._enabled_supported(hw_type, iface_type):
                    raise exception.DriverLoadError(
                        name=name, namespace=HARDWARE_TYPES_NAMESPACE,
                        reason='none of its %s interfaces (%s) is enabled'
                        % (iface_type, ', '.join(
                            hw_type.supported_interfaces(iface_type))))
        LOG.info('Loaded hardware types: %s',
                 ', '.join(sorted(self.hardware_types)))

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
        """The implementation a node of ``driver_name`` gets by default."""
        hw_type = self.get_hardware_type(driver_name)
        return self._enabled_supported(hw_type, iface_type)[0]

    def check_and_update_node_interfaces(self, node):
        """Validate the node's driver and interfaces, filling defaults.

        Unset interfaces get the hardware type's default. The node is
        changed in place, not saved.

        :returns: whether the node was changed.
        :raises: DriverNotFound for an unknown hardware type.
        :raises: InterfaceNotFoundInEntrypoint for a disabled interface.
        :raises: IncompatibleInterface when the hardware type does not
            support the interface.
        """
        hw_type = self.get_hardware_type(node.driver)
        changed = False
        for iface_type in base.INTERFACE_TYPES:
            field = '%s_interface' % iface_type
            value = getattr(node, field, None) if node.obj_attr_is_set(
                field) else None
            if not value:
                setattr(node, field,
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
        for iface_type in base.INTERFACE_TYPES:
            field = '%s_interface' % iface_type
            name = (getattr(node, field, None) if node.obj_attr_is_set(field)
                    else None) or self.default_interface(node.driver,
                                                         iface_type)
            try:
                interfaces[iface_type] = self.interfaces[iface_type][name]
            except KeyError:
                raise exception.InterfaceNotFoundInEntrypoint(
                    iface=INTERFACE_NAMESPACE % iface_type, names=name,
                    valid=', '.join(sorted(self.interfaces[iface_type])))
        return Driver(node.driver, hw_type, interfaces)

    def get_properties(self, driver_name):
        """The ``driver_info`` keys of a hardware type's default driver.

        :returns: ``{key: description}``
        :raises: DriverNotFound
        """
        properties = {}
        for iface_type in base.INTERFACE_TYPES:
            name = self.default_interface(driver_name, iface_type)
            properties.update(
                self.interfaces[iface_type][name].get_properties())
        return properties
