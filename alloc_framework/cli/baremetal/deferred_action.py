"""``alloc baremetal action list|show``: the conductors' deferred actions.

A read-only view for operators (admin policy on the server).
"""

from cliff import lister
from cliff import show

from alloc_framework.cli.baremetal import base
from alloc_framework.cli import common

BASE_URL = '/deferred_actions'
FIELDS = ('uuid', 'node_uuid', 'state', 'call', 'arguments', 'result',
          'start_after', 'retry_remaining', 'reschedule_count', 'deadline',
          'conductor', 'created_by', 'request_id', 'user_id',
          'parent_action', 'created_at', 'updated_at')
SHORT_FIELDS = ('uuid', 'node_uuid', 'state', 'call', 'start_after',
                'retry_remaining')
STATES = ('CREATED', 'RUNNING', 'RESCHEDULE', 'PENDING_RETRY', 'FAILED',
          'COMPLETED')


class ListAction(base.BaremetalMixin, lister.Lister):
    """List deferred actions (not yet cleaned up), oldest first."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            '--limit', metavar='<limit>', type=int,
            help='Maximum number of actions to return (default: all, '
                 'following the server pages).')
        parser.add_argument('--marker', metavar='<uuid>',
                            help='UUID of the action after which to start.')
        parser.add_argument('--node', metavar='<node>',
                            help='Only actions of this node (name or UUID).')
        # Case-insensitive, as the other state filters: argparse checks
        # the choice after ``type``.
        parser.add_argument('--state', metavar='<state>', choices=STATES,
                            type=str.upper,
                            help='Only actions in this state (%s).'
                                 % ', '.join(STATES))
        parser.add_argument('--long', action='store_true',
                            help='Show every field.')
        return parser

    def take_action(self, parsed_args):
        params = {}
        for name in ('limit', 'marker', 'node', 'state'):
            value = getattr(parsed_args, name)
            if value:
                params[name] = value
        columns = SHORT_FIELDS
        if parsed_args.long:
            params['detail'] = 'true'
            columns = FIELDS
        items = base.list_all(self.client(), BASE_URL, 'deferred_actions',
                              params)
        return columns, [common.get_properties(a, columns) for a in items]


class ShowAction(base.BaremetalMixin, show.ShowOne):
    """Show a deferred action."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('action', metavar='<action>',
                            help='UUID of the action.')
        return parser

    def take_action(self, parsed_args):
        action = self.client().get(BASE_URL + '/' + parsed_args.action)
        return FIELDS, common.get_properties(action, FIELDS)
