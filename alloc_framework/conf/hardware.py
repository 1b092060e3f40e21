"""Options of the [DEFAULT] group that enable hardware plugins.

``enabled_<kind>_interfaces`` and ``default_<kind>_interface`` exist for
every kind of ``drivers.base.INTERFACE_KINDS``; they are generated from
that list so a new kind gets its options with its namespace.
"""

from oslo_config import cfg

from alloc_framework.drivers import base


def _kind_opts(kind):
    namespace = 'alloc_framework.hardware.interfaces.%s' % kind.name
    default = ['fake'] if kind.required else ['fake', kind.noop]
    fallback = ('' if kind.required else
                ' The no-op ``%s`` is always loaded: it is what nodes of '
                'a hardware type without an enabled %s interface get.'
                % (kind.noop, kind.name))
    return [
        cfg.ListOpt('enabled_%s_interfaces' % kind.name,
                    default=default,
                    help='%s interfaces (entry points of the ``%s`` '
                         'namespace: they %s) that conductors load. An '
                         'interface that fails to load stops the '
                         'service.%s' % (kind.name.capitalize(), namespace,
                                         kind.description, fallback)),
        cfg.StrOpt('default_%s_interface' % kind.name,
                   help='The %s interface nodes get when they do not name '
                        'one, if their hardware type supports it; unset, '
                        'the first enabled %s interface the hardware type '
                        'supports.' % (kind.name, kind.name)),
    ]


opts = [
    cfg.ListOpt('enabled_hardware_types',
                default=['fake-hardware'],
                help='Hardware types (entry points of the '
                     '``alloc_framework.hardware.types`` namespace) that '
                     'conductors load. A type that fails to load stops '
                     'the service.'),
] + [opt for kind in base.INTERFACE_KINDS for opt in _kind_opts(kind)]


def register_opts(conf):
    conf.register_opts(opts)
