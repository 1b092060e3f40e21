"""``alloc baremetal conductor list|show``: the conductor services."""

from cliff import lister
from cliff import show

from alloc_framework.cli.baremetal import base
from alloc_framework.cli import common

FIELDS = ('hostname', 'conductor_group', 'alive', 'drivers', 'created_at',
          'updated_at')
SUMMARY = ('hostname', 'conductor_group', 'alive')


class ListConductor(base.BaremetalMixin, lister.Lister):
    """List conductors, alive or not (a conductor is alive while its
    heartbeat is recent)."""

    min_version = '1.49'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--long', action='store_true',
                            help='Show every field.')
        parser.add_argument('--limit', metavar='<limit>', type=int,
                            help='Maximum number of conductors to return '
                                 '(default: all).')
        parser.add_argument('--marker', metavar='<hostname>',
                            help='Host name of the conductor after which '
                                 'to start.')
        parser.add_argument('--sort', metavar='<key>[:<direction>]',
                            help='Sort by this field, asc (default) or '
                                 'desc.')
        return parser

    def take_action(self, parsed_args):
        params = base.list_params(parsed_args)
        if parsed_args.long:
            params['detail'] = 'True'
        conductors = self.client().get('/conductors',
                                       params=params)['conductors']
        columns = FIELDS if parsed_args.long else SUMMARY
        return columns, [common.get_properties(c, columns)
                         for c in conductors]


class ShowConductor(base.BaremetalMixin, show.ShowOne):
    """Show a conductor."""

    min_version = '1.49'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('hostname', metavar='<hostname>',
                            help='Host name of the conductor.')
        return parser

    def take_action(self, parsed_args):
        conductor = self.client().get('/conductors/' + parsed_args.hostname)
        return FIELDS, common.get_properties(conductor, FIELDS)
