"""A conductor in the test process, reached through the local transport.

Also slow fake interfaces, to observe a conductor while a worker works.
"""

import threading

from alloc_framework.conductor import manager as manager_mod
from alloc_framework.conductor import rpcapi
from alloc_framework.drivers import driver_factory
from alloc_framework.drivers.modules import fake
from tests import base
from tests.functional.objects.baremetal import factories


class ConductorTestCase(base.DBTestCase):
    """Starts one ConductorManager (``test-host``) and a ConductorAPI."""

    host = 'test-host'

    def setUp(self):
        super().setUp()
        self.config(rpc_transport='local')
        self.config(check_allocations_interval=0,
                    check_provision_state_interval=0,
                    sync_power_state_interval=0, group='conductor')
        self.config(node_locked_retry_interval=0, group='conductor')
        self.ctx = factories.admin_context()
        self.manager = self.start_conductor(self.host)
        self.rpc = rpcapi.ConductorAPI(self.conf)

    def start_conductor(self, host):
        manager = manager_mod.ConductorManager(host, self.conf)
        manager.init_host()
        self.addCleanup(manager.del_host)
        return manager

    def make_node(self, **kw):
        return factories.create_node(self.ctx, **kw)

    def restart_with_deploy(self, deploy):
        """Restart the conductor with ``deploy`` as the ``fake`` deploy
        interface, launching deferred actions only when the test does
        (``self.launcher``) and never retrying a failed step."""
        self.config(launcher_interval=0, group='deferred_actions')
        self.config(step_retries=0, group='deferred_actions')
        self.manager.del_host()
        factory = driver_factory.DriverFactory(self.conf)
        factory.interfaces['deploy']['fake'] = deploy
        self.manager.driver_factory = factory
        self.manager.init_host()
        self.launcher = self.manager.deferred_actions


class Gate:
    """Holds an interface method until the test opens it."""

    def __init__(self, test):
        self.entered = threading.Event()
        self.opened = threading.Event()
        # Never leave a worker blocked behind a failed test: del_host
        # waits for the pool.
        test.addCleanup(self.opened.set)

    def pass_through(self):
        self.entered.set()
        if not self.opened.wait(60):
            raise RuntimeError('gate never opened')


class SlowPower(fake.FakePower):
    """Powers on or off once its gate opens."""

    def __init__(self, gate):
        self.gate = gate

    def set_power_state(self, task, power_state, timeout=None):
        self.gate.pass_through()
        super().set_power_state(task, power_state, timeout=timeout)


class SlowDeploy(fake.FakeDeploy):
    """Deploys once its gate opens."""

    def __init__(self, gate):
        self.gate = gate

    def deploy(self, task):
        self.gate.pass_through()
        return super().deploy(task)
