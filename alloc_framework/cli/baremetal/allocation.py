"""``alloc baremetal allocation create|list|show|set|unset|retry|delete``."""

from cliff import command
from cliff import lister
from cliff import show

from alloc_framework.cli.baremetal import base
from alloc_framework.cli import common

BASE_URL = '/allocations'
FIELDS = ('uuid', 'name', 'state', 'owner', 'node_uuid', 'last_error',
          'resource_class', 'traits', 'candidate_nodes', 'extra',
          'created_at', 'updated_at')
SHORT_FIELDS = ('uuid', 'name', 'resource_class', 'state', 'node_uuid')


def _shape(allocation, fields=FIELDS):
    fields = common.present_fields(fields, allocation)
    return fields, common.get_properties(allocation, fields)


def _wait(api, uuid, timeout, progress=None):
    return base.wait_for(
        lambda: api.get(BASE_URL + '/' + uuid),
        lambda a: a['state'] == 'active',
        lambda a: (a.get('last_error') or 'allocation failed'
                   if a['state'] == 'error' else None),
        'allocation %s' % uuid, timeout, interval=0.2, progress=progress,
        describe=lambda a, elapsed: 'Allocation %s: %s, %s elapsed' % (
            a.get('name') or uuid, a['state'], base.elapsed_text(elapsed)))


class _AllocationCommand(base.BaremetalMixin):
    # Allocations appeared in bare metal API 1.52.
    min_version = '1.52'


class CreateAllocation(_AllocationCommand, show.ShowOne):
    """Create a new node allocation."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            '--resource-class', metavar='<resource_class>',
            help='Resource class of the node to allocate (required unless '
                 '--node is given).')
        parser.add_argument(
            '--trait', metavar='<trait>', action='append', dest='traits',
            help='A trait the node must have; may be repeated.')
        parser.add_argument(
            '--candidate-node', metavar='<node>', action='append',
            dest='candidate_nodes',
            help='A node (name or UUID) to choose from; may be repeated.')
        parser.add_argument('--name', metavar='<name>',
                            help='Unique name of the allocation.')
        parser.add_argument('--uuid', metavar='<uuid>',
                            help='UUID of the allocation.')
        parser.add_argument('--owner', metavar='<owner>',
                            help='Project owning the allocation.')
        parser.add_argument(
            '--extra', metavar='<key=value>', action='append',
            help='Arbitrary metadata; may be repeated.')
        parser.add_argument(
            '--node', metavar='<node>',
            help='Backfill: record an allocation for this already '
                 'deployed node instead of searching for one.')
        base.add_wait_option(parser, 'the allocation is active (an error '
                                     'allocation fails the command)')
        return parser

    def take_action(self, parsed_args):
        if not parsed_args.node and not parsed_args.resource_class:
            raise common.CommandError(
                '--resource-class is required unless --node is given')
        api = self.client()
        if parsed_args.node:
            self.require_version('1.58', '--node')
        if parsed_args.owner:
            self.require_version('1.60', '--owner')
        body = {}
        for name in ('resource_class', 'traits', 'candidate_nodes', 'name',
                     'uuid', 'owner', 'node'):
            value = getattr(parsed_args, name)
            if value is not None:
                body[name] = value
        if parsed_args.extra:
            body['extra'] = common.parse_deserialized(parsed_args.extra,
                                                      '--extra')
        allocation = api.post(BASE_URL, body)
        if parsed_args.wait_timeout is not None:
            allocation = _wait(api, allocation['uuid'],
                               parsed_args.wait_timeout,
                               base.Progress(self.app, parsed_args))
        return _shape(allocation)


class ListAllocation(_AllocationCommand, lister.Lister):
    """List node allocations."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        base.add_list_options(parser, 'allocation')
        parser.add_argument('--node', metavar='<node>',
                            help='Only the allocation of this node.')
        parser.add_argument('--resource-class', metavar='<resource_class>',
                            help='Only allocations of this resource class.')
        parser.add_argument(
            '--state', metavar='<state>', type=str.lower,
            help='Only allocations in this state (allocating, active, '
                 'error).')
        parser.add_argument('--owner', metavar='<owner>',
                            help='Only allocations of this owner.')
        detail = parser.add_mutually_exclusive_group()
        detail.add_argument('--long', action='store_true',
                            help='Show every field.')
        common.add_fields_argument(detail, FIELDS)
        return parser

    def take_action(self, parsed_args):
        api = self.client()
        if parsed_args.owner:
            self.require_version('1.60', '--owner')
        params = base.list_params(parsed_args)
        for name in ('node', 'resource_class', 'state', 'owner'):
            value = getattr(parsed_args, name)
            if value:
                params[name] = value
        fields = common.split_fields(parsed_args.fields)
        if fields:
            params['fields'] = ','.join(fields)
            columns = tuple(fields)
        elif parsed_args.long:
            columns = FIELDS
        else:
            columns = SHORT_FIELDS
        items = base.list_all(api, BASE_URL, 'allocations', params)
        return columns, [common.get_properties(a, columns) for a in items]


class ShowAllocation(_AllocationCommand, show.ShowOne):
    """Show a node allocation."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('allocation', metavar='<allocation>',
                            help='Name or UUID of the allocation.')
        common.add_fields_argument(parser, FIELDS)
        return parser

    def take_action(self, parsed_args):
        params = {}
        fields = common.split_fields(parsed_args.fields)
        if fields:
            params['fields'] = ','.join(fields)
        allocation = self.client().get(
            BASE_URL + '/' + parsed_args.allocation, params=params)
        return _shape(allocation, tuple(fields) or FIELDS)


class SetAllocation(_AllocationCommand, show.ShowOne):
    """Set the name or extra metadata of an allocation."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('allocation', metavar='<allocation>',
                            help='Name or UUID of the allocation.')
        parser.add_argument('--name', metavar='<name>',
                            help='The new name of the allocation.')
        parser.add_argument(
            '--extra', metavar='<key=value>', action='append', default=[],
            help='Extra metadata to set; may be repeated.')
        return parser

    min_version = '1.57'

    def take_action(self, parsed_args):
        ops = []
        if parsed_args.name:
            ops.append({'op': 'add', 'path': '/name',
                        'value': parsed_args.name})
        ops += common.patch_ops('add', ['extra/' + e
                                        for e in parsed_args.extra])
        if not ops:
            raise common.CommandError('Nothing to set: give --name or '
                                      '--extra')
        return _shape(self.client().patch(
            BASE_URL + '/' + parsed_args.allocation, ops))


class UnsetAllocation(_AllocationCommand, show.ShowOne):
    """Unset the name or extra metadata of an allocation."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('allocation', metavar='<allocation>',
                            help='Name or UUID of the allocation.')
        parser.add_argument('--name', action='store_true',
                            help='Unset the name.')
        parser.add_argument(
            '--extra', metavar='<key>', action='append', default=[],
            help='Extra key to remove; may be repeated.')
        return parser

    min_version = '1.57'

    def take_action(self, parsed_args):
        ops = []
        if parsed_args.name:
            ops.append({'op': 'remove', 'path': '/name'})
        ops += common.patch_ops('remove', ['extra/' + e
                                           for e in parsed_args.extra])
        if not ops:
            raise common.CommandError('Nothing to unset: give --name or '
                                      '--extra')
        return _shape(self.client().patch(
            BASE_URL + '/' + parsed_args.allocation, ops))


class RetryAllocation(_AllocationCommand, show.ShowOne):
    """Retry a failed allocation, keeping its UUID and name."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('allocation', metavar='<allocation>',
                            help='Name or UUID of the allocation (in state '
                                 'error).')
        base.add_wait_option(parser, 'the allocation is active (an error '
                                     'allocation fails the command)')
        return parser

    def take_action(self, parsed_args):
        api = self.client()
        allocation = api.post(
            BASE_URL + '/' + parsed_args.allocation + '/retry', None)
        if parsed_args.wait_timeout is not None:
            allocation = _wait(api, allocation['uuid'],
                               parsed_args.wait_timeout,
                               base.Progress(self.app, parsed_args))
        return _shape(allocation)


class DeleteAllocation(_AllocationCommand, command.Command):
    """Delete allocations and release their nodes."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('allocations', metavar='<allocation>',
                            nargs='+',
                            help='Names or UUIDs of the allocations.')
        return parser

    def take_action(self, parsed_args):
        base.delete_each(self.client(), BASE_URL, parsed_args.allocations,
                         'allocations')
