"""The unmodified osc-placement client against a real server.

``openstack resource provider ...`` runs against the server's URL as the
endpoint (no identity service), as an operator would run it: in-process
(``tests.functional.openstack_client``), and once as the real executable.
"""

import json
import os
import subprocess
import sys
import uuid

from alloc_framework.api.placement import deploy
from tests import base
from tests.functional import openstack_client

OPENSTACK = os.path.join(os.path.dirname(sys.executable), 'openstack')


class OscPlacementTestCase(base.DBTestCase):
    # A real client over HTTP: its SQL is the API's, tested elsewhere.
    dialect_neutral = True

    def setUp(self):
        super().setUp()
        self.conf([], project='alloc_framework', default_config_files=[])
        self.config(auth_strategy='noauth', group='placement_api')
        self.url = self.useFixture(
            base.Server(deploy.loadapp(self.conf))).url
        self.openstack = self.useFixture(openstack_client.OpenStackClient())

    def base_cmd(self, version, auth=('--os-auth-type', 'none')):
        # Exactly how operators call it against the embedded default:
        # keystoneauth's none plugin sends the token "notused", which
        # [placement_api]noauth_admin_tokens makes the admin user.
        return [OPENSTACK] + list(auth) + [
            '--os-endpoint', self.url,
            '--os-placement-api-version', version]

    def run_osc(self, args, version):
        """Run the OpenStack client in-process: (exit code, out, err)."""
        return self.openstack.run(*self.base_cmd(version)[1:], *args)

    def osc(self, *args, version='1.39', parse=True):
        if parse:
            args += ('-f', 'json')
        code, out, err = self.run_osc(args, version)
        self.assertEqual(0, code, '%s\nstdout: %s\nstderr: %s'
                         % (' '.join(args), out, err))
        return json.loads(out) if parse and out else None

    def osc_fails(self, *args, version='1.39'):
        code, out, err = self.run_osc(args, version)
        self.assertNotEqual(0, code, out)
        return err

    def test_executable(self):
        """The real ``openstack`` executable, at an old microversion.

        Before 1.20 the create response has no body: the client follows
        its Location header. The listing runs in-process: every start of
        the executable costs seconds.
        """
        if not os.path.exists(OPENSTACK):
            self.skipTest('python-openstackclient is not installed')
        env = {k: v for k, v in os.environ.items()
               if not k.startswith('OS_')}
        # Upstream's own noauth convention: the token names the user.
        proc = subprocess.run(
            self.base_cmd('1.0', auth=('--os-auth-type', 'admin_token',
                                       '--os-token', 'admin'))
            + ['resource', 'provider', 'create', 'old', '-f', 'json'],
            capture_output=True, text=True, env=env, timeout=300)
        self.assertEqual(0, proc.returncode, proc.stderr)
        created = json.loads(proc.stdout)
        self.assertEqual('old', created['name'])
        self.assertEqual([created['uuid']],
                         [p['uuid'] for p in self.osc(
                             'resource', 'provider', 'list', version='1.0')])

    def test_provider_lifecycle(self):
        parent = self.osc('resource', 'provider', 'create', 'parent')
        self.assertEqual('parent', parent['name'])
        self.assertEqual(0, parent['generation'])
        child_uuid = str(uuid.uuid4())
        child = self.osc('resource', 'provider', 'create', 'child',
                         '--uuid', child_uuid,
                         '--parent-provider', parent['uuid'])
        self.assertEqual(child_uuid, child['uuid'])
        self.assertEqual(parent['uuid'], child['parent_provider_uuid'])
        self.assertEqual(parent['uuid'], child['root_provider_uuid'])

        listed = self.osc('resource', 'provider', 'list')
        self.assertEqual({'parent', 'child'}, {p['name'] for p in listed})
        listed = self.osc('resource', 'provider', 'list', '--name', 'child')
        self.assertEqual([child_uuid], [p['uuid'] for p in listed])
        listed = self.osc('resource', 'provider', 'list', '--in-tree',
                          child_uuid)
        self.assertEqual(2, len(listed))

        shown = self.osc('resource', 'provider', 'show', child_uuid)
        self.assertEqual('child', shown['name'])
        renamed = self.osc('resource', 'provider', 'set', child_uuid,
                           '--name', 'renamed')
        self.assertEqual('renamed', renamed['name'])

        # The parent cannot go while it has a child.
        err = self.osc_fails('resource', 'provider', 'delete',
                             parent['uuid'])
        self.assertIn('child', err)
        self.osc('resource', 'provider', 'delete', child_uuid, parse=False)
        self.osc('resource', 'provider', 'delete', parent['uuid'],
                 parse=False)
        self.assertEqual([], self.osc('resource', 'provider', 'list'))

    def test_inventory(self):
        rp = self.osc('resource', 'provider', 'create', 'cn')['uuid']
        rows = self.osc('resource', 'provider', 'inventory', 'set', rp,
                        '--resource', 'VCPU=8',
                        '--resource', 'VCPU:allocation_ratio=16.0',
                        '--resource', 'MEMORY_MB=1024',
                        '--resource', 'MEMORY_MB:reserved=512')
        by_class = {r['resource_class']: r for r in rows}
        self.assertEqual(8, by_class['VCPU']['total'])
        self.assertEqual(16.0, by_class['VCPU']['allocation_ratio'])
        self.assertEqual(512, by_class['MEMORY_MB']['reserved'])

        listed = self.osc('resource', 'provider', 'inventory', 'list', rp)
        self.assertEqual({'VCPU', 'MEMORY_MB'},
                         {r['resource_class'] for r in listed})
        one = self.osc('resource', 'provider', 'inventory', 'show', rp,
                       'VCPU')
        self.assertEqual(8, one['total'])
        one = self.osc('resource', 'provider', 'inventory', 'class', 'set',
                       rp, 'VCPU', '--total', '4')
        self.assertEqual(4, one['total'])

        self.osc('resource', 'provider', 'inventory', 'delete', rp,
                 '--resource-class', 'MEMORY_MB', parse=False)
        listed = self.osc('resource', 'provider', 'inventory', 'list', rp)
        self.assertEqual(['VCPU'], [r['resource_class'] for r in listed])
        self.osc('resource', 'provider', 'inventory', 'delete', rp,
                 parse=False)
        self.assertEqual([], self.osc('resource', 'provider', 'inventory',
                                      'list', rp))

    def test_traits_and_aggregates(self):
        rp = self.osc('resource', 'provider', 'create', 'cn2')['uuid']
        self.osc('trait', 'create', 'CUSTOM_FAST', parse=False)
        rows = self.osc('resource', 'provider', 'trait', 'set', rp,
                        '--trait', 'CUSTOM_FAST',
                        '--trait', 'HW_CPU_X86_AVX')
        self.assertEqual({'CUSTOM_FAST', 'HW_CPU_X86_AVX'},
                         {r['name'] for r in rows})
        rows = self.osc('resource', 'provider', 'trait', 'list', rp)
        self.assertEqual({'CUSTOM_FAST', 'HW_CPU_X86_AVX'},
                         {r['name'] for r in rows})
        listed = self.osc('resource', 'provider', 'list', '--required',
                          'CUSTOM_FAST')
        self.assertEqual([rp], [p['uuid'] for p in listed])
        self.osc('resource', 'provider', 'trait', 'delete', rp, parse=False)
        self.assertEqual([], self.osc('resource', 'provider', 'trait',
                                      'list', rp))

        agg = str(uuid.uuid4())
        rows = self.osc('resource', 'provider', 'aggregate', 'set', rp,
                        '--aggregate', agg, '--generation', '2')
        self.assertEqual([agg], [r['uuid'] for r in rows])
        rows = self.osc('resource', 'provider', 'aggregate', 'list', rp)
        self.assertEqual([agg], [r['uuid'] for r in rows])
        listed = self.osc('resource', 'provider', 'list', '--member-of',
                          agg)
        self.assertEqual([rp], [p['uuid'] for p in listed])

    def test_allocation_candidates(self):
        rp = self.osc('resource', 'provider', 'create', 'cn3')['uuid']
        self.osc('resource', 'provider', 'inventory', 'set', rp,
                 '--resource', 'VCPU=8', '--resource', 'MEMORY_MB=1024')
        self.osc('resource', 'provider', 'trait', 'set', rp,
                 '--trait', 'HW_CPU_X86_AVX')
        rows = self.osc('allocation', 'candidate', 'list',
                        '--resource', 'VCPU=2', '--resource', 'MEMORY_MB=64',
                        '--required', 'HW_CPU_X86_AVX', '--limit', '5')
        self.assertEqual(1, len(rows))
        self.assertEqual(rp, rows[0]['resource provider'])
        self.assertEqual({'VCPU=2', 'MEMORY_MB=64'},
                         set(rows[0]['allocation'].split(',')))
        self.assertEqual({'VCPU=0/8', 'MEMORY_MB=0/1024'},
                         set(rows[0]['inventory used/capacity'].split(',')))
        self.assertEqual('HW_CPU_X86_AVX', rows[0]['traits'])
        # The list form of 1.10.
        rows = self.osc('allocation', 'candidate', 'list',
                        '--resource', 'VCPU=2', version='1.10')
        self.assertEqual([rp], [r['resource provider'] for r in rows])
        # Granular groups, isolated: one provider cannot serve both.
        rows = self.osc('allocation', 'candidate', 'list',
                        '--group', '1', '--resource', 'VCPU=1',
                        '--group', '2', '--resource', 'VCPU=1',
                        '--group-policy', 'isolate')
        self.assertEqual([], rows)
        rows = self.osc('allocation', 'candidate', 'list',
                        '--group', '1', '--resource', 'VCPU=1',
                        '--group', '2', '--resource', 'VCPU=1')
        self.assertEqual([rp], [r['resource provider'] for r in rows])
        self.assertEqual({'VCPU=2'}, {r['allocation'] for r in rows})
