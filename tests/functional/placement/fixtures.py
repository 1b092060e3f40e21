"""gabbi fixtures of the Placement API tests.

A YAML file names its fixtures (``fixtures: [APIFixture]``); gabbi starts
them before the file's tests and stops them after. ``APIFixture`` gives a
fresh configuration, a fresh database of the backend selected by
``ALLOC_TEST_DB_BACKEND`` and noauth, then builds the application with
``deploy.loadapp(conf)``. gabbi asks for its intercept when it builds the
suites, before any fixture runs, so ``setup_app`` returns a WSGI callable
that forwards to the application of the running fixture.
"""

import os
import uuid

from gabbi import fixture
from oslo_config import cfg
from oslo_config import fixture as config_fixture
from oslo_policy import opts as policy_opts

from alloc_framework.api.placement import deploy
from alloc_framework import conf as af_conf
from alloc_framework.objects.placement import attribute_cache
from tests import base

# The configuration and application of the running fixture.
CONF = None
APP = None


def _current_app(environ, start_response):
    return APP(environ, start_response)


def setup_app():
    """gabbi's intercept: the application of the running fixture."""
    return _current_app


class APIFixture(fixture.GabbiFixture):
    """Config + fresh database + noauth; exposes ids through the env."""

    def start_fixture(self):
        global CONF
        conf = cfg.ConfigOpts()
        af_conf.register_opts(conf)
        conf([], project='alloc_framework', default_config_files=[])
        self.conf_fixture = config_fixture.Config(conf)
        self.conf_fixture.setUp()
        self.conf_fixture.config(auth_strategy='noauth',
                                 group='placement_api')
        self.conf_fixture.config(state_path='/nonexistent')
        # [oslo_policy] must exist before fixtures override it.
        policy_opts.set_defaults(conf)
        self.db = base.Database()
        self.db.setUp()
        attribute_cache.clear()
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
        attribute_cache.clear()
        self.db.cleanUp()
        self.conf_fixture.cleanUp()
        CONF = None


class SecureRBACFixture(APIFixture):
    """APIFixture with the new policy defaults and scope enforcement."""

    def start_fixture(self):
        super().start_fixture()
        self.conf_fixture.config(enforce_new_defaults=True,
                                 enforce_scope=True, group='oslo_policy')
        self.build_app()
