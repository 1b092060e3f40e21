"""``alloc resource provider aggregate list|set`` (microversion 1.1+)."""

from cliff import lister

from alloc_framework.cli import common

BASE_URL = '/resource_providers/{uuid}/aggregates'
FIELDS = ('uuid',)


def _rows(answer):
    return FIELDS, [(a,) for a in sorted(answer['aggregates'])]


class ListAggregate(common.ProviderLookupMixin,
                    common.VersionMixin, lister.Lister):
    """List the aggregates a resource provider is in."""

    min_version = '1.1'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('uuid', metavar='<provider>',
                            help='Name or UUID of the resource provider.')
        return parser

    def take_action(self, parsed_args):
        return _rows(self.client().get(BASE_URL.format(
            uuid=parsed_args.uuid)))


class SetAggregate(common.ProviderLookupMixin,
                   common.VersionMixin, lister.Lister):
    """Replace the aggregates of a resource provider.

    Aggregates not named are removed; give no --aggregate to remove them
    all. From 1.19 the provider generation is sent: with --generation the
    one given, otherwise the provider's current one.
    """

    min_version = '1.1'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('uuid', metavar='<provider>',
                            help='Name or UUID of the resource provider.')
        parser.add_argument(
            '--aggregate', metavar='<aggregate_uuid>', action='append',
            default=[], help='UUID of an aggregate; may be repeated.')
        parser.add_argument(
            '--generation', metavar='<generation>', type=int,
            help='Expected provider generation (1.19); a mismatch fails '
                 'with a conflict instead of overwriting a concurrent '
                 'change.')
        return parser

    def take_action(self, parsed_args):
        api = self.client()
        url = BASE_URL.format(uuid=parsed_args.uuid)
        if self.supports('1.19'):
            generation = parsed_args.generation
            if generation is None:
                generation = api.get(
                    '/resource_providers/' + parsed_args.uuid)['generation']
            body = {'aggregates': parsed_args.aggregate,
                    'resource_provider_generation': generation}
        else:
            if parsed_args.generation is not None:
                self.require_version('1.19', '--generation')
            body = parsed_args.aggregate
        return _rows(api.put(url, body))
