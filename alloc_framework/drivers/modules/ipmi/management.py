"""The ``ipmi`` management interface: the boot device (boot flags of the
System Boot Options), with the persistent flag.

Boot device names are upstream ironic's; each maps to the IPMI boot
device selector of the boot flags parameter.
"""

from alloc_framework.common import exception
from alloc_framework.drivers import base
from alloc_framework.drivers.modules.ipmi import common

# Our boot device -> pyghmi's name for its boot device selector.
BOOT_DEVICES = {
    'pxe': 'network',
    'disk': 'hd',
    'cdrom': 'optical',
    'bios': 'setup',
    'safe': 'safe',
}
_FROM_BMC = {v: k for k, v in BOOT_DEVICES.items()}


class IPMIManagement(base.ManagementInterface):
    """Boot device through the BMC."""

    def get_properties(self):
        return dict(common.PROPERTIES)

    def validate(self, task):
        common.parse_driver_info(task.node)

    def get_supported_boot_devices(self, task):
        return sorted(BOOT_DEVICES)

    def set_boot_device(self, task, device, persistent=False):
        if device not in BOOT_DEVICES:
            raise exception.InvalidParameterValue(
                err='Invalid boot device %s; valid devices are %s'
                    % (device, ', '.join(sorted(BOOT_DEVICES))))
        bmc = common.parse_driver_info(task.node)

        def work(client):
            # pyghmi's helper raises for a refused command and returns
            # an error dict for a name it does not know.
            result = client.set_bootdev(BOOT_DEVICES[device],
                                        persist=bool(persistent))
            if isinstance(result, dict) and 'error' in result:
                raise exception.IPMIFailure(bmc=bmc, error=result['error'])

        common.converse(self.conf, bmc, work,
                        'setting the boot device to %s' % device)

    def get_boot_device(self, task):
        bmc = common.parse_driver_info(task.node)
        answer = common.converse(self.conf, bmc,
                                 lambda client: client.get_bootdev(),
                                 'reading the boot device')
        return {'boot_device': _FROM_BMC.get(answer.get('bootdev')),
                'persistent': bool(answer.get('persistent'))}
