"""Options of the [DEFAULT] group that enable hardware plugins."""

from oslo_config import cfg

opts = [
    cfg.ListOpt('enabled_hardware_types',
                default=['fake-hardware'],
                help='Hardware types (entry points of the '
                     '``alloc_framework.hardware.types`` namespace) that '
                     'conductors load. A type that fails to load stops '
                     'the service.'),
    cfg.ListOpt('enabled_power_interfaces',
                default=['fake'],
                help='Power interfaces that conductors load.'),
    cfg.ListOpt('enabled_deploy_interfaces',
                default=['fake'],
                help='Deploy interfaces that conductors load.'),
    cfg.ListOpt('enabled_management_interfaces',
                default=['fake'],
                help='Management interfaces that conductors load.'),
]


def register_opts(conf):
    conf.register_opts(opts)
