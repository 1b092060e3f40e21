"""Configuration shared by the IPMI tests: the ``ipmi`` hardware type
enabled beside ``fake-hardware``, short waits."""

IPMI_ENABLED = {
    'enabled_hardware_types': ['fake-hardware', 'ipmi'],
    'enabled_power_interfaces': ['fake', 'ipmi'],
    'enabled_management_interfaces': ['fake', 'ipmi'],
    'enabled_firmware_interfaces': ['fake', 'ipmi', 'no-firmware'],
}

# HPM.1 polls are reschedules without delay; deadlines short enough for a
# silent BMC to cost little, long enough for a loaded test machine.
IPMI_OPTIONS = {
    'hpm_poll_interval': 0,
    'hpm_block_size': 32,
    'hpm_blocks_per_call': 8,
    'command_deadline': 10.0,
    'power_state_poll_interval': 0.2,
}


def enable_ipmi(test):
    """Enable the ipmi hardware type on ``test.conf`` (before conductors
    start)."""
    test.config(**IPMI_ENABLED)
    from alloc_framework.conf import hardware as hardware_conf
    hardware_conf.register_plugin_opts(test.conf)
    test.config(group='ipmi', **IPMI_OPTIONS)
