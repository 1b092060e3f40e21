"""The ``example-hw`` hardware type."""

from alloc_framework.drivers import base


class ExampleHardware(base.HardwareType):
    """Example hardware: fake power, deploy and management, a real LED.

    Kinds it does not name (boot, bios, firmware) get their no-op.
    """

    supported_power_interfaces = ['fake']
    supported_deploy_interfaces = ['fake']
    supported_management_interfaces = ['fake']
    supported_led_interfaces = ['blinky']
