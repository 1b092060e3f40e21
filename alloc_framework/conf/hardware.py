"""Options of the [DEFAULT] group that enable hardware plugins, and the
options of the plugins themselves.

``enabled_<kind>_interfaces`` and ``default_<kind>_interface`` exist for
every kind of ``common.interface_kinds.INTERFACE_KINDS``; they are
generated from that list so a new kind gets its options with its
namespace. ``enabled_<kind>_interfaces`` is unset by default: the driver
factory then enables every interface of the kind that an enabled
hardware type supports, so enabling a hardware type is one line; a list
the operator sets restricts them. The kinds of installed plugins
(``common.interface_kinds.plugin_kinds``) get theirs the same way,
registered with the plugins' own options. The list and the loader are
leaves of the package: generating the options imports no driver.

A hardware plugin package declares its own options with an entry point
of the ``alloc_framework.hardware.opts`` namespace: a callable returning
``[(group name, [options])]``, the format of ``oslo.config.opts``. The
driver factory registers them on the service's configuration before it
loads any hardware plugin (:func:`register_plugin_opts`), and the sample
configuration lists them with ours whenever the package is installed.
"""

from oslo_config import cfg

from alloc_framework.common import interface_kinds
from alloc_framework.common import loader

PLUGIN_OPTS_NAMESPACE = 'alloc_framework.hardware.opts'

DEFAULT_HARDWARE_TYPES = ('fake-hardware', 'ipmi', 'redfish')

# What the sample configuration shows for the unset interface lists.
SUPPORTED_BY_ENABLED_TYPES = '<the interfaces of the enabled hardware types>'


def _kind_opts(kind):
    namespace = 'alloc_framework.hardware.interfaces.%s' % kind.name
    if kind.required:
        restricted = ('; a hardware type none of whose %s interfaces is '
                      'listed stops the service' % kind.name)
        fallback = ''
    else:
        restricted = ''
        fallback = (' The no-op ``%s`` is always loaded: it is what nodes '
                    'of a hardware type without an enabled %s interface '
                    'get.' % (kind.noop, kind.name))
    return [
        cfg.ListOpt('enabled_%s_interfaces' % kind.name,
                    sample_default=SUPPORTED_BY_ENABLED_TYPES,
                    help='%s interfaces (entry points of the ``%s`` '
                         'namespace: they %s) that conductors load. Unset: '
                         'every %s interface that an enabled hardware type '
                         'supports. Set: only those listed%s. An interface '
                         'that fails to load stops the service.%s'
                         % (kind.name.capitalize(), namespace,
                            kind.description, kind.name, restricted,
                            fallback)),
        cfg.StrOpt('default_%s_interface' % kind.name,
                   help='The %s interface nodes get when they do not name '
                        'one, if their hardware type supports it; unset, '
                        'the first enabled %s interface the hardware type '
                        'supports.' % (kind.name, kind.name)),
    ]


opts = [
    cfg.ListOpt('enabled_hardware_types',
                default=list(DEFAULT_HARDWARE_TYPES),
                help='Hardware types (entry points of the '
                     '``alloc_framework.hardware.types`` namespace) that '
                     'conductors load. A type that fails to load stops '
                     'the service. The default enables ``ipmi`` and '
                     '``redfish``, the types of real servers, as the '
                     'upstream bare metal service does, and keeps '
                     '``fake-hardware`` (no BMC: every operation succeeds '
                     'at once) so that a development server, tests and '
                     'demonstrations work without hardware; remove it '
                     'where nodes must be real. The interfaces of the '
                     'enabled types are enabled with them (see '
                     '``enabled_<kind>_interfaces``).'),
] + [opt for kind in interface_kinds.INTERFACE_KINDS
     for opt in _kind_opts(kind)]


def register_opts(conf):
    conf.register_opts(opts)


def plugin_opts():
    """``[(group name, [options])]`` of every installed hardware plugin.

    The options of the plugins' interface kinds come first, in
    ``DEFAULT``.

    :raises: DriverLoadError when a plugin's entry point cannot be loaded
        or called.
    """
    kind_opts = [opt for kind in interface_kinds.plugin_kinds()
                 for opt in _kind_opts(kind)]
    return ([('DEFAULT', kind_opts)] if kind_opts else []) + [
        item for items in loader.load_all(PLUGIN_OPTS_NAMESPACE).values()
        for item in items]


def register_plugin_opts(conf):
    """Register the options of every installed hardware plugin on ``conf``.

    Idempotent.

    :raises: DriverLoadError
    """
    for group, group_opts in plugin_opts():
        conf.register_opts(group_opts,
                           group=None if group == 'DEFAULT' else group)
