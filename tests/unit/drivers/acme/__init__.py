"""A third-party hardware plugin, installed by ``fixture.Installed``.

It has its own option group, a hardware type and a power interface that
reads its options through ``self.conf``.
"""

from oslo_config import cfg

from alloc_framework.drivers import base
from alloc_framework.drivers.modules import fake

opts = [
    cfg.IntOpt('power_timeout', default=7, min=1,
               help='Seconds the Acme BMC gets to apply a power change.'),
]


def list_opts():
    return [('acme', opts)]


class AcmeHardware(base.HardwareType):
    supported_power_interfaces = ['acme']
    supported_deploy_interfaces = ['fake']
    supported_management_interfaces = ['fake']


class AcmePower(fake.FakePower):

    def get_properties(self):
        return {'acme_timeout': 'Optional. Overrides [acme]power_timeout.'}

    def timeout(self, task):
        return task.node.driver_info.get('acme_timeout',
                                         self.conf.acme.power_timeout)
