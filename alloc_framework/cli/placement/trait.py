"""``alloc trait ...`` and ``alloc resource provider trait ...``.

Traits exist from Placement microversion 1.6.
"""

from cliff import command
from cliff import lister
from cliff import show

from alloc_framework.cli import common

BASE_URL = '/traits'
PROVIDER_URL = '/resource_providers/{uuid}'
PROVIDER_TRAITS_URL = PROVIDER_URL + '/traits'
FIELDS = ('name',)


class _TraitCommand(common.VersionMixin):
    min_version = '1.6'


def _rows(traits):
    return FIELDS, [(t,) for t in sorted(traits)]


class ListTrait(_TraitCommand, lister.Lister):
    """List traits."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            '--name', metavar='<name>',
            help='Filter: startswith:<prefix> or in:<name>,<name>.')
        parser.add_argument(
            '--associated', action='store_true',
            help='Only traits associated with at least one provider.')
        return parser

    def take_action(self, parsed_args):
        params = {}
        if parsed_args.name:
            params['name'] = parsed_args.name
        if parsed_args.associated:
            params['associated'] = 'true'
        return _rows(self.client().get(BASE_URL, params=params)['traits'])


class ShowTrait(_TraitCommand, show.ShowOne):
    """Check that a trait exists and show it."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('name', metavar='<name>',
                            help='Name of the trait.')
        return parser

    def take_action(self, parsed_args):
        self.client().get(BASE_URL + '/' + parsed_args.name)
        return FIELDS, (parsed_args.name,)


class CreateTrait(_TraitCommand, command.Command):
    """Create a custom trait (names start with CUSTOM_)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('name', metavar='<name>',
                            help='Name of the trait, e.g. CUSTOM_FAST.')
        return parser

    def take_action(self, parsed_args):
        self.client().put(BASE_URL + '/' + parsed_args.name)


class DeleteTrait(_TraitCommand, command.Command):
    """Delete a custom trait that no provider has."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('name', metavar='<name>',
                            help='Name of the trait.')
        return parser

    def take_action(self, parsed_args):
        self.client().delete(BASE_URL + '/' + parsed_args.name)


class ListResourceProviderTrait(common.ProviderLookupMixin,
                                _TraitCommand, lister.Lister):
    """List the traits of a resource provider."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('uuid', metavar='<provider>',
                            help='Name or UUID of the resource provider.')
        return parser

    def take_action(self, parsed_args):
        url = PROVIDER_TRAITS_URL.format(uuid=parsed_args.uuid)
        return _rows(self.client().get(url)['traits'])


class SetResourceProviderTrait(common.ProviderLookupMixin,
                               _TraitCommand, lister.Lister):
    """Replace the traits of a resource provider.

    Traits not named are removed; give no --trait to remove them all.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('uuid', metavar='<provider>',
                            help='Name or UUID of the resource provider.')
        parser.add_argument('--trait', metavar='<trait>', action='append',
                            default=[],
                            help='Name of a trait; may be repeated.')
        return parser

    def take_action(self, parsed_args):
        api = self.client()
        provider = api.get(PROVIDER_URL.format(uuid=parsed_args.uuid))
        body = {'traits': parsed_args.trait,
                'resource_provider_generation': provider['generation']}
        answer = api.put(PROVIDER_TRAITS_URL.format(uuid=parsed_args.uuid),
                         body)
        return _rows(answer['traits'])


class DeleteResourceProviderTrait(common.ProviderLookupMixin,
                                  _TraitCommand, command.Command):
    """Remove every trait from a resource provider."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('uuid', metavar='<provider>',
                            help='Name or UUID of the resource provider.')
        return parser

    def take_action(self, parsed_args):
        self.client().delete(PROVIDER_TRAITS_URL.format(
            uuid=parsed_args.uuid))
