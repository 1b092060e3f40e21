"""The ``redfish`` power interface.

A power change is requested with a Redfish ``Reset`` action, then the
power state is read back until the BMC reports the requested state
(:func:`alloc_framework.drivers.power_wait.wait_for_power_state`):
bounded by ``timeout`` (the caller's) or ``[conductor]
power_state_change_timeout``, one read every
``[redfish]power_state_poll_interval`` seconds, waiting on the
conductor's stop event in between, never ``time.sleep``.
"""

from oslo_log import log
import sushy

from alloc_framework.common import exception
from alloc_framework.common import states
from alloc_framework.drivers import base
from alloc_framework.drivers.modules.redfish import utils
from alloc_framework.drivers import power_wait

LOG = log.getLogger(__name__)

# What a BMC reports -> what the node shows. A transition counts as its
# start state: the change is not done yet.
POWER_STATE_MAP = {
    sushy.PowerState.ON: states.POWER_ON,
    sushy.PowerState.POWERING_OFF: states.POWER_ON,
    sushy.PowerState.OFF: states.POWER_OFF,
    sushy.PowerState.POWERING_ON: states.POWER_OFF,
}

_RESET_FOR = {
    states.POWER_ON: sushy.ResetType.ON,
    states.POWER_OFF: sushy.ResetType.FORCE_OFF,
}

_FINAL = {states.POWER_ON: sushy.PowerState.ON,
          states.POWER_OFF: sushy.PowerState.OFF}

# The ComputerSystem's Status.Health -> the node's health.
HEALTH_MAP = {
    sushy.Health.OK: states.HEALTH_OK,
    sushy.Health.WARNING: states.HEALTH_WARNING,
    sushy.Health.CRITICAL: states.HEALTH_CRITICAL,
}


def _map(node, value):
    try:
        return POWER_STATE_MAP[value]
    except KeyError:
        raise exception.RedfishError(
            error='The Redfish BMC of node %s reports an unknown power '
                  'state %r.' % (node.uuid, value))


def wait_for_power(task, conn, target, timeout, interval):
    """Read the power state until it is ``target``; bounded by ``timeout``.

    :param conn: an open :class:`utils.Connection`.
    :param interval: seconds between two reads.
    :raises: PowerStateFailure when the state does not show in time or
        the conductor stops.
    """
    def read():
        current = conn.system().power_state
        # A transition (PoweringOn) is not the final state yet.
        done = {v: k for k, v in _FINAL.items()}.get(current)
        return done, getattr(current, 'value', current)

    power_wait.wait_for_power_state(task, read, target, timeout, interval,
                                    'its Redfish BMC')


class RedfishPower(base.PowerInterface):
    """Power through the ComputerSystem ``Reset`` action."""

    def get_properties(self):
        return dict(utils.PROPERTIES)

    def validate(self, task):
        utils.parse_driver_info(task.node, self.conf)

    def _timeout(self, timeout):
        return power_wait.change_timeout(self.conf, timeout)

    def get_power_state(self, task):
        with utils.Connection(task.node, self.conf) as conn:
            return _map(task.node, conn.system().power_state)

    def get_health(self, task):
        """The ComputerSystem's ``Status.Health`` (None when absent)."""
        with utils.Connection(task.node, self.conf) as conn:
            status = conn.system().status
        return HEALTH_MAP.get(getattr(status, 'health', None))

    def set_power_state(self, task, power_state, timeout=None):
        if power_state not in _RESET_FOR:
            raise exception.InvalidParameterValue(
                err='Unsupported power state %s; valid states are %s.'
                    % (power_state, ', '.join(_RESET_FOR)))
        with utils.Connection(task.node, self.conf) as conn:
            system = conn.system()
            if system.power_state == _FINAL[power_state]:
                return
            system.reset_system(_RESET_FOR[power_state])
            LOG.info('Node %(node)s: requested %(reset)s from its Redfish '
                     'BMC', {'node': task.node.uuid,
                             'reset': _RESET_FOR[power_state]})
            wait_for_power(task, conn, power_state, self._timeout(timeout),
                           self.conf.redfish.power_state_poll_interval)

    def reboot(self, task, timeout=None):
        with utils.Connection(task.node, self.conf) as conn:
            system = conn.system()
            if _map(task.node, system.power_state) == states.POWER_ON:
                reset = sushy.ResetType.FORCE_RESTART
            else:
                reset = sushy.ResetType.ON
            system.reset_system(reset)
            LOG.info('Node %(node)s: requested %(reset)s from its Redfish '
                     'BMC', {'node': task.node.uuid, 'reset': reset})
            wait_for_power(task, conn, states.POWER_ON,
                           self._timeout(timeout),
                           self.conf.redfish.power_state_poll_interval)
