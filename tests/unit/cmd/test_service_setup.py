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
