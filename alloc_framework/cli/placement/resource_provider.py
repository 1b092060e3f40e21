"""``alloc resource provider create|list|show|set|delete``."""

from cliff import columns
from cliff import command
from cliff import lister
from cliff import show

from alloc_framework.cli import common

BASE_URL = '/resource_providers'


def provider_fields(cmd):
    """Columns of a provider; the tree columns exist from 1.14."""
    fields = ('uuid', 'name', 'generation')
    if cmd.supports('1.14'):
        fields += ('root_provider_uuid', 'parent_provider_uuid')
    return fields


def inventories_with_usage(api, rp_uuid):
    """``{class: inventory}`` of a provider, each with its usage.

    Each inventory has the fields of ``GET .../inventories`` plus
    ``used`` and ``capacity`` (``int((total - reserved) *
    allocation_ratio)``, what Placement can hand out in all). Two
    requests, which any Placement (ours or upstream) answers.
    """
    url = BASE_URL + '/' + rp_uuid
    inventories = api.get(url + '/inventories')['inventories']
    usages = api.get(url + '/usages')['usages']
    result = {}
    for rc, inv in inventories.items():
        entry = dict(inv)
        entry.pop('resource_provider_generation', None)
        entry['used'] = usages.get(rc, 0)
        entry['capacity'] = int((inv['total'] - inv['reserved']) *
                                inv['allocation_ratio'])
        result[rc] = entry
    return result


def over_capacity(inventories):
    """``{class: {'used': u, 'capacity': c}}`` of the classes whose usage
    exceeds the capacity (``inventories`` as from
    :func:`inventories_with_usage`).

    Placement accepts an inventory that shrinks below its usage; the
    provider then takes no new allocation of the class until enough
    allocations go.
    """
    return {rc: {'used': inv['used'], 'capacity': inv['capacity']}
            for rc, inv in inventories.items()
            if inv['used'] > inv['capacity']}


class OverCapacityColumn(columns.FormattableColumn):
    """``VCPU: 6 used, capacity 5`` in tables; the dict in json/yaml."""

    def human_readable(self):
        return '; '.join('%s: %d used, capacity %d'
                         % (rc, v['used'], v['capacity'])
                         for rc, v in sorted(self._value.items()))


def trait_query(required, forbidden):
    """The ``required`` query values for --required / --forbidden.

    Plain traits travel in one value (``A,B,!C``), which every version
    from 1.18 accepts. A comma inside one ``--required`` is the 1.39
    any-of form: each such option becomes its own ``in:A,B`` value.
    """
    plain = [r for r in required if ',' not in r]
    plain += ['!' + f for f in forbidden]
    values = ['in:' + r for r in required if ',' in r]
    if plain:
        values.append(','.join(plain))
    return values


class CreateResourceProvider(common.ProviderLookupMixin,
                             common.VersionMixin, show.ShowOne):
    """Create a new resource provider."""

    provider_options = ('parent_provider',)

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('name', metavar='<name>',
                            help='Name of the resource provider.')
        parser.add_argument('--uuid', metavar='<uuid>',
                            help='UUID of the resource provider.')
        parser.add_argument(
            '--parent-provider', metavar='<parent_provider>',
            help='Name or UUID of the parent provider; omit for a root '
                 'provider '
                 '(requires --os-placement-api-version 1.14).')
        return parser

    def take_action(self, parsed_args):
        api = self.client()
        body = {'name': parsed_args.name}
        if parsed_args.uuid:
            body['uuid'] = parsed_args.uuid
        if parsed_args.parent_provider:
            self.require_version('1.14', '--parent-provider')
            body['parent_provider_uuid'] = parsed_args.parent_provider
        resp = api.request('POST', BASE_URL, json=body)
        # Before 1.20 the answer is an empty 201 with a Location header.
        if resp.content:
            provider = resp.json()
        else:
            uuid = resp.headers['Location'].rstrip('/').rsplit('/', 1)[-1]
            provider = api.get(BASE_URL + '/' + uuid)
        fields = provider_fields(self)
        return fields, common.get_properties(provider, fields)


class ListResourceProvider(common.ProviderLookupMixin,
                           common.VersionMixin, lister.Lister):
    """List resource providers."""

    provider_options = ('in_tree',)

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--uuid', metavar='<uuid>',
                            help='UUID of the resource provider.')
        parser.add_argument('--name', metavar='<name>',
                            help='Name of the resource provider.')
        parser.add_argument(
            '--resource', metavar='<resource_class>=<value>',
            action='append', default=[],
            help='Amount of a resource class the provider must have the '
                 'capacity to serve; may be repeated (1.4).')
        parser.add_argument(
            '--in-tree', metavar='<in_tree>',
            help='Only providers in the tree of this provider, by name or '
                 'UUID (1.14).')
        parser.add_argument(
            '--required', metavar='<required>', action='append', default=[],
            help='A required trait; may be repeated (1.18). A comma '
                 'separated list means any of them (1.39).')
        parser.add_argument(
            '--forbidden', metavar='<forbidden>', action='append',
            default=[],
            help='A forbidden trait; may be repeated (1.22).')
        parser.add_argument(
            '--member-of', metavar='<member_of>', action='append',
            default=[],
            help='Comma separated aggregate UUIDs, the provider must be in '
                 'one of them; may be repeated to require several (1.3, '
                 'repeated 1.24).')
        parser.add_argument(
            '--over-capacity', action='store_true',
            help='Only providers whose usage of some resource class '
                 'exceeds its capacity, (total - reserved) * '
                 'allocation_ratio, as after an inventory shrank below '
                 'its usage; adds an over_capacity column. Reads the '
                 'inventories and usages of each listed provider.')
        return parser

    def take_action(self, parsed_args):
        api = self.client()
        params = {}
        if parsed_args.name:
            params['name'] = parsed_args.name
        if parsed_args.uuid:
            params['uuid'] = parsed_args.uuid
        if parsed_args.resource:
            self.require_version('1.4', '--resource')
            params['resources'] = ','.join(
                r.replace('=', ':') for r in parsed_args.resource)
        if parsed_args.in_tree:
            self.require_version('1.14', '--in-tree')
            params['in_tree'] = parsed_args.in_tree
        if parsed_args.required:
            self.require_version('1.18', '--required')
            if any(',' in r for r in parsed_args.required):
                self.require_version('1.39', '--required A,B')
        if parsed_args.forbidden:
            self.require_version('1.22', '--forbidden')
        required = trait_query(parsed_args.required, parsed_args.forbidden)
        if required:
            params['required'] = required
        if parsed_args.member_of:
            self.require_version('1.3', '--member-of')
            if len(parsed_args.member_of) > 1:
                self.require_version('1.24', 'Repeated --member-of')
            params['member_of'] = ['in:' + m for m in parsed_args.member_of]
        providers = api.get(BASE_URL, params=params)['resource_providers']
        fields = provider_fields(self)
        if not parsed_args.over_capacity:
            return fields, [common.get_properties(p, fields)
                            for p in providers]
        rows = []
        for provider in providers:
            over = over_capacity(inventories_with_usage(api,
                                                        provider['uuid']))
            if over:
                rows.append(common.get_properties(provider, fields) +
                            (OverCapacityColumn(over),))
        return fields + ('over_capacity',), rows


class ShowResourceProvider(common.ProviderLookupMixin,
                           common.VersionMixin, show.ShowOne):
    """Show resource provider details."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('uuid', metavar='<provider>',
                            help='Name or UUID of the resource provider.')
        parser.add_argument(
            '--allocations', action='store_true',
            help='Include the allocations against the provider.')
        return parser

    def take_action(self, parsed_args):
        api = self.client()
        url = BASE_URL + '/' + parsed_args.uuid
        provider = api.get(url)
        fields = provider_fields(self)
        if parsed_args.allocations:
            provider['allocations'] = api.get(
                url + '/allocations')['allocations']
            fields += ('allocations',)
        return fields, common.get_properties(provider, fields)


class SetResourceProvider(common.ProviderLookupMixin,
                          common.VersionMixin, show.ShowOne):
    """Update the name or the parent of a resource provider."""

    provider_options = ('uuid', 'parent_provider')

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('uuid', metavar='<provider>',
                            help='Name or UUID of the resource provider.')
        parser.add_argument('--name', metavar='<name>', required=True,
                            help='The new name of the resource provider.')
        parser.add_argument(
            '--parent-provider', metavar='<parent_provider>',
            help='Name or UUID of the new parent provider (1.14; '
                 're-parenting an '
                 'existing child needs 1.37).')
        return parser

    def take_action(self, parsed_args):
        api = self.client()
        body = {'name': parsed_args.name}
        if parsed_args.parent_provider:
            self.require_version('1.14', '--parent-provider')
            body['parent_provider_uuid'] = parsed_args.parent_provider
        provider = api.put(BASE_URL + '/' + parsed_args.uuid, body)
        fields = provider_fields(self)
        return fields, common.get_properties(provider, fields)


class DeleteResourceProvider(common.ProviderLookupMixin,
                             common.VersionMixin, command.Command):
    """Delete a resource provider."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('uuid', metavar='<provider>',
                            help='Name or UUID of the resource provider.')
        return parser

    def take_action(self, parsed_args):
        self.client().delete(BASE_URL + '/' + parsed_args.uuid)
