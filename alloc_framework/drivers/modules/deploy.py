"""Deploy interfaces for real hardware: ``ramdisk`` and ``external``.

Neither writes an image to the node's disks; each says what it does:

* ``ramdisk`` (upstream ironic's name and behaviour): the instance is an
  image the node boots as it is, over what the node's boot interface
  provides (``redfish-virtual-media``: ``instance_info['boot_iso']`` from
  a virtual CD). Deploying powers the node off, has the boot interface
  prepare the instance, powers it on; the node is ``active`` once it
  runs. Tearing down powers it off and has the boot interface clean up
  (eject the media).
* ``external``: the operating system comes from a system outside this
  service (a PXE or provisioning server the operator runs). Deploying
  sets the node's next boot device (``instance_info['boot_device']``,
  ``pxe`` by default) and powers it on; what it then boots is that
  system's business, and the node is ``active`` once it is powered on.
  Tearing down powers it off.

Power changes go through the node's power interface, whose
``set_power_state`` returns once the BMC reports the new state, bounded
by ``[conductor]power_state_change_timeout`` and cut short when the
conductor stops (:mod:`alloc_framework.drivers.power_wait`): no step
waits unboundedly, and none sleeps.
"""

from oslo_log import log

from alloc_framework.common import exception
from alloc_framework.common import states
from alloc_framework.drivers import base
from alloc_framework.drivers.modules import noop

LOG = log.getLogger(__name__)


def set_power(task, target):
    """Bring the node to ``target`` (bounded) and record it on the node.

    Nothing is asked of the BMC when it already reports ``target``.

    :raises: PowerStateFailure and the power interface's errors.
    """
    power = task.driver.power
    if power.get_power_state(task) != target:
        power.set_power_state(task, target)
        LOG.info('Node %(node)s: %(state)s', {'node': task.node.uuid,
                                              'state': target})
    task.node.power_state = target


def run_stages(*stages):
    """Run ``(stage, work)`` pairs in order; the first failure stops them.

    :raises: InstanceDeployFailure naming the stage that failed (one the
        work raised itself passes as it is).
    """
    for stage, work in stages:
        try:
            work()
        except exception.InstanceDeployFailure:
            raise
        except Exception as exc:
            raise exception.InstanceDeployFailure(
                reason='%s failed: %s' % (stage, exc))


class RamdiskDeploy(base.DeployInterface):
    """Boots the instance image over the node's boot interface."""

    def get_properties(self):
        return {}

    def validate(self, task):
        """The node's boot interface must be one that boots an instance.

        :raises: InvalidParameterValue for the no-op boot interface.
        """
        if isinstance(task.driver.boot, noop.NoBoot):
            raise exception.InvalidParameterValue(
                err='The ramdisk deploy interface of node %s boots the '
                    'instance over the node\'s boot interface, and its '
                    'boot_interface is no-boot: set one that boots an '
                    'instance (redfish-virtual-media).' % task.node.uuid)

    def deploy(self, task):
        """Power off, prepare the instance's boot, power on: done.

        :raises: InstanceDeployFailure naming the stage that failed.
        """
        run_stages(
            ('powering the node off',
             lambda: set_power(task, states.POWER_OFF)),
            ('preparing the instance\'s boot',
             lambda: task.driver.boot.prepare_instance(task)),
            ('powering the node on',
             lambda: set_power(task, states.POWER_ON)))
        return None

    def tear_down(self, task):
        """Power off, then have the boot interface clean up.

        :raises: InstanceDeployFailure naming the stage that failed.
        """
        run_stages(
            ('powering the node off',
             lambda: set_power(task, states.POWER_OFF)),
            ('cleaning up the instance\'s boot',
             lambda: task.driver.boot.clean_up_instance(task)))
        return None


BOOT_DEVICE = 'boot_device'
DEFAULT_BOOT_DEVICE = 'pxe'
# What an external provisioning system may boot the node from; a
# management interface may support fewer (the BMC says so at deploy).
EXTERNAL_BOOT_DEVICES = ('pxe', 'disk', 'cdrom')


class ExternalDeploy(base.DeployInterface):
    """Sets the boot device and powers on; the OS comes from elsewhere."""

    def get_properties(self):
        return {}

    def _device(self, task):
        device = (task.node.instance_info or {}).get(BOOT_DEVICE)
        if device is None or device == '':
            return DEFAULT_BOOT_DEVICE
        if device not in EXTERNAL_BOOT_DEVICES:
            raise exception.InvalidParameterValue(
                err='instance_info.boot_device of node %s must be one of '
                    '%s, not %r.' % (task.node.uuid,
                                     ', '.join(EXTERNAL_BOOT_DEVICES),
                                     device))
        return device

    def validate(self, task):
        """``instance_info.boot_device``, if set, is a device name.

        :raises: InvalidParameterValue naming the field.
        """
        self._device(task)

    def deploy(self, task):
        """Set the boot device (once), then power the node on.

        A node already powered on is power cycled, so that it boots the
        device set now.

        :raises: InstanceDeployFailure naming the stage that failed.
        """
        device = self._device(task)
        run_stages(
            ('powering the node off',
             lambda: set_power(task, states.POWER_OFF)),
            ('setting the boot device to %s' % device,
             lambda: task.driver.management.set_boot_device(
                 task, device, persistent=False)),
            ('powering the node on',
             lambda: set_power(task, states.POWER_ON)))
        return None

    def tear_down(self, task):
        """Power the node off.

        :raises: InstanceDeployFailure
        """
        run_stages(('powering the node off',
                    lambda: set_power(task, states.POWER_OFF)))
        return None
