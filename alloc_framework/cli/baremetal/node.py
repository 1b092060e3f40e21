"""``alloc baremetal node create|list|show|set|unset|delete``,
``... node children list`` and ``... node inventory save``."""

import json

from cliff import command
from cliff import lister
from cliff import show

from alloc_framework.cli.baremetal import base
from alloc_framework.cli import common

BASE_URL = '/nodes'
SHORT_FIELDS = ('uuid', 'name', 'instance_uuid', 'power_state',
                'provision_state', 'maintenance')
# The fields of a node, in the order they are shown.
FIELDS = (
    'uuid', 'name', 'description', 'driver', 'driver_info', 'properties',
    'extra', 'instance_info', 'instance_uuid', 'allocation_uuid',
    'resource_class', 'power_state', 'target_power_state',
    'provision_state', 'target_provision_state', 'provision_updated_at',
    'maintenance', 'maintenance_reason', 'fault', 'last_error',
    'clean_step', 'deploy_step', 'reservation', 'conductor',
    'conductor_group', 'owner', 'lessee', 'power_interface',
    'deploy_interface', 'management_interface', 'boot_interface',
    'bios_interface', 'automated_clean',
    'protected', 'protected_reason', 'retired', 'retired_reason', 'traits',
    'shard', 'parent_node', 'created_at', 'updated_at')

# Simple string fields: option name -> API field.
STRING_FIELDS = ('name', 'description', 'driver', 'resource_class',
                 'conductor_group', 'owner', 'lessee', 'power_interface',
                 'deploy_interface', 'management_interface',
                 'boot_interface', 'bios_interface')
# String fields of later microversions -> the version they need.
VERSIONED_FIELDS = {'shard': '1.82', 'parent_node': '1.83'}
# Dict fields set with repeated KEY=VALUE options.
DICT_FIELDS = {'driver_info': '--driver-info', 'properties': '--property',
               'extra': '--extra', 'instance_info': '--instance-info'}


def shape(node, fields=None):
    """Columns and values of a node; unknown extra keys are shown too."""
    if fields:
        columns = tuple(fields)
    else:
        columns = common.present_fields(FIELDS, node) + tuple(
            sorted(k for k in node if k not in FIELDS and k != 'links'))
    return columns, common.get_properties(node, columns)


def _add_string_options(parser):
    for name in STRING_FIELDS:
        parser.add_argument('--' + name.replace('_', '-'),
                            metavar='<%s>' % name,
                            help='Node %s.' % name.replace('_', ' '))
    parser.add_argument('--shard', metavar='<shard>',
                        help='Shard of the node (API 1.82).')
    parser.add_argument('--parent-node', metavar='<node>',
                        help='Name or UUID of the node this node is part '
                             'of (API 1.83).')


def _versioned_values(command, parsed_args):
    """{field: value} of the versioned string options given."""
    values = {}
    for name, version in VERSIONED_FIELDS.items():
        value = getattr(parsed_args, name)
        if value is not None:
            command.require_version(version, '--' + name.replace('_', '-'))
            values[name] = value
    return values


def _add_dict_options(parser, removing=False):
    for name, flag in DICT_FIELDS.items():
        parser.add_argument(
            flag, metavar='<key>' if removing else '<key=value>',
            action='append', default=[], dest=name,
            help='%s %s item; may be repeated.'
                 % ('Remove a' if removing else 'Set a',
                    name.replace('_', ' ')))


class CreateNode(base.BaremetalMixin, show.ShowOne):
    """Register a new node."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _add_string_options(parser)
        parser.add_argument('--uuid', metavar='<uuid>',
                            help='UUID of the node.')
        parser.add_argument(
            '--automated-clean', action='store_true', default=None,
            help='Clean the node automatically on provide and undeploy.')
        _add_dict_options(parser)
        return parser

    def take_action(self, parsed_args):
        if not parsed_args.driver:
            raise common.CommandError('--driver is required')
        body = {}
        for name in STRING_FIELDS + ('uuid', 'automated_clean'):
            value = getattr(parsed_args, name)
            if value is not None:
                body[name] = value
        body.update(_versioned_values(self, parsed_args))
        for name, flag in DICT_FIELDS.items():
            items = getattr(parsed_args, name)
            if items:
                body[name] = common.parse_deserialized(items, flag)
        return shape(self.client().post(BASE_URL, body))


class ListNode(base.BaremetalMixin, lister.Lister):
    """List nodes."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        base.add_list_options(parser, 'node')
        maint = parser.add_mutually_exclusive_group()
        maint.add_argument('--maintenance', dest='maintenance',
                           action='store_true', default=None,
                           help='Only nodes in maintenance mode.')
        maint.add_argument('--no-maintenance', dest='maintenance',
                           action='store_false',
                           help='Only nodes not in maintenance mode.')
        assoc = parser.add_mutually_exclusive_group()
        assoc.add_argument('--associated', dest='associated',
                           action='store_true', default=None,
                           help='Only nodes with an instance.')
        assoc.add_argument('--unassociated', dest='associated',
                           action='store_false',
                           help='Only nodes without an instance.')
        for name in ('provision_state', 'resource_class', 'driver',
                     'conductor_group', 'owner', 'lessee', 'fault'):
            parser.add_argument('--' + name.replace('_', '-'),
                                metavar='<%s>' % name,
                                # Provision states are lower case; accept
                                # them in any case.
                                type=(str.lower if name == 'provision_state'
                                      else None),
                                help='Only nodes with this %s.'
                                     % name.replace('_', ' '))
        sharded = parser.add_mutually_exclusive_group()
        sharded.add_argument('--sharded', dest='sharded',
                             action='store_true', default=None,
                             help='Only nodes with a shard (API 1.82).')
        sharded.add_argument('--unsharded', dest='sharded',
                             action='store_false',
                             help='Only nodes without a shard (API 1.82).')
        parser.add_argument('--shards', metavar='<shard>', nargs='+',
                            help='Only nodes in these shards (API 1.82).')
        children = parser.add_mutually_exclusive_group()
        children.add_argument('--include-children', action='store_true',
                              default=None,
                              help='List child nodes too (API 1.83).')
        children.add_argument('--parent-node', metavar='<node>',
                              help='Only the child nodes of this node '
                                   '(API 1.83).')
        detail = parser.add_mutually_exclusive_group()
        detail.add_argument('--long', action='store_true',
                            help='Show every field.')
        common.add_fields_argument(detail, FIELDS)
        return parser

    def _versioned_params(self, parsed_args):
        params = {}
        if parsed_args.sharded is not None:
            self.require_version('1.82', '--sharded/--unsharded')
            params['sharded'] = str(parsed_args.sharded).lower()
        if parsed_args.shards:
            self.require_version('1.82', '--shards')
            params['shard'] = ','.join(parsed_args.shards)
        if parsed_args.include_children:
            self.require_version('1.83', '--include-children')
            params['include_children'] = 'true'
        if parsed_args.parent_node:
            self.require_version('1.83', '--parent-node')
            params['parent_node'] = parsed_args.parent_node
        return params

    def take_action(self, parsed_args):
        api = self.client()
        params = base.list_params(parsed_args)
        params.update(self._versioned_params(parsed_args))
        for name in ('maintenance', 'associated'):
            value = getattr(parsed_args, name)
            if value is not None:
                params[name] = str(value).lower()
        for name in ('provision_state', 'resource_class', 'driver',
                     'conductor_group', 'owner', 'lessee', 'fault'):
            value = getattr(parsed_args, name)
            if value:
                params[name] = value
        fields = common.split_fields(parsed_args.fields)
        url = BASE_URL
        if fields:
            params['fields'] = ','.join(fields)
            columns = tuple(fields)
        elif parsed_args.long:
            url = BASE_URL + '/detail'
            columns = FIELDS
        else:
            columns = SHORT_FIELDS
        nodes = base.list_all(api, url, 'nodes', params)
        return columns, [common.get_properties(n, columns) for n in nodes]


class ShowNode(base.BaremetalMixin, show.ShowOne):
    """Show a node."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('node', metavar='<node>',
                            help='Name or UUID of the node.')
        common.add_fields_argument(parser, FIELDS)
        return parser

    def take_action(self, parsed_args):
        params = {}
        fields = common.split_fields(parsed_args.fields)
        if fields:
            params['fields'] = ','.join(fields)
        node = self.client().get(BASE_URL + '/' + parsed_args.node,
                                 params=params)
        return shape(node, fields)


class SetNode(base.BaremetalMixin, show.ShowOne):
    """Update node fields (a JSON patch of ``add`` operations)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('node', metavar='<node>',
                            help='Name or UUID of the node.')
        _add_string_options(parser)
        parser.add_argument('--instance-uuid', metavar='<uuid>',
                            help='Reserve the node for this instance.')
        auto = parser.add_mutually_exclusive_group()
        auto.add_argument('--automated-clean', dest='automated_clean',
                          action='store_true', default=None,
                          help='Enable automated cleaning.')
        auto.add_argument('--no-automated-clean', dest='automated_clean',
                          action='store_false',
                          help='Disable automated cleaning.')
        parser.add_argument('--protected', action='store_true',
                            default=None,
                            help='Protect the node from undeploy and '
                                 'rebuild.')
        parser.add_argument('--protected-reason', metavar='<reason>',
                            help='Why the node is protected.')
        _add_dict_options(parser)
        return parser

    def take_action(self, parsed_args):
        ops = []
        for name in STRING_FIELDS + ('instance_uuid', 'automated_clean',
                                     'protected', 'protected_reason'):
            value = getattr(parsed_args, name)
            if value is not None:
                ops.append({'op': 'add', 'path': '/' + name,
                            'value': value})
        for name, value in _versioned_values(self, parsed_args).items():
            ops.append({'op': 'add', 'path': '/' + name, 'value': value})
        for name in DICT_FIELDS:
            ops += common.patch_ops('add', ['%s/%s' % (name, item)
                                            for item in getattr(parsed_args,
                                                                name)])
        if not ops:
            raise common.CommandError('Nothing to set')
        return shape(self.client().patch(
            BASE_URL + '/' + parsed_args.node, ops))


class UnsetNode(base.BaremetalMixin, show.ShowOne):
    """Unset node fields (a JSON patch of ``remove`` operations).

    Unsetting --instance-uuid of a node reserved by an allocation deletes
    the allocation.
    """

    UNSETTABLE = ('name', 'description', 'resource_class',
                  'conductor_group', 'owner', 'lessee', 'instance_uuid',
                  'power_interface', 'deploy_interface',
                  'management_interface', 'boot_interface',
                  'bios_interface', 'protected', 'protected_reason',
                  'shard', 'parent_node')

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('node', metavar='<node>',
                            help='Name or UUID of the node.')
        for name in self.UNSETTABLE:
            parser.add_argument('--' + name.replace('_', '-'),
                                action='store_true',
                                help='Unset the %s.'
                                     % name.replace('_', ' '))
        _add_dict_options(parser, removing=True)
        return parser

    def take_action(self, parsed_args):
        ops = [{'op': 'remove', 'path': '/' + name}
               for name in self.UNSETTABLE if getattr(parsed_args, name)]
        for name, version in VERSIONED_FIELDS.items():
            if getattr(parsed_args, name):
                self.require_version(version,
                                     '--' + name.replace('_', '-'))
        for name in DICT_FIELDS:
            ops += common.patch_ops('remove', ['%s/%s' % (name, key)
                                               for key in getattr(
                                                   parsed_args, name)])
        if not ops:
            raise common.CommandError('Nothing to unset')
        return shape(self.client().patch(
            BASE_URL + '/' + parsed_args.node, ops))


class DeleteNode(base.BaremetalMixin, command.Command):
    """Delete nodes."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('nodes', metavar='<node>', nargs='+',
                            help='Names or UUIDs of the nodes.')
        return parser

    def take_action(self, parsed_args):
        base.delete_each(self.client(), BASE_URL, parsed_args.nodes,
                         'nodes')


class ListNodeChildren(base.BaremetalMixin, lister.Lister):
    """List the child nodes of a node."""

    min_version = '1.83'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('node', metavar='<node>',
                            help='Name or UUID of the parent node.')
        return parser

    def take_action(self, parsed_args):
        children = self.client().get(
            BASE_URL + '/' + parsed_args.node + '/children')['children']
        return ('child_nodes',), [(uuid,) for uuid in children]


class SaveNodeInventory(base.BaremetalMixin, command.Command):
    """Write the hardware inventory of a node (JSON) to stdout or a file.

    Inventories are recorded by in-band inspection; a node without one is
    an error (404).
    """

    min_version = '1.81'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('node', metavar='<node>',
                            help='Name or UUID of the node.')
        parser.add_argument('--file', metavar='<filename>',
                            help='Write the inventory to this file '
                                 '(default: stdout).')
        return parser

    def take_action(self, parsed_args):
        inventory = self.client().get(
            BASE_URL + '/' + parsed_args.node + '/inventory')
        if parsed_args.file:
            with open(parsed_args.file, 'w', encoding='utf-8') as stream:
                json.dump(inventory, stream)
        else:
            json.dump(inventory, self.app.stdout)
