"""The no-op implementations of the optional interface kinds.

Each is registered as ``no-<kind>`` in its kind's namespace and supported
by every hardware type (``HardwareType.supported_interfaces``), so a
hardware type that knows nothing of a kind still composes a driver. They
validate anything, and refuse every action with
``UnsupportedDriverExtension``.
"""

from alloc_framework.common import exception
from alloc_framework.drivers import base


class _NoInterface:
    """Nothing to validate; every action is unsupported."""

    def get_properties(self):
        return {}

    def validate(self, task):
        pass

    def _unsupported(self, task, *args, **kwargs):
        raise exception.UnsupportedDriverExtension(
            driver=task.node.driver, extension=self.interface_type)


class NoBoot(_NoInterface, base.BootInterface):
    """The node needs nothing prepared to boot: nothing to do."""

    def prepare_ramdisk(self, task, ramdisk_params):
        pass

    def clean_up_ramdisk(self, task):
        pass

    def prepare_instance(self, task):
        pass

    def clean_up_instance(self, task):
        pass


class NoBIOS(_NoInterface, base.BIOSInterface):
    """No BIOS settings management."""

    apply_configuration = _NoInterface._unsupported
    factory_reset = _NoInterface._unsupported

    def cache_bios_settings(self, task):
        pass


class NoFirmware(_NoInterface, base.FirmwareInterface):
    """No firmware management."""

    update = _NoInterface._unsupported

    def cache_firmware_components(self, task, flashed=()):
        pass
