"""Node management: ``alloc baremetal node boot device set|show`` and
``alloc baremetal node validate``.

All are answered synchronously by the node's conductor: the boot device
by asking the hardware (for a Redfish node, its BMC), as ``openstack
baremetal node boot device set|show`` are; the validation by each
interface's own check of the node's data.
"""

from cliff import command
from cliff import lister
from cliff import show

from alloc_framework.cli.baremetal import base

BOOT_DEVICE_URL = '/nodes/{node}/management/boot_device'


def _node_parser(parser):
    parser.add_argument('node', metavar='<node>',
                        help='Name or UUID of the node.')
    return parser


class SetNodeBootDevice(base.BaremetalMixin, command.Command):
    """Set the boot device of a node's next boot."""

    def get_parser(self, prog_name):
        parser = _node_parser(super().get_parser(prog_name))
        parser.add_argument('device', metavar='<device>',
                            help='The boot device: pxe, disk, cdrom, bios... '
                                 '(see "boot device show --supported").')
        parser.add_argument('--persistent', action='store_true',
                            help='Boot from the device on every boot, not '
                                 'only the next one.')
        return parser

    def take_action(self, parsed_args):
        self.client().put(BOOT_DEVICE_URL.format(node=parsed_args.node),
                          {'boot_device': parsed_args.device,
                           'persistent': parsed_args.persistent})


class ShowNodeBootDevice(base.BaremetalMixin, show.ShowOne):
    """Show the boot device of a node's next boot, or those it supports."""

    def get_parser(self, prog_name):
        parser = _node_parser(super().get_parser(prog_name))
        parser.add_argument('--supported', action='store_true',
                            help='Show the boot devices the node supports.')
        return parser

    def take_action(self, parsed_args):
        url = BOOT_DEVICE_URL.format(node=parsed_args.node)
        if parsed_args.supported:
            found = self.client().get(url + '/supported')
            return (('supported_boot_devices',),
                    (', '.join(found['supported_boot_devices']),))
        found = self.client().get(url)
        return ('boot_device', 'persistent'), (found['boot_device'],
                                               found['persistent'])


class ValidateNode(base.BaremetalMixin, lister.Lister):
    """Check that each interface of a node has what it needs."""

    def get_parser(self, prog_name):
        return _node_parser(super().get_parser(prog_name))

    def take_action(self, parsed_args):
        found = self.client().get('/nodes/%s/validate' % parsed_args.node)
        return (('interface', 'result', 'reason'),
                [(kind, verdict.get('result'), verdict.get('reason') or '')
                 for kind, verdict in sorted(found.items())])
