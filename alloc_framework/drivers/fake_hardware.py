"""The ``fake-hardware`` hardware type: every operation succeeds at once.

For development, tests and benchmarks: nodes of this type need no
``driver_info`` and are deployed and cleaned instantly.
"""

from alloc_framework.drivers import base


class FakeHardware(base.HardwareType):
    """Fake hardware: works with the ``fake`` interfaces."""

    @property
    def supported_power_interfaces(self):
        return ['fake']

    @property
    def supported_deploy_interfaces(self):
        return ['fake']

    @property
    def supported_management_interfaces(self):
        return ['fake']
