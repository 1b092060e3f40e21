"""Unknown configuration options: which are reported, at what cost."""

import os
from unittest import mock

from oslo_config import cfg

from alloc_framework.cmd import service_setup
from tests import base


class UnknownOptionsTestCase(base.TestCase):

    def conf_with(self, text):
        path = os.path.join(self.state_path, 'alloc.conf')
        with open(path, 'w') as stream:
            stream.write(text)
        conf = cfg.ConfigOpts()
        conf.register_opts([cfg.StrOpt('auth_strategy')])
        conf.register_opts([cfg.IntOpt('port'), cfg.StrOpt('auth_type')],
                           group='api')
        conf(['--config-file', path], project='alloc_framework',
             default_config_files=[], default_config_dirs=[])
        return conf, path

    def test_registered_options_need_no_library_lists(self):
        conf, _path = self.conf_with(
            '[DEFAULT]\nauth_strategy = noauth\n[api]\nport = 1\n')
        with mock.patch.object(service_setup, 'known_options',
                               side_effect=AssertionError('loaded')):
            self.assertEqual([], service_setup.unknown_options(conf))

    def test_library_options_are_known(self):
        # Not registered on this configuration: known from the libraries'
        # own lists.
        conf, _path = self.conf_with(
            '[oslo_messaging_rabbit]\nheartbeat_rate = 3\n'
            '[keystone_authtoken]\nauth_type = password\nusername = x\n'
            '[oslo_policy]\nenforce_new_defaults = true\n')
        self.assertEqual([], service_setup.unknown_options(conf))

    def test_typos_are_reported_in_file_order(self):
        conf, path = self.conf_with(
            '[DEFAULT]\nauth_stratgy = noauth\n[databse]\nconnection = x\n'
            '[api]\nport = 1\nprot = 2\n[oslo_messaging_rabbit]\n'
            'heartbeat_rat = 3\n')
        self.assertEqual(
            ['[DEFAULT] auth_stratgy in %s' % path,
             '[databse] in %s' % path,
             '[api] prot in %s' % path,
             '[oslo_messaging_rabbit] heartbeat_rat in %s' % path],
            service_setup.unknown_options(conf))

    def test_auth_plugin_options_are_known(self):
        conf, path = self.conf_with(
            '[api]\nauth_type = password\nusername = x\nuser_domain_id = y\n'
            'usrname = z\n')
        self.assertEqual(['[api] usrname in %s' % path],
                         service_setup.unknown_options(conf))


class ServeTestCase(base.TestCase):

    def test_what_loading_made_is_frozen_before_serving(self):
        calls = mock.Mock()
        calls.launch.return_value.wait.return_value = 0
        built = object()
        with mock.patch.object(service_setup.gc, 'freeze', calls.freeze), \
                mock.patch.object(service_setup.service, 'launch',
                                  calls.launch):
            status = service_setup.serve(self.conf, lambda conf: built,
                                         workers=2)
        self.assertEqual(0, status)
        self.assertEqual(['freeze', 'launch', 'launch().wait'],
                         [name for name, _args, _kw in calls.mock_calls])
        calls.launch.assert_called_once_with(
            self.conf, built, restart_method='mutate', workers=2)

    def test_a_service_that_cannot_be_built_freezes_nothing(self):
        def build(conf):
            raise PermissionError('state_path is not writable')

        with mock.patch.object(service_setup.gc, 'freeze') as freeze, \
                mock.patch.object(service_setup.service, 'launch') as launch:
            self.assertEqual(1, service_setup.serve(self.conf, build))
        freeze.assert_not_called()
        launch.assert_not_called()
