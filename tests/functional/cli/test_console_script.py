"""The installed ``alloc`` console script, run as a separate process."""

import json

from tests.functional.cli import base


class TestConsoleScript(base.PlacementCLITestCase):

    def run_alloc(self, *argv):
        return self.run_script(*argv)

    def test_success_and_failure_exit_codes(self):
        proc = self.run_alloc('trait', 'create', 'CUSTOM_SCRIPT')
        self.assertEqual(0, proc.returncode, proc.stderr)
        proc = self.run_alloc('trait', 'list', '--name',
                              'startswith:CUSTOM_', '-f', 'json')
        self.assertEqual(0, proc.returncode, proc.stderr)
        self.assertEqual([{'name': 'CUSTOM_SCRIPT'}], json.loads(proc.stdout))

        proc = self.run_alloc('resource', 'provider', 'show',
                              '7a1d3b40-30ec-4c4e-8c43-7f3e7d1b8b0e')
        self.assertEqual(1, proc.returncode)
        self.assertEqual('', proc.stdout)
        self.assertIn('(HTTP 404)', proc.stderr)
        self.assertNotIn('Traceback', proc.stderr)

    def test_complete_prints_a_bash_completion_script(self):
        # As doc/source/cli.rst documents it.
        proc = self.run_alloc('complete')
        self.assertEqual(0, proc.returncode, proc.stderr)
        self.assertIn('_alloc()', proc.stdout)
        self.assertIn('complete -F _alloc alloc', proc.stdout)
        self.assertIn("cmds_baremetal_node='", proc.stdout)
        proc = self.run_alloc('complete', '--shell', 'none')
        self.assertEqual(0, proc.returncode, proc.stderr)
        self.assertIn("cmds_resource_provider='", proc.stdout)
