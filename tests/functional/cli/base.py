"""Run real ``alloc`` commands against real servers over HTTP.

Each test gets a fresh database, the real WSGI application served by
``tests.base.Server`` and the endpoint in the environment variable the
CLI reads, exactly as a user would configure it.
"""

import io
import json
import os
import subprocess
import sys

import fixtures
from oslo_config import cfg
from oslo_config import fixture as config_fixture
from oslo_policy import opts as policy_opts

from alloc_framework.cli import shell
from alloc_framework import conf as af_conf
from tests import base


class CLIResult:
    def __init__(self, code, out, err):
        self.code = code
        self.out = out
        self.err = err

    def json(self):
        return json.loads(self.out)


class CLITestCase(base.DBTestCase):
    """Base: ``self.alloc(...)`` runs a command in-process."""
    # The command line over HTTP; the SQL behind it is the APIs', tested on
    # every database.
    dialect_neutral = True

    def make_conf(self, **groups):
        """A parsed ConfigOpts for a server: ``{group: {opt: value}}``."""
        conf = cfg.ConfigOpts()
        af_conf.register_opts(conf)
        conf([], project='alloc_framework', default_config_files=[])
        policy_opts.set_defaults(conf)
        fixture = self.useFixture(config_fixture.Config(conf))
        fixture.config(state_path=self.state_path, host='cli-test-host')
        for group, values in groups.items():
            fixture.config(group=None if group == 'DEFAULT' else group,
                           **values)
        return conf

    def alloc(self, *argv, fmt='json', expect=0):
        argv = list(argv)
        if fmt:
            argv += ['-f', fmt]
        out, err = io.StringIO(), io.StringIO()
        code = shell.main(argv, stdout=out, stderr=err)
        result = CLIResult(code, out.getvalue(), err.getvalue())
        if expect is not None:
            self.assertEqual(expect, code, 'alloc %s\nstdout: %s\nstderr: %s'
                             % (' '.join(argv), result.out, result.err))
        if expect == 0 and fmt == 'json':
            return result.json()
        return result

    def run_script(self, *argv):
        """Run the installed ``alloc`` console script in a new process.

        It inherits this process's environment (endpoints, ``OS_*``).
        """
        script = os.path.join(os.path.dirname(sys.executable), 'alloc')
        if not os.path.exists(script):
            self.skipTest('alloc console script not installed')
        return subprocess.run([script] + list(argv), capture_output=True,
                              text=True, timeout=60, env=dict(os.environ))

    def alloc_fails(self, *argv):
        """Run a command expected to fail; return its stderr."""
        result = self.alloc(*argv, fmt=None, expect=1)
        self.assertEqual('', result.out)
        self.assertNotIn('Traceback', result.err)
        return result.err


class PlacementCLITestCase(CLITestCase):
    """The Placement API served on a random port, noauth."""

    def server_options(self):
        """Hook: the server's configuration, ``{group: {opt: value}}``."""
        return {'placement_api': {'auth_strategy': 'noauth'}}

    def setUp(self):
        super().setUp()
        from alloc_framework.api.placement import deploy
        conf = self.make_conf(**self.server_options())
        server = self.useFixture(base.Server(deploy.loadapp(conf),
                                             name='placement-cli'))
        self.useFixture(fixtures.EnvironmentVariable(
            'ALLOC_PLACEMENT_ENDPOINT', server.url))
        self.useFixture(fixtures.EnvironmentVariable(
            'OS_PLACEMENT_API_VERSION'))
        self.useFixture(fixtures.EnvironmentVariable('OS_AUTH_TYPE'))


class BaremetalCLITestCase(CLITestCase):
    """The bare metal API served on a random port, noauth.

    With ``with_conductor`` a conductor runs in this process and the API
    reaches it through the ``local`` RPC transport, as in ``alloc-server``.
    """

    with_conductor = True

    def configure(self):
        """Hook: adjust the server's configuration before it starts."""
        self.config(auth_strategy='noauth')

    def setUp(self):
        super().setUp()
        from alloc_framework.api.baremetal import app as bm_app
        self.config(rpc_transport='local')
        self.configure()
        if self.with_conductor:
            from alloc_framework.conductor import manager as manager_mod
            manager = manager_mod.ConductorManager('test-host', self.conf)
            manager.init_host()
            self.addCleanup(manager.del_host)
            self.manager = manager
        server = self.useFixture(base.Server(bm_app.setup_app(self.conf),
                                             name='baremetal-cli'))
        self.useFixture(fixtures.EnvironmentVariable(
            'ALLOC_BAREMETAL_ENDPOINT', server.url))
        self.useFixture(fixtures.EnvironmentVariable(
            'OS_BAREMETAL_API_VERSION'))
        self.useFixture(fixtures.EnvironmentVariable('OS_AUTH_TYPE'))
