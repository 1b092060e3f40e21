"""The ``redfish`` hardware type against Redfish BMC emulators."""

from alloc_framework.conf import hardware as hardware_conf
from alloc_framework.drivers.modules.redfish import utils


def enable_redfish(test, **redfish_options):
    """Enable the redfish hardware type next to the fake one.

    To call before the conductor starts. Connections cached by earlier
    tests (their BMCs are gone) are forgotten.
    """
    hardware_conf.register_plugin_opts(test.conf)
    test.config(enabled_hardware_types=['fake-hardware', 'redfish'],
                enabled_power_interfaces=['fake', 'redfish'],
                enabled_management_interfaces=['fake', 'redfish'],
                enabled_bios_interfaces=['fake', 'no-bios', 'redfish'],
                enabled_firmware_interfaces=['fake', 'no-firmware',
                                             'redfish'])
    options = {'power_state_poll_interval': 0.2}
    options.update(redfish_options)
    test.config(group='redfish', **options)
    utils.reset_cache()
    test.addCleanup(utils.reset_cache)
