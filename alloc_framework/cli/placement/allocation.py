"""``alloc resource allocation show|set|unset|delete|batch set``.

The allocations of one consumer. The same commands are also reachable as
``alloc resource provider allocation ...``, the names osc-placement uses.
``batch set`` writes the allocations of several consumers in one request.
"""

from cliff import command
from cliff import lister

from alloc_framework.cli import common

BASE_URL = '/allocations/{uuid}'


def parse_allocations(values):
    """``rp=<uuid>,VCPU=2,MEMORY_MB=512`` options -> {rp: {rc: amount}}."""
    allocations = {}
    for value in values:
        parts = dict(p.partition('=')[::2] for p in value.split(','))
        rp = parts.pop('rp', None)
        if not rp or not parts or not all(parts.values()):
            raise common.CommandError(
                '--allocation expects rp=<uuid>,<class>=<amount>[,...], '
                'got %r' % value)
        resources = allocations.setdefault(rp, {})
        for rc, amount in parts.items():
            try:
                amount = int(amount)
            except ValueError:
                raise common.CommandError(
                    'Invalid amount %r for %s in %r' % (amount, rc, value))
            if resources.get(rc, amount) != amount:
                raise common.CommandError(
                    'Conflicting amounts of %s for provider %s' % (rc, rp))
            resources[rc] = amount
    return allocations


class _AllocationCommand(common.VersionMixin, lister.Lister):

    def show(self, api, uuid):
        """Columns and rows: one row per provider the consumer uses."""
        answer = api.get(BASE_URL.format(uuid=uuid))
        fields = ('resource_provider', 'generation', 'resources')
        extra = {}
        if self.supports('1.12'):
            fields += ('project_id', 'user_id')
            extra = {'project_id': answer.get('project_id'),
                     'user_id': answer.get('user_id')}
        if self.supports('1.38'):
            fields += ('consumer_type',)
            extra['consumer_type'] = answer.get('consumer_type')
        rows = []
        for rp in sorted(answer['allocations']):
            row = dict(answer['allocations'][rp], resource_provider=rp,
                       **extra)
            rows.append(common.get_properties(row, fields))
        return fields, rows


class ShowAllocation(_AllocationCommand):
    """Show the allocations of a consumer, one row per provider."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('uuid', metavar='<uuid>',
                            help='UUID of the consumer.')
        return parser

    def take_action(self, parsed_args):
        return self.show(self.client(), parsed_args.uuid)


class SetAllocation(_AllocationCommand):
    """Replace all the allocations of a consumer.

    Example::

        alloc resource allocation set <consumer> \\
            --allocation rp=<provider>,VCPU=2,MEMORY_MB=1024 \\
            --project-id <project> --user-id <user>
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('uuid', metavar='<uuid>',
                            help='UUID of the consumer.')
        parser.add_argument(
            '--allocation', metavar='<rp=uuid,class=amount,...>',
            action='append', default=[],
            help='Allocations against one provider; may be repeated.')
        parser.add_argument('--project-id', metavar='<project_id>',
                            help='Project of the consumer (required from '
                                 '1.8).')
        parser.add_argument('--user-id', metavar='<user_id>',
                            help='User of the consumer (required from '
                                 '1.8).')
        parser.add_argument('--consumer-type', metavar='<consumer_type>',
                            help='Type of the consumer (required from '
                                 '1.38).')
        return parser

    def take_action(self, parsed_args):
        api = self.client()
        allocations = parse_allocations(parsed_args.allocation)
        if not allocations:
            raise common.CommandError(
                'At least one --allocation must be given')
        url = BASE_URL.format(uuid=parsed_args.uuid)
        if self.supports('1.12'):
            body = {'allocations': {rp: {'resources': res}
                                    for rp, res in allocations.items()}}
        else:
            body = {'allocations': [
                {'resource_provider': {'uuid': rp}, 'resources': res}
                for rp, res in allocations.items()]}
        if self.supports('1.8'):
            missing = [o for o in ('project_id', 'user_id')
                       if not getattr(parsed_args, o)]
            if missing:
                raise common.CommandError(
                    '--project-id and --user-id are required from '
                    'microversion 1.8')
            body['project_id'] = parsed_args.project_id
            body['user_id'] = parsed_args.user_id
        if self.supports('1.28'):
            body['consumer_generation'] = api.get(url).get(
                'consumer_generation')
        if self.supports('1.38'):
            if not parsed_args.consumer_type:
                raise common.CommandError(
                    '--consumer-type is required from microversion 1.38')
            body['consumer_type'] = parsed_args.consumer_type
        elif parsed_args.consumer_type:
            self.require_version('1.38', '--consumer-type')
        api.put(url, body)
        return self.show(api, parsed_args.uuid)


class UnsetAllocation(_AllocationCommand):
    """Remove some or all of the allocations of a consumer (1.12+).

    Without --provider and --resource-class every allocation of the
    consumer is removed.
    """

    min_version = '1.12'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('uuid', metavar='<uuid>',
                            help='UUID of the consumer.')
        parser.add_argument(
            '--provider', metavar='<provider_uuid>', action='append',
            default=[],
            help='Remove the allocations against this provider; may be '
                 'repeated.')
        parser.add_argument(
            '--resource-class', metavar='<resource_class>',
            action='append', default=[],
            help='Remove the allocations of this class (from the given '
                 'providers, or from all); may be repeated.')
        return parser

    def take_action(self, parsed_args):
        api = self.client()
        url = BASE_URL.format(uuid=parsed_args.uuid)
        current = api.get(url)
        allocations = current['allocations']
        providers = set(parsed_args.provider or allocations)
        if parsed_args.resource_class:
            for rp in providers & set(allocations):
                res = allocations[rp]['resources']
                for rc in parsed_args.resource_class:
                    res.pop(rc, None)
                if not res:
                    del allocations[rp]
        else:
            for rp in providers:
                allocations.pop(rp, None)
        if allocations or self.supports('1.28'):
            body = {'allocations': {rp: {'resources': a['resources']}
                                    for rp, a in allocations.items()},
                    'project_id': current.get('project_id'),
                    'user_id': current.get('user_id')}
            if self.supports('1.28'):
                body['consumer_generation'] = current.get(
                    'consumer_generation')
            if self.supports('1.38'):
                body['consumer_type'] = current.get('consumer_type')
            api.put(url, body)
        else:
            # Before 1.28 an empty allocation set cannot be PUT.
            api.delete(url)
        return self.show(api, parsed_args.uuid)


class DeleteAllocation(common.VersionMixin, command.Command):
    """Delete all the allocations of a consumer."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('uuid', metavar='<uuid>',
                            help='UUID of the consumer.')
        return parser

    def take_action(self, parsed_args):
        self.client().delete(BASE_URL.format(uuid=parsed_args.uuid))


class SetAllocationBatch(common.VersionMixin, command.Command):
    """Write the allocations of several consumers at once (1.13+).

    The body of POST /allocations is read from a JSON file: consumer
    UUIDs mapped to their allocations, project, user and (from 1.28)
    consumer generation. Either every consumer is written or none is.

    Example::

        alloc resource allocation batch set --file allocations.json
    """

    min_version = '1.13'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        common.add_file_argument(parser, 'allocations of each consumer')
        return parser

    def take_action(self, parsed_args):
        body = common.load_json_file(parsed_args.file)
        self.client().post('/allocations', body)
