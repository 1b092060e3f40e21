"""``alloc baremetal node trait list|add|remove``."""

from cliff import command
from cliff import lister

from alloc_framework.cli.baremetal import base
from alloc_framework.cli import common

TRAITS_URL = '/nodes/{node}/traits'
FIELDS = ('traits',)


class _TraitCommand(base.BaremetalMixin):
    # Node traits appeared in bare metal API 1.37.
    min_version = '1.37'


class ListNodeTrait(_TraitCommand, lister.Lister):
    """List the traits of a node."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('node', metavar='<node>',
                            help='Name or UUID of the node.')
        return parser

    def take_action(self, parsed_args):
        traits = self.client().get(TRAITS_URL.format(
            node=parsed_args.node))['traits']
        return FIELDS, [(t,) for t in sorted(traits)]


class AddNodeTrait(_TraitCommand, command.Command):
    """Add traits to a node."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('node', metavar='<node>',
                            help='Name or UUID of the node.')
        parser.add_argument('traits', metavar='<trait>', nargs='+',
                            help='Traits to add.')
        return parser

    def take_action(self, parsed_args):
        api = self.client()
        url = TRAITS_URL.format(node=parsed_args.node)
        for trait in parsed_args.traits:
            api.put(url + '/' + trait)


class RemoveNodeTrait(_TraitCommand, command.Command):
    """Remove some traits, or all with --all, from a node."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('node', metavar='<node>',
                            help='Name or UUID of the node.')
        parser.add_argument('traits', metavar='<trait>', nargs='*',
                            help='Traits to remove.')
        parser.add_argument('--all', dest='remove_all', action='store_true',
                            help='Remove every trait.')
        return parser

    def take_action(self, parsed_args):
        api = self.client()
        url = TRAITS_URL.format(node=parsed_args.node)
        if parsed_args.remove_all == bool(parsed_args.traits):
            raise common.CommandError('Give traits to remove or --all')
        if parsed_args.remove_all:
            api.delete(url)
            return
        failures = []
        for trait in parsed_args.traits:
            try:
                api.delete(url + '/' + trait)
            except common.HttpError as exc:
                failures.append('%s: %s' % (trait, exc))
        if failures:
            raise common.CommandError('Failed to remove traits:\n%s'
                                      % '\n'.join(failures))
