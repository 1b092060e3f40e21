"""The sample configuration generates with every namespace of tox.ini."""

import os
import subprocess
import sys

from tests import base

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


class TestGenConfig(base.TestCase):

    def test_generator_runs_with_foreign_namespaces_first(self):
        # oslo.messaging's options select oslo.service's eventlet backend
        # when they load before ours; generating the sample must still
        # work (tox -e genconfig).
        out = os.path.join(self.state_path, 'sample.conf')
        exe = os.path.join(os.path.dirname(sys.executable),
                           'oslo-config-generator')
        proc = subprocess.run(
            [exe, '--config-file', os.path.join(
                ROOT, 'etc', 'oslo-config-generator', 'alloc_framework.conf'),
             '--output-file', out],
            capture_output=True, text=True, timeout=120)
        self.assertEqual(0, proc.returncode, proc.stderr)
        with open(out) as f:
            sample = f.read()
        for section in ('[api]', '[placement_api]', '[conductor]',
                        '[allocation]', '[database]', '[keystone_authtoken]'):
            self.assertIn(section, sample)
