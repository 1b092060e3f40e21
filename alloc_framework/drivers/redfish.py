"""The ``redfish`` hardware type: servers whose BMC speaks Redfish.

Power, management (boot device), BIOS and firmware go through the BMC's
Redfish service (:mod:`alloc_framework.drivers.modules.redfish`, options
in ``[redfish]``). Deployment is not a BMC concern: the hardware type
works with the deploy and boot interfaces the service has (``fake``
deploy, ``no-boot``), so Redfish nodes can be enrolled, verified,
cleaned, handed out and powered today.
"""

from alloc_framework.drivers import base


class RedfishHardware(base.HardwareType):
    """Redfish hardware."""

    supported_power_interfaces = ['redfish']
    supported_management_interfaces = ['redfish']
    supported_bios_interfaces = ['redfish']
    supported_firmware_interfaces = ['redfish']
    supported_deploy_interfaces = ['fake']
