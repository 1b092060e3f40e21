"""The ``ipmi`` power interface: chassis control and chassis status.

A power change is the chassis control command in one conversation with
the BMC, then the power state read back, one conversation per read, until
the BMC reports the requested state
(:func:`alloc_framework.drivers.power_wait.wait_for_power_state`). BMCs
apply chassis control after a while, often seconds: the wait is bounded
by the call's ``timeout`` or ``[conductor]power_state_change_timeout``,
reads are ``[ipmi]power_state_poll_interval`` seconds apart, and between
two reads the worker waits on the conductor's stop event, never
``time.sleep``, holding no BMC session.
"""

from alloc_framework.common import exception
from alloc_framework.common import states
from alloc_framework.drivers import base
from alloc_framework.drivers.modules.ipmi import common
from alloc_framework.drivers import power_wait

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


def _control(bmc, client, target):
    directive = POWER_UP if target == states.POWER_ON else POWER_DOWN
    common.check(bmc, client.raw_command(
        netfn=NETFN_CHASSIS, command=CHASSIS_CONTROL, data=[directive]),
        'Chassis Control (%s)' % target)


class IPMIPower(base.PowerInterface):
    """Power through the BMC's chassis commands."""

    def get_properties(self):
        return dict(common.PROPERTIES)

    def validate(self, task):
        common.parse_driver_info(task.node)

    def _read(self, bmc):
        return common.converse(self.conf, bmc,
                               lambda client: read_power(bmc, client),
                               'reading the power state')

    def get_power_state(self, task):
        return self._read(common.parse_driver_info(task.node))

    def _change(self, task, bmc, target, timeout, retry=True):
        """Chassis control, then wait until the BMC reports ``target``."""
        common.converse(
            self.conf, bmc, lambda client: _control(bmc, client, target),
            'setting the power state to %s' % target, retry=retry)

        def read():
            current = self._read(bmc)
            return current, '"%s"' % current

        power_wait.wait_for_power_state(
            task, read, target, power_wait.change_timeout(self.conf, timeout),
            self.conf.ipmi.power_state_poll_interval, 'its BMC %s' % bmc)

    def set_power_state(self, task, power_state, timeout=None):
        if power_state not in states.POWER_STATES:
            raise exception.InvalidParameterValue(
                err='Unsupported power state %s; supported: %s'
                    % (power_state, ', '.join(states.POWER_STATES)))
        bmc = common.parse_driver_info(task.node)
        self._change(task, bmc, power_state, timeout)

    def reboot(self, task, timeout=None):
        """Power off (unless off already) and wait, then on and wait.

        ``timeout`` bounds each of the two waits.
        """
        bmc = common.parse_driver_info(task.node)
        if self._read(bmc) != states.POWER_OFF:
            # The reboot's commands are not retried: one the BMC received
            # without our seeing its answer would run twice.
            self._change(task, bmc, states.POWER_OFF, timeout, retry=False)
        self._change(task, bmc, states.POWER_ON, timeout, retry=False)
