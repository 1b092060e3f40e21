"""osc-placement's allocation and usage commands against a real server.

The ``openstack`` command runs in-process (``tests.functional.
openstack_client``) with the server's URL as endpoint and the noauth
admin token, as an operator would run it.
"""

import json
import uuid

import requests

from alloc_framework.api.placement import deploy
from tests import base
from tests.functional import openstack_client


class OscAllocationsTestCase(base.DBTestCase):
    # A real client over HTTP: its SQL is the API's, tested elsewhere.
    dialect_neutral = True

    def setUp(self):
        super().setUp()
        self.conf([], project='alloc_framework', default_config_files=[])
        self.config(auth_strategy='noauth', group='placement_api')
        self.url = self.useFixture(
            base.Server(deploy.loadapp(self.conf))).url
        headers = {'x-auth-token': 'admin',
                   'openstack-api-version': 'placement latest'}
        resp = requests.post(self.url + '/resource_providers',
                             json={'name': 'cn1'}, headers=headers,
                             timeout=60)
        self.assertEqual(200, resp.status_code, resp.text)
        self.rp = resp.json()['uuid']
        resp = requests.put(
            self.url + '/resource_providers/%s/inventories' % self.rp,
            json={'resource_provider_generation': 0,
                  'inventories': {'VCPU': {'total': 8},
                                  'MEMORY_MB': {'total': 4096}}},
            headers=headers, timeout=60)
        self.assertEqual(200, resp.status_code, resp.text)
        self.openstack = self.useFixture(openstack_client.OpenStackClient(
            '--os-auth-type', 'admin_token', '--os-token', 'admin',
            '--os-endpoint', self.url))

    def osc(self, version, *args, expect_ok=True):
        proc = self.openstack.run('--os-placement-api-version', version,
                                  *args)
        if expect_ok:
            self.assertEqual(0, proc.returncode, '%s\n%s\n%s' % (
                ' '.join(args), proc.stdout, proc.stderr))
        else:
            self.assertNotEqual(0, proc.returncode, proc.stdout)
        return proc

    def test_allocation_commands(self):
        consumer = str(uuid.uuid4())
        project, user = str(uuid.uuid4()), str(uuid.uuid4())
        out = self.osc(
            '1.38', 'resource', 'provider', 'allocation', 'set', consumer,
            '--allocation', 'rp=%s,VCPU=2,MEMORY_MB=512' % self.rp,
            '--project-id', project, '--user-id', user,
            '--consumer-type', 'INSTANCE', '-f', 'json').stdout
        rows = json.loads(out)
        self.assertEqual(1, len(rows))
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 512}, rows[0]['resources'])
        self.assertEqual('INSTANCE', rows[0]['consumer_type'])

        # The command reads the consumer generation first (1.28+), so a
        # second set replaces the allocations.
        out = self.osc('1.38', 'resource', 'provider', 'allocation', 'set',
                       consumer, '--allocation', 'rp=%s,VCPU=3' % self.rp,
                       '--project-id', project, '--user-id', user,
                       '--consumer-type', 'INSTANCE', '-f', 'json').stdout
        self.assertEqual({'VCPU': 3}, json.loads(out)[0]['resources'])

        # osc-placement prints the 1.9 shape (not grouped by type).
        out = self.osc('1.9', 'resource', 'usage', 'show', project,
                       '-f', 'json').stdout
        self.assertEqual({'VCPU': 3},
                         {r['resource_class']: r['usage']
                          for r in json.loads(out)})
        out = self.osc('1.9', 'resource', 'provider', 'usage', 'show',
                       self.rp, '-f', 'json').stdout
        self.assertEqual({'VCPU': 3, 'MEMORY_MB': 0},
                         {r['resource_class']: r['usage']
                          for r in json.loads(out)})

        # Over capacity: the command fails with the server's message.
        proc = self.osc('1.38', 'resource', 'provider', 'allocation', 'set',
                        consumer, '--allocation', 'rp=%s,VCPU=9' % self.rp,
                        '--project-id', project, '--user-id', user,
                        '--consumer-type', 'INSTANCE', expect_ok=False)
        self.assertIn('Unable to allocate inventory', proc.stderr)

        self.osc('1.38', 'resource', 'provider', 'allocation', 'delete',
                 consumer)
        out = self.osc('1.38', 'resource', 'provider', 'allocation', 'show',
                       consumer, '-f', 'json').stdout
        self.assertEqual([], json.loads(out))
