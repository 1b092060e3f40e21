"""A conductor in the test process, reached through the local transport."""

from alloc_framework.conductor import manager as manager_mod
from alloc_framework.conductor import rpcapi
from tests import base
from tests.unit.objects import utils


class ConductorTestCase(base.DBTestCase):
    """Starts one ConductorManager (``test-host``) and a ConductorAPI."""

    host = 'test-host'

    def setUp(self):
        super().setUp()
        self.config(rpc_transport='local')
        self.config(check_allocations_interval=0, group='conductor')
        self.config(node_locked_retry_interval=0, group='conductor')
        self.ctx = utils.admin_context()
        self.manager = self.start_conductor(self.host)
        self.rpc = rpcapi.ConductorAPI(self.conf)

    def start_conductor(self, host):
        manager = manager_mod.ConductorManager(host, self.conf)
        manager.init_host()
        self.addCleanup(manager.del_host)
        return manager

    def make_node(self, **kw):
        return utils.create_node(self.ctx, **kw)
