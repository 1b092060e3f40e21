"""``alloc resource provider inventory list|show|set|class set|delete``."""

from cliff import command
from cliff import lister
from cliff import show

from alloc_framework.cli import common

BASE_URL = '/resource_providers/{uuid}/inventories'
CLASS_URL = BASE_URL + '/{rc}'
USAGES_URL = '/resource_providers/{uuid}/usages'
PROVIDER_URL = '/resource_providers/{uuid}'

# Inventory fields with the type their values are sent as.
INVENTORY_FIELDS = {
    'allocation_ratio': float,
    'min_unit': int,
    'max_unit': int,
    'reserved': int,
    'step_size': int,
    'total': int,
}
# Column order as osc-placement prints it (scripts read -f value output).
FIELDS = ('allocation_ratio', 'min_unit', 'max_unit', 'reserved',
          'step_size', 'total')
FIELD_HELP = {
    'allocation_ratio': 'Overcommit factor: capacity is '
                        '(total - reserved) * allocation_ratio.',
    'min_unit': 'The smallest amount a single allocation can have.',
    'max_unit': 'The largest amount a single allocation can have.',
    'reserved': 'The amount the provider keeps for its own use.',
    'step_size': 'Allocations must be a multiple of this amount.',
    'total': 'The amount of the resource the provider has.',
}


def parse_resource(text):
    """``VCPU=8`` or ``VCPU:allocation_ratio=16`` -> (class, field, value)."""
    name, sep, value = text.partition('=')
    if not sep or not name or not value:
        raise common.CommandError(
            '--resource expects <resource_class>[:<field>]=<value>, got %r'
            % text)
    rc, _sep, field = name.partition(':')
    field = field or 'total'
    if field not in INVENTORY_FIELDS:
        raise common.CommandError(
            'Unknown inventory field %r in %r (valid: %s)'
            % (field, text, ', '.join(FIELDS)))
    try:
        return rc, field, INVENTORY_FIELDS[field](value)
    except ValueError:
        raise common.CommandError('Invalid %s value %r in %r'
                                  % (field, value, text))


def _rows(inventories, usages=None):
    fields = ('resource_class',) + FIELDS
    if usages is not None:
        fields += ('used',)
    rows = []
    for rc in sorted(inventories):
        inv = dict(inventories[rc], resource_class=rc)
        if usages is not None:
            inv['used'] = usages.get(rc, 0)
        rows.append(common.get_properties(inv, fields))
    return fields, rows


class ListInventory(common.ProviderLookupMixin,
                    common.VersionMixin, lister.Lister):
    """List the inventories of a resource provider, with usage."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('uuid', metavar='<provider>',
                            help='Name or UUID of the resource provider.')
        return parser

    def take_action(self, parsed_args):
        api = self.client()
        invs = api.get(BASE_URL.format(uuid=parsed_args.uuid))
        usages = api.get(USAGES_URL.format(uuid=parsed_args.uuid))
        return _rows(invs['inventories'], usages['usages'])


class ShowInventory(common.ProviderLookupMixin,
                    common.VersionMixin, show.ShowOne):
    """Show the inventory of one resource class of a provider."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('uuid', metavar='<provider>',
                            help='Name or UUID of the resource provider.')
        parser.add_argument('resource_class', metavar='<resource_class>',
                            help='Resource class, e.g. VCPU or CUSTOM_X.')
        return parser

    def take_action(self, parsed_args):
        api = self.client()
        inv = api.get(CLASS_URL.format(uuid=parsed_args.uuid,
                                       rc=parsed_args.resource_class))
        usages = api.get(USAGES_URL.format(uuid=parsed_args.uuid))['usages']
        inv['used'] = usages.get(parsed_args.resource_class, 0)
        fields = FIELDS + ('used',)
        return fields, common.get_properties(inv, fields)


class SetInventory(common.ProviderLookupMixin,
                   common.VersionMixin, lister.Lister):
    """Replace the inventories of a resource provider.

    Every resource class not named is removed unless ``--amend`` is
    given. Example::

        alloc resource provider inventory set <uuid> \\
            --resource VCPU=16 --resource VCPU:allocation_ratio=4.0 \\
            --resource MEMORY_MB=65536
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            'uuid', metavar='<provider>',
            help='Name or UUID of the resource provider, or UUID of an '
                 'aggregate with --aggregate.')
        parser.add_argument(
            '--resource', metavar='<resource_class>:<field>=<value>',
            action='append', default=[],
            help='An inventory value; the field defaults to total. Fields: '
                 '%s. May be repeated.' % ', '.join(FIELDS))
        parser.add_argument(
            '--aggregate', action='store_true',
            help='Set the inventories of every provider in the aggregate '
                 'whose UUID is given (1.3).')
        parser.add_argument(
            '--amend', action='store_true',
            help='Update the given classes and keep the others.')
        parser.add_argument(
            '--dry-run', action='store_true',
            help='Show what would be set without setting it.')
        return parser

    def provider_arguments(self, parsed_args):
        # With --aggregate the argument is an aggregate, not a provider.
        return () if parsed_args.aggregate else ('uuid',)

    def take_action(self, parsed_args):
        api = self.client()
        changes = [parse_resource(r) for r in parsed_args.resource]
        if parsed_args.aggregate:
            self.require_version('1.3', '--aggregate')
            providers = api.get('/resource_providers', params={
                'member_of': parsed_args.uuid})['resource_providers']
            if not providers:
                raise common.CommandError(
                    'No resource providers in aggregate %s'
                    % parsed_args.uuid)
        else:
            providers = [api.get(PROVIDER_URL.format(
                uuid=parsed_args.uuid))]
        results = []
        for provider in providers:
            url = BASE_URL.format(uuid=provider['uuid'])
            if parsed_args.amend:
                payload = api.get(url)
            else:
                payload = {'inventories': {},
                           'resource_provider_generation':
                               provider['generation']}
            for rc, field, value in changes:
                payload['inventories'].setdefault(rc, {})[field] = value
            if not parsed_args.dry_run:
                payload = api.put(url, payload)
            results.append((provider['uuid'], payload['inventories']))
        if not parsed_args.aggregate:
            return _rows(results[0][1])
        fields = ('resource_provider', 'resource_class') + FIELDS
        rows = []
        for uuid, invs in results:
            _fields, sub = _rows(invs)
            rows.extend((uuid,) + row for row in sub)
        return fields, rows


class SetClassInventory(common.ProviderLookupMixin,
                        common.VersionMixin, show.ShowOne):
    """Create or replace the inventory of one class of a provider.

    Example::

        alloc resource provider inventory class set <uuid> VCPU --total 8
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('uuid', metavar='<provider>',
                            help='Name or UUID of the resource provider.')
        parser.add_argument('resource_class', metavar='<class>',
                            help='Resource class, e.g. VCPU or CUSTOM_X.')
        for name in FIELDS:
            parser.add_argument(
                '--' + name, metavar='<%s>' % name,
                type=INVENTORY_FIELDS[name], required=(name == 'total'),
                help=FIELD_HELP[name])
        return parser

    def take_action(self, parsed_args):
        api = self.client()
        provider = api.get(PROVIDER_URL.format(uuid=parsed_args.uuid))
        body = {'resource_provider_generation': provider['generation']}
        for name in FIELDS:
            value = getattr(parsed_args, name)
            if value is not None:
                body[name] = value
        inv = api.put(CLASS_URL.format(uuid=parsed_args.uuid,
                                       rc=parsed_args.resource_class), body)
        return FIELDS, common.get_properties(inv, FIELDS)


class DeleteInventory(common.ProviderLookupMixin,
                      common.VersionMixin, command.Command):
    """Delete the inventories of a provider (one class: --resource-class).

    Deleting all inventories at once needs --os-placement-api-version 1.5.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('uuid', metavar='<provider>',
                            help='Name or UUID of the resource provider.')
        parser.add_argument(
            '--resource-class', metavar='<resource_class>',
            help='Delete only the inventory of this class.')
        return parser

    def take_action(self, parsed_args):
        api = self.client()
        if parsed_args.resource_class:
            api.delete(CLASS_URL.format(uuid=parsed_args.uuid,
                                        rc=parsed_args.resource_class))
        else:
            self.require_version('1.5', 'Deleting all inventories')
            api.delete(BASE_URL.format(uuid=parsed_args.uuid))
