"""``alloc baremetal driver list|show|property list``: hardware types."""

from cliff import lister
from cliff import show

from alloc_framework.cli.baremetal import base
from alloc_framework.cli import common


class ListDriver(base.BaremetalMixin, lister.Lister):
    """List the hardware types that live conductors have, and where."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--long', action='store_true',
                            help='Show the enabled and default interfaces '
                                 'too (API version 1.30 or later).')
        return parser

    def take_action(self, parsed_args):
        params = {}
        if parsed_args.long:
            self.require_version('1.30', '--long')
            params['detail'] = 'True'
        drivers = self.client().get('/drivers', params=params)['drivers']
        columns = ['name', 'hosts']
        if parsed_args.long:
            columns += sorted({k for d in drivers for k in d
                               if k.endswith('_interface')
                               or k.endswith('_interfaces')})
        return columns, [common.get_properties(d, columns) for d in drivers]


class ShowDriver(base.BaremetalMixin, show.ShowOne):
    """Show a hardware type: its hosts, enabled and default interfaces."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('driver', metavar='<driver>',
                            help='Name of the hardware type.')
        return parser

    def take_action(self, parsed_args):
        driver = self.client().get('/drivers/' + parsed_args.driver)
        columns = sorted(k for k in driver
                         if k not in ('links', 'properties'))
        return columns, common.get_properties(driver, columns)


class ListDriverProperty(base.BaremetalMixin, lister.Lister):
    """List the driver_info keys a hardware type's nodes take."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('driver', metavar='<driver>',
                            help='Name of the hardware type.')
        return parser

    def take_action(self, parsed_args):
        found = self.client().get(
            '/drivers/%s/properties' % parsed_args.driver)
        return (('property', 'description'),
                sorted(found.items()))
