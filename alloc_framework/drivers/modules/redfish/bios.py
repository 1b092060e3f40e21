"""The ``redfish`` BIOS interface: the ComputerSystem's ``Bios`` resource.

Settings are read from ``Attributes`` and written to the BIOS's pending
settings (``@Redfish.Settings``): the BMC applies them at the node's next
boot, as Redfish BIOSes do. The last settings read are kept in the node's
``driver_internal_info`` (``bios_settings``).
"""

from alloc_framework.common import exception
from alloc_framework.drivers import base
from alloc_framework.drivers.modules.redfish import utils

CACHE_KEY = 'bios_settings'


def _check(settings):
    if not isinstance(settings, list):
        raise exception.InvalidParameterValue(
            err='settings must be a list of {"name", "value"} objects.')
    for i, item in enumerate(settings):
        if (not isinstance(item, dict) or set(item) != {'name', 'value'}
                or not isinstance(item['name'], str) or not item['name']):
            raise exception.InvalidParameterValue(
                err='settings[%d] must be an object with a non-empty "name" '
                    'and a "value".' % i)


class RedfishBIOS(base.BIOSInterface):
    """BIOS settings through Redfish."""

    def get_properties(self):
        return dict(utils.PROPERTIES)

    def validate(self, task):
        utils.parse_driver_info(task.node, self.conf)

    def get_settings(self, task):
        """The current BIOS settings: ``{name: value}``."""
        with utils.Connection(task.node, self.conf) as conn:
            return dict(conn.system().bios.attributes)

    def apply_configuration(self, task, settings):
        _check(settings)
        with utils.Connection(task.node, self.conf) as conn:
            conn.system().bios.set_attributes(
                {s['name']: s['value'] for s in settings})

    def factory_reset(self, task):
        with utils.Connection(task.node, self.conf) as conn:
            conn.system().bios.reset_bios()

    def cache_bios_settings(self, task):
        settings = self.get_settings(task)
        info = dict(task.node.driver_internal_info or {})
        info[CACHE_KEY] = settings
        task.node.driver_internal_info = info
        task.node.save(task.context)
