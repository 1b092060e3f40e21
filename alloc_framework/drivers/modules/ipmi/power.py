"""The ``ipmi`` power interface: chassis control and chassis status.

A power change is one conversation: the chassis control command, then
the power state read back (at most ``[ipmi]power_state_reads`` times,
one read right after the other) until the BMC reports the requested
state. No sleep: a BMC that needs more time than that fails the change,
and the next power sync reads the real state.
"""

from alloc_framework.common import exception
from alloc_framework.common import states
from alloc_framework.drivers import base
from alloc_framework.drivers.modules.ipmi import common

# IPMI chassis commands (netfn chassis).
NETFN_CHASSIS = 0x00
GET_CHASSIS_STATUS = 0x01
CHASSIS_CONTROL = 0x02
# Chassis control directives.
POWER_DOWN = 0x00
POWER_UP = 0x01


def read_power(bmc, client):
    """The power state the BMC reports, in one round trip."""
    data = common.check(bmc, client.raw_command(
        netfn=NETFN_CHASSIS, command=GET_CHASSIS_STATUS),
        'Get Chassis Status')
    if not data:
        raise exception.IPMIFailure(
            bmc=bmc, error='Get Chassis Status answered no data')
    return states.POWER_ON if data[0] & 0x01 else states.POWER_OFF


def _change(conf, bmc, client, target):
    directive = POWER_UP if target == states.POWER_ON else POWER_DOWN
    common.check(bmc, client.raw_command(
        netfn=NETFN_CHASSIS, command=CHASSIS_CONTROL, data=[directive]),
        'Chassis Control (%s)' % target)
    seen = None
    for _ in range(conf.ipmi.power_state_reads):
        seen = read_power(bmc, client)
        if seen == target:
            return seen
    raise exception.PowerStateFailure(
        message='Failed to set node power state to %s: the BMC %s accepted '
                'the command but still reports "%s" after %d reads.'
                % (target, bmc, seen, conf.ipmi.power_state_reads))


class IPMIPower(base.PowerInterface):
    """Power through the BMC's chassis commands."""

    def get_properties(self):
        return dict(common.PROPERTIES)

    def validate(self, task):
        common.parse_driver_info(task.node)

    def get_power_state(self, task):
        bmc = common.parse_driver_info(task.node)
        return common.converse(self.conf, bmc,
                               lambda client: read_power(bmc, client),
                               'reading the power state')

    def set_power_state(self, task, power_state, timeout=None):
        if power_state not in states.POWER_STATES:
            raise exception.InvalidParameterValue(
                err='Unsupported power state %s; supported: %s'
                    % (power_state, ', '.join(states.POWER_STATES)))
        bmc = common.parse_driver_info(task.node)
        common.converse(
            self.conf, bmc,
            lambda client: _change(self.conf, bmc, client, power_state),
            'setting the power state to %s' % power_state)

    def reboot(self, task, timeout=None):
        """Power off (unless off already), then on, in one conversation."""
        bmc = common.parse_driver_info(task.node)

        def work(client):
            if read_power(bmc, client) != states.POWER_OFF:
                _change(self.conf, bmc, client, states.POWER_OFF)
            return _change(self.conf, bmc, client, states.POWER_ON)

        # Not retried: a repeated half-done reboot could cut the power of
        # a node that came up in between.
        common.converse(self.conf, bmc, work, 'rebooting', retry=False)
