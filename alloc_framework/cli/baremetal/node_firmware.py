"""Node firmware: ``alloc baremetal node firmware list|update``.

``list`` shows the firmware components the conductor read from the node
(API 1.86). ``update`` installs firmware images with the firmware
interface's ``update`` step: by servicing an ``active`` node (API 1.87)
or by manual cleaning of a ``manageable`` one, and says which it chose.
The update runs as a deferred action: the node waits in ``service wait``
(or ``clean wait``) until it ends; ``--wait`` polls until the node is
back in its stable state.
"""

from cliff import lister

from alloc_framework.cli.baremetal import base
from alloc_framework.cli.baremetal import node_state
from alloc_framework.cli import common

FIRMWARE_URL = node_state.NODE_URL + '/firmware'
# The provisioning verb that runs the update step, by provision state.
VERB_BY_STATE = {'active': 'service', 'manageable': 'clean'}


class ListNodeFirmware(base.BaremetalMixin, lister.Lister):
    """List the firmware components of a node and their versions."""

    min_version = '1.86'
    COLUMNS = ('component', 'initial_version', 'current_version',
               'last_version_flashed', 'created_at', 'updated_at')
    # From API 1.114: what the hardware says the component is.
    IDENTITY = ('vendor', 'model', 'serial_number')

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('node', metavar='<node>',
                            help='Name or UUID of the node.')
        parser.add_argument('--long', action='store_true',
                            help='Also show the vendor, model and serial '
                                 'number of each component (API 1.114).')
        return parser

    def take_action(self, parsed_args):
        if parsed_args.long:
            self.require_version('1.114', '--long')
        components = self.client().get(
            FIRMWARE_URL.format(node=parsed_args.node))['firmware']
        columns = self.COLUMNS
        if parsed_args.long:
            columns = self.COLUMNS[:4] + self.IDENTITY + self.COLUMNS[4:]
        return columns, [common.get_properties(c, columns)
                         for c in components]


def _component(value):
    name, sep, url = value.partition('=')
    if not sep or not name or not url:
        raise common.CommandError(
            '--component takes <component>=<url>, not %r.' % value)
    return {'component': name, 'url': url}


class UpdateNodeFirmware(node_state._ProvisionCommand):
    """Update firmware components of an active or manageable node.

    An active node is serviced (``service`` with the ``firmware.update``
    service step), a manageable one cleaned (``clean`` with the
    ``firmware.update`` clean step); the command says which.
    """

    min_version = '1.87'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            '--component', metavar='<component>=<url>', action='append',
            required=True, dest='components',
            help='A component (bmc, bios...) and the URL of its image. '
                 'Repeat for several components.')
        return parser

    def describe(self, api, parsed_args, node, elapsed):
        """The node's state, then the deferred action running the update:
        the component it is at, its state, retries and reschedules."""
        line = super().describe(api, parsed_args, node, elapsed)
        action = _update_action(api, node)
        if action is None:
            return line
        arguments = action.get('arguments') or {}
        settings = arguments.get('settings') or []
        index = (arguments.get('state') or {}).get('index')
        if isinstance(index, int) and 0 <= index < len(settings):
            component = settings[index].get('component')
        else:
            component = ', '.join(str(s.get('component'))
                                  for s in settings if isinstance(s, dict))
        return '%s; firmware %s: action %s, %s retries left, rescheduled ' \
            '%s times' % (line, component, action.get('state'),
                          action.get('retry_remaining'),
                          action.get('reschedule_count'))

    def take_action(self, parsed_args):
        settings = [_component(v) for v in parsed_args.components]
        api = self.client()
        node = api.get(node_state.NODE_URL.format(node=parsed_args.node))
        state = node['provision_state']
        self.verb = VERB_BY_STATE.get(state)
        if self.verb is None:
            raise common.CommandError(
                'Node %s is %s: firmware is updated on an active node (by '
                'servicing it) or on a manageable one (by cleaning it).'
                % (parsed_args.node, state))
        step = {'interface': 'firmware', 'step': 'update',
                'args': {'settings': settings}}
        self.app.stdout.write(
            'Node %s is %s: updating %s by %s it.\n'
            % (parsed_args.node, state,
               ', '.join(s['component'] for s in settings),
               'servicing' if self.verb == 'service' else 'cleaning'))
        api.put(node_state.PROVISION_URL.format(node=parsed_args.node),
                {'target': self.verb, '%s_steps' % self.verb: [step]})
        self.wait(api, parsed_args, 'update its firmware')


def _update_action(api, node):
    """The newest deferred action of ``node`` running a firmware update,
    or None (none yet, or the user may not list actions)."""
    try:
        actions = api.get('/deferred_actions', params={
            'node': node['uuid'], 'detail': 'true'})['deferred_actions']
    except common.HttpError:
        return None
    updates = [a for a in actions
               if (a.get('call') or '').endswith('firmware.update')]
    return updates[-1] if updates else None
