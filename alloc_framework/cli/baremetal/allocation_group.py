"""``alloc baremetal allocation group create|list|show|delete``.

Allocation groups are an extension of ours, at every API version (no
version gate).
"""

from cliff import command
from cliff import lister
from cliff import show

from alloc_framework.cli.baremetal import base
from alloc_framework.cli import common

BASE_URL = '/allocation_groups'
FIELDS = ('uuid', 'name', 'state', 'owner', 'last_error', 'members',
          'spread', 'allocations', 'created_at', 'updated_at')
SHORT_FIELDS = ('uuid', 'name', 'state', 'owner')
_MEMBER_KEYS = {'count': 'count', 'resource_class': 'resource_class',
                'resource-class': 'resource_class', 'trait': 'traits',
                'candidate_node': 'candidate_nodes',
                'candidate-node': 'candidate_nodes'}


def _shape(group):
    fields = common.present_fields(FIELDS, group)
    return fields, common.get_properties(group, fields)


def parse_member(text):
    """``count=3,resource_class=rc,trait=T,candidate_node=n`` -> dict.

    ``trait`` and ``candidate_node`` may be repeated.
    """
    member = {}
    for item in text.split(','):
        key, sep, value = item.partition('=')
        name = _MEMBER_KEYS.get(key.strip())
        if not sep or name is None or not value:
            raise common.CommandError(
                'Invalid --member %r: expected count=N,resource_class=RC '
                'and optionally trait=T and candidate_node=NODE (may be '
                'repeated)' % text)
        if name in ('traits', 'candidate_nodes'):
            member.setdefault(name, []).append(value)
        elif name == 'count':
            try:
                member['count'] = int(value)
            except ValueError:
                raise common.CommandError('Invalid --member %r: count must '
                                          'be an integer' % text)
        else:
            member[name] = value
    if 'count' not in member or 'resource_class' not in member:
        raise common.CommandError('Invalid --member %r: count and '
                                  'resource_class are required' % text)
    return member


def _describe(group, elapsed):
    return 'Allocation group %s: %s, %s elapsed' % (
        group.get('name') or group['uuid'], group['state'],
        base.elapsed_text(elapsed))


class CreateAllocationGroup(base.BaremetalMixin, show.ShowOne):
    """Allocate several nodes at once, all of them or none."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            '--member', metavar='<count=N,resource_class=RC[,trait=T]'
                                '[,candidate_node=NODE]>',
            action='append', dest='members', required=True,
            help='N nodes of resource class RC, with the traits and among '
                 'the candidate nodes given; may be repeated.')
        parser.add_argument(
            '--spread', metavar='<field>',
            help='Spread the nodes of each member over the values of this '
                 'node field: conductor_group or properties/<key>.')
        parser.add_argument('--name', metavar='<name>',
                            help='Unique name of the group.')
        parser.add_argument('--uuid', metavar='<uuid>',
                            help='UUID of the group.')
        parser.add_argument('--owner', metavar='<owner>',
                            help='Project owning the group.')
        base.add_wait_option(parser, 'the group is active (a group in '
                                     'error fails the command)')
        return parser

    def take_action(self, parsed_args):
        api = self.client()
        body = {'members': [parse_member(m) for m in parsed_args.members]}
        for name in ('name', 'uuid', 'owner'):
            value = getattr(parsed_args, name)
            if value is not None:
                body[name] = value
        if parsed_args.spread:
            body['spread'] = {'field': parsed_args.spread}
        group = api.post(BASE_URL, body)
        if parsed_args.wait_timeout is not None:
            uuid = group['uuid']
            group = base.wait_for(
                lambda: api.get(BASE_URL + '/' + uuid),
                lambda g: g['state'] == 'active',
                lambda g: (g.get('last_error') or 'allocation group failed'
                           if g['state'] == 'error' else None),
                'allocation group %s' % uuid, parsed_args.wait_timeout,
                interval=0.2, progress=base.Progress(self.app, parsed_args),
                describe=_describe)
        return _shape(group)


class ListAllocationGroup(base.BaremetalMixin, lister.Lister):
    """List allocation groups."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        base.add_list_options(parser, 'allocation group')
        parser.add_argument(
            '--state', metavar='<state>', type=str.lower,
            help='Only groups in this state (allocating, active, error).')
        parser.add_argument('--owner', metavar='<owner>',
                            help='Only groups of this owner.')
        parser.add_argument('--long', action='store_true',
                            help='Show every field.')
        return parser

    def take_action(self, parsed_args):
        api = self.client()
        params = base.list_params(parsed_args)
        for name in ('state', 'owner'):
            value = getattr(parsed_args, name)
            if value:
                params[name] = value
        columns = FIELDS if parsed_args.long else SHORT_FIELDS
        items = base.list_all(api, BASE_URL, 'allocation_groups', params)
        return columns, [common.get_properties(g, columns) for g in items]


class ShowAllocationGroup(base.BaremetalMixin, show.ShowOne):
    """Show an allocation group."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('group', metavar='<group>',
                            help='Name or UUID of the group.')
        return parser

    def take_action(self, parsed_args):
        return _shape(self.client().get(BASE_URL + '/' + parsed_args.group))


class DeleteAllocationGroup(base.BaremetalMixin, command.Command):
    """Delete allocation groups with their allocations."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('groups', metavar='<group>', nargs='+',
                            help='Names or UUIDs of the groups.')
        return parser

    def take_action(self, parsed_args):
        base.delete_each(self.client(), BASE_URL, parsed_args.groups,
                         'allocation groups')
