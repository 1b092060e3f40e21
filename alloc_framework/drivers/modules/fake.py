"""The ``fake`` interfaces: instant, and recording what they were asked.

They touch no hardware. What they did is recorded on the node (its power
state, and ``driver_internal_info``) so tests can observe it. A few
``driver_info`` keys make them fail on purpose, to exercise the failure
paths of the state machine.
"""

from alloc_framework.common import exception
from alloc_framework.common import states
from alloc_framework.drivers import base
from alloc_framework.drivers import deferred

# How many past power actions are kept in driver_internal_info.
_HISTORY = 10

FAIL_KEYS = {
    'fake_fail_power': 'Optional. When true, power actions fail.',
    'fake_fail_power_read': 'Optional. When true, reading the power state '
                            'fails, as from a BMC that does not answer.',
    'fake_fail_deploy': 'Optional. When true, deployment fails.',
    'fake_fail_clean': 'Optional. When true, cleaning steps fail.',
    'fake_fail_firmware': 'Optional. When true, firmware updates fail.',
    'fake_firmware_polls': 'Optional. How many times a firmware update '
                           'asks to be called again before it finishes '
                           '(default 0).',
    'fake_firmware_poll_delay': 'Optional. Seconds between those calls '
                                '(default 0).',
    'fake_fail_firmware_component': 'Optional. A component whose firmware '
                                    'update fails, after the components '
                                    'before it in the update were '
                                    'flashed.',
}


def _failing(task, key):
    return bool(task.node.driver_info.get(key))


def _record(task, key, value):
    info = dict(task.node.driver_internal_info or {})
    info[key] = value
    task.node.driver_internal_info = info


def _append(task, key, value):
    info = dict(task.node.driver_internal_info or {})
    info[key] = (list(info.get(key) or []) + [value])[-_HISTORY:]
    task.node.driver_internal_info = info


# The key of driver_internal_info holding the power state the fake BMC
# reports when it differs from the record (see FakePower).
BMC_POWER_STATE = 'fake_bmc_power_state'
# driver_internal_info key: the health the fake BMC reports (none when
# absent).
BMC_HEALTH = 'fake_bmc_health'


class FakePower(base.PowerInterface):
    """Keeps the power state in the node record only.

    The record is the fake BMC's state, unless ``driver_internal_info``
    holds ``fake_bmc_power_state``: the fake BMC then reports that state,
    as a real one would after someone pressed the node's power button; a
    successful power action ends it (the BMC is in the new state).
    ``driver_info`` ``fake_fail_power_read`` makes reading the state
    fail, as a BMC that stopped answering.
    """

    def get_properties(self):
        return {key: FAIL_KEYS[key]
                for key in ('fake_fail_power', 'fake_fail_power_read')}

    def validate(self, task):
        pass

    def get_power_state(self, task):
        if _failing(task, 'fake_fail_power_read'):
            raise exception.PowerStateFailure(
                'The fake BMC of node %s does not answer.' % task.node.uuid)
        info = task.node.driver_internal_info or {}
        return (info.get(BMC_POWER_STATE) or task.node.power_state
                or states.POWER_OFF)

    def get_health(self, task):
        if _failing(task, 'fake_fail_power_read'):
            raise exception.PowerStateFailure(
                'The fake BMC of node %s does not answer.' % task.node.uuid)
        return (task.node.driver_internal_info or {}).get(BMC_HEALTH)

    def set_power_state(self, task, power_state, timeout=None):
        if power_state not in states.POWER_STATES:
            raise exception.InvalidParameterValue(
                err='Unsupported power state %s' % power_state)
        if _failing(task, 'fake_fail_power'):
            raise exception.PowerStateFailure(pstate=power_state)
        task.node.power_state = power_state
        _forget_bmc_state(task)
        _append(task, 'fake_power_actions', power_state)

    def reboot(self, task, timeout=None):
        if _failing(task, 'fake_fail_power'):
            raise exception.PowerStateFailure(pstate=states.REBOOT)
        task.node.power_state = states.POWER_ON
        _forget_bmc_state(task)
        _append(task, 'fake_power_actions', states.REBOOT)


def _forget_bmc_state(task):
    info = task.node.driver_internal_info or {}
    if BMC_POWER_STATE in info:
        info = dict(info)
        del info[BMC_POWER_STATE]
        task.node.driver_internal_info = info


class FakeDeploy(base.DeployInterface):
    """Deploys and tears down instantly."""

    def get_properties(self):
        return {k: FAIL_KEYS[k] for k in ('fake_fail_deploy',
                                          'fake_fail_clean')}

    def validate(self, task):
        pass

    def deploy(self, task):
        if _failing(task, 'fake_fail_deploy'):
            raise exception.InstanceDeployFailure(
                reason='fake_fail_deploy is set in driver_info')
        _record(task, 'fake_deployed', True)
        return None

    def tear_down(self, task):
        _record(task, 'fake_deployed', False)
        return None

    @base.clean_step(priority=10)
    def erase_devices_metadata(self, task):
        """Automated cleaning: "wipes" the disks' metadata."""
        if _failing(task, 'fake_fail_clean'):
            raise exception.NodeCleaningFailure(
                node=task.node.uuid,
                reason='fake_fail_clean is set in driver_info')
        _record(task, 'fake_cleaned', 'erase_devices_metadata')

    @base.clean_step(priority=0, abortable=True,
                     argsinfo={'passes': {'description': 'How many times '
                                          'the disks are overwritten.',
                                          'required': False}})
    def erase_devices(self, task, passes=1):
        """Manual cleaning only: "overwrites" the disks."""
        if _failing(task, 'fake_fail_clean'):
            raise exception.NodeCleaningFailure(
                node=task.node.uuid,
                reason='fake_fail_clean is set in driver_info')
        _record(task, 'fake_cleaned', 'erase_devices:%s' % passes)


class FakeManagement(base.ManagementInterface):
    """Remembers the boot device on the node."""

    BOOT_DEVICES = ['pxe', 'disk', 'cdrom', 'bios']

    def get_properties(self):
        return {}

    def validate(self, task):
        pass

    def get_supported_boot_devices(self, task):
        return list(self.BOOT_DEVICES)

    def set_boot_device(self, task, device, persistent=False):
        if device not in self.BOOT_DEVICES:
            raise exception.InvalidParameterValue(
                err='Invalid boot device %s; valid devices are %s'
                    % (device, ', '.join(self.BOOT_DEVICES)))
        _record(task, 'fake_boot_device',
                {'boot_device': device, 'persistent': persistent})

    def get_boot_device(self, task):
        return (task.node.driver_internal_info.get('fake_boot_device')
                or {'boot_device': None, 'persistent': False})


class FakeBoot(base.BootInterface):
    """Records what it was asked to prepare."""

    def get_properties(self):
        return {}

    def validate(self, task):
        pass

    def prepare_ramdisk(self, task, ramdisk_params):
        _record(task, 'fake_boot', 'ramdisk')

    def clean_up_ramdisk(self, task):
        _record(task, 'fake_boot', None)

    def prepare_instance(self, task):
        _record(task, 'fake_boot', 'instance')

    def clean_up_instance(self, task):
        _record(task, 'fake_boot', None)


class FakeBIOS(base.BIOSInterface):
    """Keeps the "BIOS settings" in ``driver_internal_info``."""

    def get_properties(self):
        return {}

    def validate(self, task):
        pass

    def apply_configuration(self, task, settings):
        current = dict(task.node.driver_internal_info.get(
            'fake_bios_settings') or {})
        current.update((s['name'], s['value']) for s in settings)
        _record(task, 'fake_bios_settings', current)

    def factory_reset(self, task):
        _record(task, 'fake_bios_settings', {})

    def cache_bios_settings(self, task):
        pass


class FakeFirmware(base.FirmwareInterface):
    """Firmware "updates" that take a few calls, kept on the node.

    The versions of the node's components live in
    ``driver_internal_info['fake_firmware_versions']`` (a BMC and a BIOS
    at ``1.0`` until updated). An update installs, for each component,
    the last path segment of its URL as the new version. It is
    deferrable and, like a real BMC, does not finish at once: it asks to
    be called again ``driver_info['fake_firmware_polls']`` times (0 by
    default), ``driver_info['fake_firmware_poll_delay']`` seconds apart,
    before the versions change. With
    ``driver_info['fake_fail_firmware_component']`` naming a component,
    the update installs the components before it and then fails. Every
    component reports the fixed vendor, model and serial number of
    :attr:`IDENTITY`.
    """

    INITIAL = {'bmc': '1.0', 'bios': '1.0'}
    # The device every fake component reports (bare metal API 1.114).
    IDENTITY = {'vendor': 'Fake Vendor', 'model': 'Fake Model',
                'serial_number': 'FAKE-0001'}
    _SETTINGS = {'description': 'The components to update: a list of '
                                '{"component": name, "url": image URL}.',
                 'required': True}

    def get_properties(self):
        return {k: FAIL_KEYS[k] for k in ('fake_fail_firmware',
                                          'fake_fail_firmware_component',
                                          'fake_firmware_polls',
                                          'fake_firmware_poll_delay')}

    def validate(self, task):
        pass

    def _versions(self, task):
        return dict(task.node.driver_internal_info.get(
            'fake_firmware_versions') or self.INITIAL)

    def get_components(self, task):
        return [dict(self.IDENTITY, component=name, current_version=version)
                for name, version in sorted(self._versions(task).items())]

    @base.clean_step(priority=0, argsinfo={'settings': _SETTINGS})
    @base.service_step(priority=0, argsinfo={'settings': _SETTINGS})
    @deferred.deferrable
    def update(self, task, settings, polls=None):
        self.validate_step_args(task, 'update', {'settings': settings})
        if _failing(task, 'fake_fail_firmware'):
            raise exception.AllocFrameworkException(
                'fake_fail_firmware is set in driver_info')
        if polls is None:
            polls = int(task.node.driver_info.get('fake_firmware_polls')
                        or 0)
        if polls > 0:
            delay = task.node.driver_info.get('fake_firmware_poll_delay')
            return deferred.Reschedule(
                delay=float(delay) if delay is not None else 0,
                settings=settings, polls=polls - 1)
        versions = self._versions(task)
        failing = task.node.driver_info.get('fake_fail_firmware_component')
        for setting in settings:
            if setting['component'] == failing:
                # As a BMC refusing the second image: the first one is
                # installed for good.
                _record(task, 'fake_firmware_versions', versions)
                task.node.save(task.context)
                raise exception.AllocFrameworkException(
                    'fake_fail_firmware_component is %s in driver_info'
                    % failing)
            versions[setting['component']] = (
                setting['url'].rstrip('/').rsplit('/', 1)[-1])
        _record(task, 'fake_firmware_versions', versions)
        _append(task, 'fake_firmware_updates',
                [s['component'] for s in settings])
        return {'updated': sorted(s['component'] for s in settings),
                'components': self.get_components(task)}
