"""The tests both WSGI entry points (``alloc_framework.wsgi.*``) share.

A test class mixes :class:`WsgiEntryPointTests` in before its API's base
test case and names the entry point's module in ``wsgi_module``.
"""

import os
from unittest import mock

import fixtures

from alloc_framework import wsgi

PREPARE = 'alloc_framework.cmd.service_setup.prepare_service'


class WsgiEntryPointTests:

    wsgi_module = None
    dialect_neutral = True

    def setUp(self):
        super().setUp()
        # Each test builds its own application.
        patcher = mock.patch.object(self.wsgi_module, '_APP', None)
        patcher.start()
        self.addCleanup(patcher.stop)

    def test_config_file_from_environment(self):
        path = os.path.join(self.state_path, 'alloc.conf')
        self.useFixture(fixtures.EnvironmentVariable(
            wsgi.CONFIG_FILE_ENV, path))
        self.assertEqual([path], wsgi.config_files())
        with mock.patch(PREPARE, return_value=self.conf) as prep:
            app = self.wsgi_module.init_application()
            self.assertIs(app, self.wsgi_module.init_application())
        prep.assert_called_once_with([], default_config_files=[path])
