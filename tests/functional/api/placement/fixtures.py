"""gabbi fixtures of the Placement API tests.

A YAML file names its fixtures (``fixtures: [APIFixture]``); gabbi starts
them before the file's tests and stops them after. ``APIFixture`` gives a
fresh configuration, a fresh database of the backend selected by
``ALLOC_TEST_DB_BACKEND`` and noauth, then builds the application with
``deploy.loadapp(conf)``. gabbi asks for its intercept when it builds the
suites, before any fixture runs, so ``setup_app`` returns a WSGI callable
that forwards to the application of the running fixture.
"""

import logging
import os
import uuid

import fixtures
from gabbi import fixture
from oslo_config import fixture as config_fixture
from oslo_policy import opts as policy_opts

from alloc_framework.api.placement import deploy
from alloc_framework import conf as af_conf
from tests import base

# The configuration and application of the running fixture.
CONF = None
APP = None


def _current_app(environ, start_response):
    return APP(environ, start_response)


def setup_app():
    """gabbi's intercept: the application of the running fixture."""
    return _current_app


class PlacementEnvironment(fixtures.Fixture):
    """What every gabbi fixture of the Placement API starts from.

    A fresh configuration over the process-wide ``CONF`` (as
    ``tests.base.TestCase`` uses it: the enginefacade falls back to it
    before anything configures it) parsed from an empty command line and
    no files, so that nothing from the machine leaks in; a state
    directory; noauth; the policy defaults; a fresh database of the
    selected backend; and the warnings the service logs captured.
    """

    def _setUp(self):
        self.conf = af_conf.CONF
        self.conf_fixture = self.useFixture(config_fixture.Config(self.conf))
        self.conf([], project='alloc_framework', default_config_files=[])
        self.tempdir = self.useFixture(fixtures.TempDir())
        self.conf_fixture.config(state_path=self.tempdir.path)
        self.conf_fixture.config(auth_strategy='noauth',
                                 group='placement_api')
        # [oslo_policy] must exist before fixtures override it.
        policy_opts.set_defaults(self.conf)
        self.useFixture(fixtures.FakeLogger(level=logging.WARNING))
        self.db = self.useFixture(base.Database())


class APIFixture(fixture.GabbiFixture):
    """Config + fresh database + noauth; exposes ids through the env."""

    def start_fixture(self):
        global CONF
        self.env = PlacementEnvironment()
        self.env.setUp()
        self.conf_fixture = self.env.conf_fixture
        conf = self.env.conf
        CONF = conf
        self.build_app()
        # Values YAML files use as $ENVIRON['...'].
        for name in ('RP_UUID', 'RP_UUID1', 'RP_UUID2', 'PARENT_UUID',
                     'CONSUMER_UUID', 'CONSUMER_UUID1', 'CONSUMER_UUID2',
                     'PROJECT_ID', 'USER_ID', 'AGGA_UUID', 'AGGB_UUID'):
            os.environ[name] = str(uuid.uuid4())
        os.environ['RP_NAME'] = 'rp-' + uuid.uuid4().hex[:8]

    def build_app(self):
        """(Re)build the application over the current configuration."""
        global APP
        APP = deploy.loadapp(CONF)

    def stop_fixture(self):
        global CONF, APP
        APP = None
        self.env.cleanUp()
        CONF = None


class SecureRBACFixture(APIFixture):
    """APIFixture with the new policy defaults only."""

    def start_fixture(self):
        super().start_fixture()
        self.conf_fixture.config(enforce_new_defaults=True,
                                 group='oslo_policy')
        self.build_app()


class LegacyPolicyFixture(APIFixture):
    """APIFixture where the deprecated admin-only rules still apply."""

    def start_fixture(self):
        super().start_fixture()
        self.conf_fixture.config(enforce_new_defaults=False,
                                 group='oslo_policy')
        self.build_app()


class AllocationFixture(APIFixture):
    """APIFixture plus two providers with inventory, made by the objects.

    ``RP_UUID`` (name ``RP_NAME``): VCPU total 10, reserved 2 (capacity
    8), max_unit 4; MEMORY_MB total 2048, min_unit 64, max_unit 1024,
    step_size 64. ``RP_UUID2``: DISK_GB total 1000, allocation_ratio 1.5
    (capacity 1500).
    """

    def start_fixture(self):
        super().start_fixture()
        from alloc_framework.common import context as af_context
        from alloc_framework.objects.placement import inventory as inv_obj
        from alloc_framework.objects.placement import \
            resource_provider as rp_obj
        ctx = af_context.get_admin_context()
        rp = rp_obj.create(ctx, os.environ['RP_NAME'],
                           uuid=os.environ['RP_UUID'])
        inv_obj.set_inventories(ctx, rp, [
            inv_obj.Inventory('VCPU', 10, reserved=2, max_unit=4),
            inv_obj.Inventory('MEMORY_MB', 2048, min_unit=64,
                              max_unit=1024, step_size=64)])
        rp2 = rp_obj.create(ctx, os.environ['RP_NAME'] + '-2',
                            uuid=os.environ['RP_UUID2'])
        inv_obj.set_inventories(ctx, rp2, [
            inv_obj.Inventory('DISK_GB', 1000, allocation_ratio=1.5)])
