"""A configuration that can never work stops the console script at once.

The launcher runs services in child processes and starts a child again
whenever it dies: a fatal configuration error must stop the command with
its message and a non-zero status instead of forking forever.
"""

import os
import socket

from tests import base


class FatalConfigTestCase(base.TestCase):
    # Configuration checks: the database is never reached.
    dialect_neutral = True

    def run_command(self, command, config, args=(), status=1, after=''):
        returncode, output = self.run_console_script(
            command,
            '[DEFAULT]\nstate_path = %s\nhost = fatal-test\n'
            '%s\n[api]\nport = 0\n[placement_api]\nport = 0\n'
            '%s\n' % (self.state_path, config, after), args)
        self.assertEqual(status, returncode, output)
        self.assertNotIn('Forking too fast', output)
        self.assertNotIn('Traceback', output)
        return output

    def test_missing_config_file(self):
        output = self.run_command('alloc-server', '',
                                  args=['--config-file', '/nope'])
        self.assertIn('ERROR: Configuration file not found or not '
                      'readable: /nope', output)
        self.assertEqual(1, len(output.strip().splitlines()), output)

    def test_invalid_values(self):
        # Before anything else: not even the database directory is made.
        path = os.path.join(self.state_path, 'alloc.conf')
        for command, config, after, message in (
                ('alloc-server', 'auth_strategy = kerberos', '',
                 "ERROR: Invalid value of [DEFAULT] auth_strategy in %s: "
                 "Valid values are [noauth, http_basic, keystone], but "
                 "found 'kerberos'" % path),
                ('alloc-api', '', '[api]\nport = eighty',
                 "ERROR: Invalid value of [api] port in %s: invalid literal "
                 "for int() with base 10: 'eighty'" % path),
                ('alloc-conductor', '', '[database]\nmax_retries = many',
                 'ERROR: Invalid value of [database] max_retries'),
                ('alloc-placement-api', '', '[placement_api]\nport = -3',
                 'ERROR: Invalid value of [placement_api] port'),
                ('alloc-placement-api', '',
                 '[placement]\ncandidates_deadline = -1',
                 'ERROR: Invalid value of [placement] candidates_deadline'),
                ('alloc-placement-api', '',
                 '[placement_api]\npolicy_cache_seconds = nan',
                 'ERROR: Invalid value of [placement_api] '
                 'policy_cache_seconds'),
                # A command-line option too: oslo.config says it itself.
                ('alloc-manage', 'debug = maybe', '',
                 'Invalid Boolean value: maybe')):
            output = self.run_command(command, config, after=after,
                                      args=['db', 'version'] if
                                      command == 'alloc-manage' else [])
            self.assertEqual(1, len(output.strip().splitlines()), output)
            self.assertIn(message, output)
        self.assertEqual(['alloc.conf'], os.listdir(self.state_path))

    def test_unknown_options(self):
        typos = 'auth_stratgy = http_basic\n[databse]\nconnection = x'
        # Warned about by name, the command goes on.
        output = self.run_command('alloc-manage', typos,
                                  args=['db', 'version'], status=0)
        path = os.path.join(self.state_path, 'alloc.conf')
        self.assertIn('WARNING alloc_framework.cmd.service_setup [-] '
                      'Unknown configuration [DEFAULT] auth_stratgy in %s'
                      % path, output)
        self.assertIn('Unknown configuration [databse] in %s' % path,
                      output)
        # Options of libraries and of an auth plugin are known.
        output = self.run_command(
            'alloc-manage', 'debug = false\nstrict_config = true',
            args=['db', 'version'], status=0,
            after='[database]\nmax_retries = 1\n[oslo_messaging_rabbit]\n'
                  'heartbeat_rate = 3\n[keystone_authtoken]\n'
                  'auth_type = password\nusername = alloc\n'
                  '[oslo_policy]\nenforce_new_defaults = true')
        self.assertNotIn('Unknown', output)
        # strict_config: refused, nothing started.
        output = self.run_command('alloc-server',
                                  'strict_config = true\n' + typos)
        self.assertIn('ERROR alloc_framework.cmd.service_setup [-] Unknown '
                      'configuration ([DEFAULT] auth_stratgy in %s, '
                      '[databse] in %s) and [DEFAULT] strict_config is true'
                      % (path, path), output)
        self.assertNotIn('Loaded hardware types', output)

    def test_unreachable_database(self):
        port = base.free_port()
        output = self.run_command(
            'alloc-server', '',
            after='[database]\nconnection = postgresql+psycopg2://'
                  'alloc@127.0.0.1:%d/alloc\nmax_retries = 2\n'
                  'retry_interval = 0' % port)
        lines = output.strip().splitlines()
        self.assertEqual(3, len(lines), output)
        for line in lines[:2]:
            self.assertIn('WARNING alloc_framework.cmd.service_setup', line)
            self.assertIn('Database unreachable (', line)
        self.assertIn('ERROR alloc_framework.cmd.service_setup [-] '
                      'Database unreachable after 3 attempts: ', lines[2])
        self.assertIn(str(port), lines[2])

    def test_unwritable_database_directory(self):
        # A regular file where a directory should be: no directory can be
        # made under it, whoever runs the command (root included).
        blocker = os.path.join(self.state_path, 'blocker')
        open(blocker, 'w').close()
        output = self.run_command(
            'alloc-server', '',
            after='[database]\nconnection = sqlite:///%s/sub/x.sqlite'
                  % blocker)
        self.assertIn('Cannot create the database directory', output)

    def test_port_in_use(self):
        with socket.socket() as sock:
            sock.bind(('127.0.0.1', 0))
            sock.listen()
            port = sock.getsockname()[1]
            output = self.run_command(
                'alloc-placement-api', '',
                after='[placement_api]\nhost_ip = 127.0.0.1\nport = %d'
                      % port)
        self.assertIn('ERROR', output)
        self.assertIn(str(port), output)

    def test_unknown_hardware_type(self):
        for command in ('alloc-server', 'alloc-conductor'):
            output = self.run_command(
                command, 'enabled_hardware_types = fake-hardware,nosuch')
            self.assertIn('Plugin "nosuch" of the '
                          '"alloc_framework.hardware.types" namespace could '
                          'not be loaded', output)

    def test_unknown_allocation_backend(self):
        output = self.run_command('alloc-server',
                                  '[allocation]\nbackend = nosuch')
        self.assertIn('Plugin "nosuch"', output)

    def test_unknown_rpc_transport(self):
        for command in ('alloc-server', 'alloc-api'):
            output = self.run_command(command, 'rpc_transport = nosuch')
            self.assertIn('Plugin "nosuch"', output)

    def test_bad_htpasswd_file(self):
        path = os.path.join(self.state_path, 'htpasswd')
        with open(path, 'w') as stream:
            stream.write('alice:{SHA}abcdef\n')
        for command in ('alloc-server', 'alloc-api', 'alloc-placement-api'):
            output = self.run_command(
                command, 'auth_strategy = http_basic\n'
                'http_basic_auth_user_file = %s' % path)
            self.assertIn('%s line 1: not a "user:bcrypt hash" entry'
                          % path, output)
        os.unlink(path)
        output = self.run_command(
            'alloc-server', 'auth_strategy = http_basic\n'
            'http_basic_auth_user_file = %s' % path)
        self.assertIn('Cannot read the htpasswd file %s' % path, output)
