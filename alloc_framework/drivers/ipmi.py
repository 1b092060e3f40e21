"""The ``ipmi`` hardware type: servers whose BMC speaks IPMI 2.0.

Its interfaces are named ``ipmi`` (upstream ironic's are ``ipmitool``,
after the executable they run; ours speak the protocol with pyghmi, and
the name says what the hardware needs, not which tool is used). Boot and
deploy are not IPMI matters: the type works with the ``fake`` deploy
interface and the no-op boot interface until real ones exist.
"""

from alloc_framework.drivers import base


class IPMIHardware(base.HardwareType):
    """Servers managed through an IPMI BMC."""

    supported_power_interfaces = ['ipmi']
    supported_management_interfaces = ['ipmi']
    supported_firmware_interfaces = ['ipmi']
    supported_deploy_interfaces = ['fake']
