"""Node actions: provisioning verbs, power, maintenance and history.

``alloc baremetal node manage|provide|deploy|undeploy|clean|service|abort``,
``... node unhold``, ``... node power on|off``, ``... node reboot``,
``... node maintenance set|unset`` and ``... node history list|get``.

The API answers 202 once a conductor has started the work; with
``--wait [timeout]`` the provisioning and power commands poll the node
until it settles, as ``openstack baremetal node deploy --wait`` does.
"""

import json

from cliff import command
from cliff import lister
from cliff import show

from alloc_framework.cli.baremetal import base
from alloc_framework.cli import common
from alloc_framework.common import states

NODE_URL = '/nodes/{node}'
PROVISION_URL = NODE_URL + '/states/provision'
POWER_URL = NODE_URL + '/states/power'
MAINTENANCE_URL = NODE_URL + '/maintenance'
HISTORY_URL = NODE_URL + '/history'

# The provision state each verb settles in (what --wait waits for);
# abort settles in whatever state is not transient.
EXPECTED_STATE = {
    'manage': 'manageable',
    'provide': 'available',
    'active': 'active',
    'deleted': 'available',
    'clean': 'manageable',
    'service': 'active',
    'abort': None,
    'unhold': None,
}
# The power state each power target ends in.
EXPECTED_POWER = {
    'power on': 'power on',
    'power off': 'power off',
    'rebooting': 'power on',
}
# Polling period of --wait, in seconds.
WAIT_INTERVAL = 0.5


class _WaitMixin:
    """``--wait``: poll the node until ``settled()`` or ``failed()``."""

    def done(self, node):
        # The conductor saves the last state, then releases the lock:
        # waiting for the release lets a chained command find the node
        # free.
        return self.settled(node) and not node.get('reservation')

    def wait(self, api, parsed_args, what):
        if parsed_args.wait_timeout is None:
            return
        progress = base.Progress(self.app, parsed_args)
        base.wait_for(
            lambda: api.get(NODE_URL.format(node=parsed_args.node)),
            self.done, self.failed,
            'node %s to %s' % (parsed_args.node, what),
            parsed_args.wait_timeout, interval=WAIT_INTERVAL,
            progress=progress,
            describe=lambda node, elapsed: self.describe(
                api, parsed_args, node, elapsed))

    def describe(self, api, parsed_args, node, elapsed):
        """The progress line of ``--wait`` (on a terminal only)."""
        states_text = '%s -> %s' % (
            node.get('provision_state'),
            node.get('target_provision_state') or '?')
        if node.get('target_power_state'):
            states_text = 'power %s -> %s' % (node.get('power_state'),
                                              node['target_power_state'])
        return 'Node %s: %s, %s elapsed' % (
            parsed_args.node, states_text, base.elapsed_text(elapsed))


def _node_parser(parser):
    parser.add_argument('node', metavar='<node>',
                        help='Name or UUID of the node.')
    return parser


class _ProvisionCommand(_WaitMixin, base.BaremetalMixin, command.Command):
    """Base of the provisioning verbs; ``verb`` is the API target."""

    verb = None

    def get_parser(self, prog_name):
        parser = _node_parser(super().get_parser(prog_name))
        base.add_wait_option(parser, 'the node reaches its next stable '
                                     'state')
        return parser

    def body(self, parsed_args):
        return {'target': self.verb}

    def take_action(self, parsed_args):
        api = self.client()
        api.put(PROVISION_URL.format(node=parsed_args.node),
                self.body(parsed_args))
        self.wait(api, parsed_args, self.verb)

    def settled(self, node):
        """The node is in the state the verb leads to."""
        expected = EXPECTED_STATE[self.verb]
        if expected is None:
            return node['provision_state'] not in states.TRANSIENT_STATES
        return (node['provision_state'] == expected
                and not node.get('target_provision_state'))

    def failed(self, node):
        """Why the verb failed, or None while it may still succeed.

        The server saves a request's first move before it answers, so a
        stable state other than the expected one is an outcome, not a
        state the request has yet to leave.
        """
        state = node['provision_state'] or ''
        if self.settled(node):
            return None
        if (state.endswith(' failed') or state == 'error'
                or (state not in states.TRANSIENT_STATES
                    and not node.get('target_provision_state'))):
            return 'provision state %s: %s' % (
                state, node.get('last_error') or 'no error recorded')
        return None


class ManageNode(_ProvisionCommand):
    """Move a node to the manageable state."""

    verb = 'manage'


class ProvideNode(_ProvisionCommand):
    """Make a node available for deployment (cleaning it if enabled)."""

    verb = 'provide'


class DeployNode(_ProvisionCommand):
    """Deploy a node (provision state target ``active``)."""

    verb = 'active'


class UndeployNode(_ProvisionCommand):
    """Tear a deployed node down (provision state target ``deleted``)."""

    verb = 'deleted'


class AbortNode(_ProvisionCommand):
    """Abort the current operation (cleaning, waiting) of a node."""

    verb = 'abort'
    min_version = '1.13'


class UnholdNode(_ProvisionCommand):
    """Let a node in a hold state (clean, deploy or service hold) go on."""

    verb = 'unhold'
    min_version = '1.85'


class CleanNode(_ProvisionCommand):
    """Run manual clean steps on a manageable node.

    ``--clean-steps`` is a JSON list such as
    ``'[{"interface": "deploy", "step": "erase_devices"}]'``, or ``-`` to
    read it from standard input, or the path of a file holding it.
    """

    verb = 'clean'
    min_version = '1.15'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--clean-steps', metavar='<steps>',
                            required=True,
                            help='JSON list of clean steps, a file, or -.')
        return parser

    def body(self, parsed_args):
        return {'target': 'clean', 'clean_steps': load_steps(
            self.app.stdin, '--clean-steps', parsed_args.clean_steps)}


class ServiceNode(_ProvisionCommand):
    """Run service steps on an active node; it returns to active.

    ``--service-steps`` is a JSON list such as ``'[{"interface":
    "firmware", "step": "update", "args": {"settings": [{"component":
    "bmc", "url": "http://..."}]}}]'``, or ``-`` to read it from standard
    input, or the path of a file holding it.
    """

    verb = 'service'
    min_version = '1.87'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--service-steps', metavar='<steps>',
                            required=True,
                            help='JSON list of service steps, a file, or -.')
        return parser

    def body(self, parsed_args):
        return {'target': 'service', 'service_steps': load_steps(
            self.app.stdin, '--service-steps', parsed_args.service_steps)}


def load_steps(stdin, option, text):
    """A JSON list of steps from ``text``, a file it names, or stdin (-).
    """
    if text == '-':
        text = stdin.read()
    else:
        try:
            with open(text) as f:
                text = f.read()
        except OSError:
            pass
    try:
        return json.loads(text)
    except ValueError as exc:
        raise common.CommandError('%s is not valid JSON: %s'
                                  % (option, exc))


class _PowerCommand(_WaitMixin, base.BaremetalMixin, command.Command):
    """Base of the power commands; ``target`` is the API target."""

    target = None

    def get_parser(self, prog_name):
        parser = _node_parser(super().get_parser(prog_name))
        base.add_wait_option(parser, 'the power change is done')
        return parser

    def take_action(self, parsed_args):
        api = self.client()
        api.put(POWER_URL.format(node=parsed_args.node),
                {'target': self.target})
        self.wait(api, parsed_args, self.target)

    def settled(self, node):
        # The conductor clears last_error when the change starts and sets
        # it when the change fails.
        return (not node.get('target_power_state')
                and not node.get('last_error')
                and node['power_state'] == EXPECTED_POWER[self.target])

    def failed(self, node):
        if node.get('target_power_state') or self.settled(node):
            return None
        return 'power state %s: %s' % (
            node['power_state'], node.get('last_error') or 'no error recorded')


class PowerOnNode(_PowerCommand):
    """Power a node on."""

    target = 'power on'


class PowerOffNode(_PowerCommand):
    """Power a node off."""

    target = 'power off'


class RebootNode(_PowerCommand):
    """Reboot a node."""

    target = 'rebooting'


class MaintenanceSetNode(base.BaremetalMixin, command.Command):
    """Put a node in maintenance mode."""

    def get_parser(self, prog_name):
        parser = _node_parser(super().get_parser(prog_name))
        parser.add_argument('--reason', metavar='<reason>',
                            help='Why the node is in maintenance.')
        return parser

    def take_action(self, parsed_args):
        body = {}
        if parsed_args.reason:
            body['reason'] = parsed_args.reason
        self.client().put(MAINTENANCE_URL.format(node=parsed_args.node),
                          body)


class MaintenanceUnsetNode(base.BaremetalMixin, command.Command):
    """Take a node out of maintenance mode."""

    def get_parser(self, prog_name):
        return _node_parser(super().get_parser(prog_name))

    def take_action(self, parsed_args):
        self.client().delete(MAINTENANCE_URL.format(node=parsed_args.node))


class ListNodeHistory(base.BaremetalMixin, lister.Lister):
    """List the history events of a node."""

    min_version = '1.78'
    SHORT = ('uuid', 'created_at', 'severity', 'event')
    # project from API 1.113; state, target_provision_state and
    # duration_seconds from 1.115: shown when the server returns them.
    LONG = ('uuid', 'created_at', 'severity', 'event_type', 'event',
            'conductor', 'user', 'project', 'state',
            'target_provision_state', 'duration_seconds')
    ALWAYS = LONG[:7]

    def get_parser(self, prog_name):
        parser = _node_parser(super().get_parser(prog_name))
        parser.add_argument('--long', action='store_true',
                            help='Show every field.')
        return parser

    def take_action(self, parsed_args):
        params = {'detail': 'true'} if parsed_args.long else {}
        events = self.client().get(HISTORY_URL.format(node=parsed_args.node),
                                   params=params)['history']
        if parsed_args.long:
            returned = set().union(*events) if events else set()
            columns = tuple(c for c in self.LONG
                            if c in self.ALWAYS or c in returned)
        else:
            columns = self.SHORT
        return columns, [common.get_properties(e, columns) for e in events]


class GetNodeHistory(base.BaremetalMixin, show.ShowOne):
    """Show one history event of a node."""

    min_version = '1.78'

    def get_parser(self, prog_name):
        parser = _node_parser(super().get_parser(prog_name))
        parser.add_argument('event', metavar='<event>',
                            help='UUID of the history event.')
        return parser

    def take_action(self, parsed_args):
        event = self.client().get(
            HISTORY_URL.format(node=parsed_args.node) + '/'
            + parsed_args.event)
        columns = common.present_fields(ListNodeHistory.LONG, event)
        return columns, common.get_properties(event, columns)
