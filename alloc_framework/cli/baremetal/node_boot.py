"""``alloc baremetal node boot device set|show``, as
``openstack baremetal node boot device ...``."""

from cliff import command
from cliff import show

from alloc_framework.cli.baremetal import base

BOOT_DEVICE_URL = '/nodes/{node}/management/boot_device'


def _node_parser(parser):
    parser.add_argument('node', metavar='<node>',
                        help='Name or UUID of the node.')
    return parser


class SetNodeBootDevice(base.BaremetalMixin, command.Command):
    """Set the boot device of a node for its next boot."""

    def get_parser(self, prog_name):
        parser = _node_parser(super().get_parser(prog_name))
        parser.add_argument('device', metavar='<device>',
                            help='The boot device (pxe, disk, cdrom, bios, '
                                 'safe; see "boot device show '
                                 '--supported").')
        parser.add_argument('--persistent', action='store_true',
                            help='Keep the device for every later boot, '
                                 'not only the next one.')
        return parser

    def take_action(self, parsed_args):
        self.client().put(BOOT_DEVICE_URL.format(node=parsed_args.node),
                          {'boot_device': parsed_args.device,
                           'persistent': parsed_args.persistent})


class ShowNodeBootDevice(base.BaremetalMixin, show.ShowOne):
    """Show the boot device of a node, as its BMC reports it."""

    def get_parser(self, prog_name):
        parser = _node_parser(super().get_parser(prog_name))
        parser.add_argument('--supported', action='store_true',
                            help='Show the boot devices the node supports '
                                 'instead.')
        return parser

    def take_action(self, parsed_args):
        url = BOOT_DEVICE_URL.format(node=parsed_args.node)
        if parsed_args.supported:
            body = self.client().get(url + '/supported')
            return (('supported_boot_devices',),
                    (', '.join(body['supported_boot_devices']),))
        body = self.client().get(url)
        return (('boot_device', 'persistent'),
                (body['boot_device'], body['persistent']))
