"""The ``fake-hardware`` hardware type: every operation succeeds at once.

For development, tests and benchmarks: nodes of this type need no
``driver_info`` and are deployed and cleaned instantly.
"""

from alloc_framework.drivers import base


class FakeHardware(base.HardwareType):
    """Fake hardware: works with the ``fake`` interface of every kind."""

    supported_power_interfaces = ['fake']
    supported_deploy_interfaces = ['fake']
    supported_management_interfaces = ['fake']
    supported_boot_interfaces = ['fake']
    supported_bios_interfaces = ['fake']
    supported_firmware_interfaces = ['fake']
