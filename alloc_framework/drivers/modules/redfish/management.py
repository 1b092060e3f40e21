"""The ``redfish`` management interface: boot source override, GPUs.

The next boot device is the ComputerSystem's ``BootSourceOverrideTarget``;
``persistent`` maps to ``BootSourceOverrideEnabled`` ``Continuous`` (else
``Once``). The devices a node supports are those its BMC allows
(``BootSourceOverrideTarget@Redfish.AllowableValues``) that have a name
here.

At verification the node's GPUs are counted (:func:`count_gpus`) and
recorded as ``properties['gpus']``, which gives the node one ``PGPU``
child provider per GPU; the provider sync reads the property and never
asks the BMC.
"""

import sushy
from sushy import exceptions as sushy_exc

from alloc_framework.common import exception
from alloc_framework.drivers import base
from alloc_framework.drivers.modules.redfish import utils

# Our boot device names (as the fake interface's and upstream ironic's)
# -> Redfish boot sources.
BOOT_DEVICE_MAP = {
    'pxe': sushy.BootSource.PXE,
    'disk': sushy.BootSource.HDD,
    'cdrom': sushy.BootSource.CD,
    'bios': sushy.BootSource.BIOS_SETUP,
    'usb': sushy.BootSource.USB,
    'uefi-http': sushy.BootSource.UEFI_HTTP,
}
BOOT_DEVICE_MAP_REV = {v: k for k, v in BOOT_DEVICE_MAP.items()}


def count_gpus(system):
    """The GPUs of a sushy ComputerSystem, or None when it cannot tell.

    A GPU is a member of the system's Processors collection whose
    ``ProcessorType`` is ``GPU``, unless its ``Status.State`` is
    ``Absent`` (an empty slot that some BMCs list). A system without a
    Processors collection gives None: the BMC does not say, which is not
    the same as no GPU.

    :raises: sushy errors of the requests (the collection and each member).
    """
    try:
        processors = system.processors
    except sushy_exc.MissingAttributeError:
        return None
    return sum(1 for processor in processors.get_members()
               if processor.processor_type == sushy.ProcessorType.GPU
               and not (processor.status is not None
                        and processor.status.state == sushy.State.ABSENT))


class RedfishManagement(base.ManagementInterface):
    """Boot devices through the ComputerSystem's boot source override."""

    def get_properties(self):
        return dict(utils.PROPERTIES)

    def validate(self, task):
        utils.parse_driver_info(task.node, self.conf)

    def _supported(self, system):
        allowed = system.get_allowed_system_boot_source_values()
        if not allowed:
            return list(BOOT_DEVICE_MAP)
        return [BOOT_DEVICE_MAP_REV[v] for v in allowed
                if v in BOOT_DEVICE_MAP_REV]

    def get_supported_boot_devices(self, task):
        with utils.Connection(task.node, self.conf) as conn:
            return self._supported(conn.system())

    def set_boot_device(self, task, device, persistent=False):
        with utils.Connection(task.node, self.conf) as conn:
            system = conn.system()
            supported = self._supported(system)
            if device not in supported:
                raise exception.InvalidParameterValue(
                    err='Invalid boot_device %s for node %s; valid devices '
                        'are %s.' % (device, task.node.uuid,
                                     ', '.join(supported)))
            enabled = (sushy.BootSourceOverrideEnabled.CONTINUOUS
                       if persistent else
                       sushy.BootSourceOverrideEnabled.ONCE)
            system.set_system_boot_options(BOOT_DEVICE_MAP[device],
                                           enabled=enabled)

    def get_boot_device(self, task):
        with utils.Connection(task.node, self.conf) as conn:
            boot = conn.system().boot
            if boot.enabled == sushy.BootSourceOverrideEnabled.DISABLED:
                return {'boot_device': None, 'persistent': False}
            return {'boot_device': BOOT_DEVICE_MAP_REV.get(boot.target),
                    'persistent': (boot.enabled == sushy.
                                   BootSourceOverrideEnabled.CONTINUOUS)}

    def get_hardware_properties(self, task):
        """``{'gpus': N}`` from the BMC, ``{}`` when it lists no processors.

        See :func:`count_gpus`; 0 is recorded when the BMC lists
        processors and none is a GPU.

        :raises: RedfishError and its subclasses.
        """
        with utils.Connection(task.node, self.conf) as conn:
            gpus = count_gpus(conn.system())
        return {} if gpus is None else {'gpus': gpus}
