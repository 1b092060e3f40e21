"""``alloc resource class list|show|create|set|delete`` (1.2+)."""

from cliff import command
from cliff import lister
from cliff import show

from alloc_framework.cli import common

BASE_URL = '/resource_classes'
FIELDS = ('name',)


class _ClassCommand(common.VersionMixin):
    min_version = '1.2'


def _name_parser(parser):
    parser.add_argument('name', metavar='<name>',
                        help='Name of the resource class.')
    return parser


class ListResourceClass(_ClassCommand, lister.Lister):
    """List resource classes, standard and custom."""

    def take_action(self, parsed_args):
        classes = self.client().get(BASE_URL)['resource_classes']
        return FIELDS, [common.get_properties(c, FIELDS)
                        for c in sorted(classes, key=lambda c: c['name'])]


class ShowResourceClass(_ClassCommand, show.ShowOne):
    """Show a resource class."""

    def get_parser(self, prog_name):
        return _name_parser(super().get_parser(prog_name))

    def take_action(self, parsed_args):
        rc = self.client().get(BASE_URL + '/' + parsed_args.name)
        return FIELDS, common.get_properties(rc, FIELDS)


class CreateResourceClass(_ClassCommand, command.Command):
    """Create a custom resource class (names start with CUSTOM_)."""

    def get_parser(self, prog_name):
        return _name_parser(super().get_parser(prog_name))

    def take_action(self, parsed_args):
        self.client().post(BASE_URL, {'name': parsed_args.name})


class SetResourceClass(_ClassCommand, command.Command):
    """Create a custom resource class, or succeed if it exists (1.7)."""

    min_version = '1.7'

    def get_parser(self, prog_name):
        return _name_parser(super().get_parser(prog_name))

    def take_action(self, parsed_args):
        self.client().put(BASE_URL + '/' + parsed_args.name)


class DeleteResourceClass(_ClassCommand, command.Command):
    """Delete a custom resource class that has no inventory."""

    def get_parser(self, prog_name):
        return _name_parser(super().get_parser(prog_name))

    def take_action(self, parsed_args):
        self.client().delete(BASE_URL + '/' + parsed_args.name)
