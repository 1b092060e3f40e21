"""``alloc-server`` as operators run it: hardware types enabled in one
line, and ``/healthcheck`` on both APIs for load balancers.

The real console script, started with a configuration file and stopped
with SIGTERM.
"""

import base64
import json
import os
import signal
import subprocess
import sys

import bcrypt
from testtools import content

from tests import base

ALICE = {'Authorization': 'Basic ' + base64.b64encode(
    b'alice:secret').decode()}


class ServerOperationsTestCase(base.TestCase):
    # Configuration and HTTP; the server uses SQLite whatever the run.
    dialect_neutral = True

    def write_config(self, text):
        path = os.path.join(self.state_path, 'alloc.conf')
        with open(path, 'w') as stream:
            stream.write('[DEFAULT]\nstate_path = %s\nhost = ops-test\n%s'
                         % (self.state_path, text))
        return path

    def command(self, config):
        exe = os.path.join(os.path.dirname(sys.executable), 'alloc-server')
        if not os.path.exists(exe):
            self.skipTest('alloc-server console script not installed')
        env = dict(os.environ)
        env.pop('OS_TEST_TIMEOUT', None)
        return [exe, '--config-file', config], env

    def test_hardware_types_in_one_line_and_health_checks(self):
        users = os.path.join(self.state_path, 'htpasswd')
        with open(users, 'w') as stream:
            stream.write('alice:%s\n' % bcrypt.hashpw(
                b'secret', bcrypt.gensalt(rounds=4)).decode())
        drain = os.path.join(self.state_path, 'drain')
        bm_port, pl_port = base.free_port(), base.free_port()
        # No enabled_<kind>_interfaces at all.
        config = self.write_config(
            'enabled_hardware_types = fake-hardware,redfish,ipmi\n'
            'auth_strategy = http_basic\n'
            'http_basic_auth_user_file = %s\n'
            '[api]\nport = %d\n[placement_api]\nport = %d\n'
            '[healthcheck]\nbackends = disable_by_file\n'
            'disable_by_file_path = %s\n' % (users, bm_port, pl_port, drain))
        argv, env = self.command(config)
        log = open(os.path.join(self.state_path, 'server.log'), 'w+')
        self.addCleanup(log.close)

        def output():
            log.seek(0)
            return log.read()
        self.addOnException(lambda exc_info: self.addDetail(
            'server output', content.text_content(output())))
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                env=env)

        def kill():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        self.addCleanup(kill)
        checks = ['http://127.0.0.1:%d/healthcheck' % port
                  for port in (bm_port, pl_port)]

        def healthy():
            if proc.poll() is not None:
                self.fail('alloc-server exited (%s)' % proc.returncode)
            try:
                return all(base.http_request(url)[0] == 200 for url in checks)
            except OSError:
                return False
        # Without credentials, though every other path needs them.
        base.wait_for(healthy, 'both health checks', timeout=90,
                      interval=0.2)
        bm = 'http://127.0.0.1:%d' % bm_port
        self.assertEqual(401, base.http_request(bm + '/v1/nodes')[0])
        self.assertEqual(401, base.http_request(
            'http://127.0.0.1:%d/resource_providers' % pl_port)[0])

        # Each enabled type came with its interfaces.
        for driver in ('redfish', 'ipmi'):
            status, text = base.http_request(
                bm + '/v1/nodes', 'POST', {'driver': driver},
                dict(ALICE, **{'X-OpenStack-Ironic-API-Version': 'latest'}))
            self.assertEqual(201, status, text)
            node = json.loads(text)
            self.assertEqual(driver, node['power_interface'])
            self.assertEqual(driver, node['firmware_interface'])

        # Draining: both APIs answer 503 while the file exists.
        open(drain, 'w').close()
        for url in checks:
            self.assertEqual((503, 'DISABLED BY FILE'), base.http_request(url))
        os.unlink(drain)
        for url in checks:
            self.assertEqual(200, base.http_request(url)[0])

        proc.send_signal(signal.SIGTERM)
        self.assertEqual(0, proc.wait(timeout=60), output())
        self.assertNotIn('Traceback', output())

    def test_restriction_leaving_a_type_without_interface(self):
        config = self.write_config(
            'enabled_hardware_types = fake-hardware,redfish\n'
            'enabled_power_interfaces = fake\n'
            '[api]\nport = 0\n[placement_api]\nport = 0\n')
        argv, env = self.command(config)
        proc = subprocess.run(argv, capture_output=True, text=True,
                              timeout=120, env=env)
        output = proc.stdout + proc.stderr
        self.assertEqual(1, proc.returncode, output)
        self.assertNotIn('Traceback', output)
        self.assertIn('Plugin "redfish" of the '
                      '"alloc_framework.hardware.types" namespace could not '
                      'be loaded: none of its power interfaces (redfish) is '
                      'enabled: [DEFAULT]enabled_power_interfaces = fake.',
                      output)
