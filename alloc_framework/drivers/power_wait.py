"""Waiting for a power change to show in the state a BMC reports.

BMCs accept a power request at once and apply it later, often seconds
later. The PowerInterface contract wants the change done when
``set_power_state`` returns (the conductor's power flow saves the state it
reads right after the call), so power interfaces read the state back
until it is the requested one, with :func:`wait_for_power_state`:

* bounded by the call's ``timeout`` or ``[conductor]
  power_state_change_timeout`` (:func:`change_timeout`);
* between two reads the worker waits on the conductor's stop event
  (``task.stop_event``), never ``time.sleep``: a stopping conductor ends
  the wait at once and the change fails with a clear error instead of
  holding the shutdown.
"""

import threading
import time

from alloc_framework.common import exception


def change_timeout(conf, timeout=None):
    """The seconds a power change may take: ``timeout`` or the option's."""
    return timeout or conf.conductor.power_state_change_timeout


def wait_for_power_state(task, read, target, timeout, interval, bmc_name):
    """Call ``read()`` until it returns ``target``; bounded by ``timeout``.

    :param task: the node's task; its ``stop_event`` (if any) cuts the
        wait short.
    :param read: a function returning ``(state, shown)``: the node's
        power state (``states.POWER_*``) and how the BMC words it, for
        the error message.
    :param target: ``states.POWER_ON`` or ``states.POWER_OFF``.
    :param timeout: seconds the state may take to show.
    :param interval: seconds between two reads.
    :param bmc_name: how the error names the BMC (``its Redfish BMC``).
    :raises: PowerStateFailure when the state does not show in time or
        the conductor stops; what ``read`` raises.
    """
    node = task.node
    stop = getattr(task, 'stop_event', None) or threading.Event()
    deadline = time.monotonic() + timeout
    while True:
        current, shown = read()
        if current == target:
            return
        left = deadline - time.monotonic()
        if left <= 0:
            raise exception.PowerStateFailure(
                'Node %s did not reach "%s" within %ss: %s still reports '
                '%s.' % (node.uuid, target, timeout, bmc_name, shown))
        if stop.wait(min(interval, left)):
            raise exception.PowerStateFailure(
                'Waiting for node %s to reach "%s" was interrupted: the '
                'conductor is stopping.' % (node.uuid, target))
