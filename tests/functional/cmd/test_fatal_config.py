"""A configuration that can never work stops the console script at once.

The launcher runs services in child processes and starts a child again
whenever it dies: a fatal configuration error must stop the command with
its message and a non-zero status instead of forking forever.
"""

import os
import subprocess
import sys

from tests import base


class FatalConfigTestCase(base.TestCase):
    # Configuration checks: the database is never reached.
    dialect_neutral = True

    def run_command(self, command, config):
        path = os.path.join(self.state_path, 'alloc.conf')
        with open(path, 'w') as stream:
            stream.write('[DEFAULT]\nstate_path = %s\nhost = fatal-test\n'
                         '%s\n[api]\nport = 0\n[placement_api]\nport = 0\n'
                         % (self.state_path, config))
        exe = os.path.join(os.path.dirname(sys.executable), command)
        if not os.path.exists(exe):
            self.skipTest('%s console script not installed' % command)
        env = dict(os.environ)
        env.pop('OS_TEST_TIMEOUT', None)
        proc = subprocess.run([exe, '--config-file', path],
                              capture_output=True, text=True, timeout=120,
                              env=env)
        output = proc.stdout + proc.stderr
        self.assertEqual(1, proc.returncode, output)
        self.assertNotIn('Forking too fast', output)
        self.assertNotIn('Traceback', output)
        return output

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
