"""The ``ipmi`` hardware type: servers whose BMC speaks IPMI 2.0.

Its interfaces are named ``ipmi`` (upstream ironic's are ``ipmitool``,
after the executable they run; ours speak the protocol with pyghmi, and
the name says what the hardware needs, not which tool is used).

IPMI cannot hand a node an image, so the type's deploy interface is
``external``: it sets the boot device and powers the node on, and a
provisioning system outside the service (a PXE server) gives the node
its operating system. The ``fake`` deploy interface of earlier releases
stays supported (not the default) for the nodes that name it, and is
deprecated. Boot is the no-op boot interface.
"""

from alloc_framework.drivers import base


class IPMIHardware(base.HardwareType):
    """Servers managed through an IPMI BMC."""

    supported_power_interfaces = ['ipmi']
    supported_management_interfaces = ['ipmi']
    supported_firmware_interfaces = ['ipmi']
    supported_deploy_interfaces = ['external', 'fake']
    deprecated_interfaces = {'deploy': {'fake': 'external'}}
