"""The ``redfish`` hardware type: servers whose BMC speaks Redfish.

Power, management (boot device), BIOS and firmware go through the BMC's
Redfish service (:mod:`alloc_framework.drivers.modules.redfish`, options
in ``[redfish]``). Deployment boots an ISO image from the BMC's virtual
media: the ``ramdisk`` deploy interface with the
``redfish-virtual-media`` boot interface (``instance_info['boot_iso']``).

The ``fake`` deploy interface, the only one of earlier releases, stays
supported (not the default) for the nodes that name it, and is
deprecated.
"""

from alloc_framework.drivers import base


class RedfishHardware(base.HardwareType):
    """Redfish hardware."""

    supported_power_interfaces = ['redfish']
    supported_management_interfaces = ['redfish']
    supported_boot_interfaces = ['redfish-virtual-media']
    supported_bios_interfaces = ['redfish']
    supported_firmware_interfaces = ['redfish']
    supported_deploy_interfaces = ['ramdisk', 'fake']
    deprecated_interfaces = {'deploy': {'fake': 'ramdisk'}}
