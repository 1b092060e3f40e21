"""``alloc baremetal node create|list|show|set|unset|delete``."""

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
    'created_at', 'updated_at')

# Simple string fields: option name -> API field.
STRING_FIELDS = ('name', 'description', 'driver', 'resource_class',
                 'conductor_group', 'owner', 'lessee', 'power_interface',
                 'deploy_interface', 'management_interface',
                 'boot_interface', 'bios_interface')
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
        for name, flag in DICT_FIELDS.items():
            items = getattr(parsed_args, name)
            if items:
                body[name] = common.parse_key_value(items, flag)
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
                                help='Only nodes with this %s.'
                                     % name.replace('_', ' '))
        detail = parser.add_mutually_exclusive_group()
        detail.add_argument('--long', action='store_true',
                            help='Show every field.')
        common.add_fields_argument(detail, FIELDS)
        return parser

    def take_action(self, parsed_args):
        api = self.client()
        params = base.list_params(parsed_args)
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
                  'bios_interface', 'protected', 'protected_reason')

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
        api = self.client()
        failures = []
        for ident in parsed_args.nodes:
            try:
                api.delete(BASE_URL + '/' + ident)
            except common.HttpError as exc:
                failures.append('%s: %s' % (ident, exc))
        if failures:
            raise common.CommandError(
                'Failed to delete %d of %d nodes:\n%s'
                % (len(failures), len(parsed_args.nodes),
                   '\n'.join(failures)))
