"""``alloc baremetal node service`` and ``... node firmware list|update``.

Against the real API and a conductor whose launcher runs the deferred
firmware updates, as in ``alloc-server``.
"""

import io
import json

from alloc_framework.cli import shell
from tests.functional.cli import base


class TestServiceAndFirmwareCommands(base.BaremetalCLITestCase):

    def configure(self):
        super().configure()
        self.config(launcher_interval=0.1, group='deferred_actions')

    def _node(self, name, *extra):
        self.alloc('baremetal', 'node', 'create', '--driver',
                   'fake-hardware', '--name', name, *extra)
        self.alloc('baremetal', 'node', 'manage', name, '--wait', '30',
                   fmt=None)

    def _show(self, name):
        return self.alloc('baremetal', 'node', 'show', name)

    def _firmware(self, name):
        return {c['component']: (c['initial_version'], c['current_version'],
                                 c['last_version_flashed'])
                for c in self.alloc('baremetal', 'node', 'firmware', 'list',
                                    name)}

    def test_firmware_list_after_manage(self):
        self._node('node-0')
        listed = self.alloc('baremetal', 'node', 'firmware', 'list',
                            'node-0')
        self.assertEqual(['bios', 'bmc'], [c['component'] for c in listed])
        self.assertEqual({'component', 'initial_version', 'current_version',
                          'last_version_flashed', 'created_at',
                          'updated_at'}, set(listed[0]))
        self.assertEqual({'bios': ('1.0', '1.0', None),
                          'bmc': ('1.0', '1.0', None)},
                         self._firmware('node-0'))
        # --long adds what the hardware says each component is (1.114).
        long = self.alloc('baremetal', 'node', 'firmware', 'list',
                          'node-0', '--long')
        self.assertEqual({'component', 'initial_version', 'current_version',
                          'last_version_flashed', 'vendor', 'model',
                          'serial_number', 'created_at', 'updated_at'},
                         set(long[0]))
        err = self.alloc_fails('--os-baremetal-api-version', '1.113',
                               'baremetal', 'node', 'firmware', 'list',
                               'node-0', '--long')
        self.assertIn('--long requires --os-baremetal-api-version 1.114',
                      err)

    def test_firmware_update_of_a_manageable_node_cleans_it(self):
        self._node('node-1', '--driver-info', 'fake_firmware_polls=2')
        result = self.alloc('baremetal', 'node', 'firmware', 'update',
                            'node-1', '--component',
                            'bmc=http://images/bmc-5.0', '--component',
                            'bios=http://images/bios-2.2', '--wait', '60',
                            fmt=None)
        self.assertIn('Node node-1 is manageable: updating bmc, bios by '
                      'cleaning it.', result.out)
        node = self._show('node-1')
        self.assertEqual('manageable', node['provision_state'])
        self.assertEqual({'bios': ('1.0', 'bios-2.2', 'bios-2.2'),
                          'bmc': ('1.0', 'bmc-5.0', 'bmc-5.0')},
                         self._firmware('node-1'))
        actions = self.alloc('baremetal', 'action', 'list', '--node',
                             'node-1', '--long')
        self.assertEqual([('COMPLETED', 'task.driver.firmware.update')],
                         [(a['state'], a['call']) for a in actions])

    def test_firmware_update_of_an_active_node_services_it(self):
        self._node('node-2')
        self.alloc('baremetal', 'node', 'provide', 'node-2', '--wait', '30',
                   fmt=None)
        self.alloc('baremetal', 'node', 'deploy', 'node-2', '--wait', '30',
                   fmt=None)
        result = self.alloc('baremetal', 'node', 'firmware', 'update',
                            'node-2', '--component',
                            'bmc=http://images/bmc-6.1', '--wait', '60',
                            fmt=None)
        self.assertIn('Node node-2 is active: updating bmc by servicing '
                      'it.', result.out)
        node = self._show('node-2')
        self.assertEqual('active', node['provision_state'])
        self.assertEqual({}, node['service_step'])
        self.assertEqual(('1.0', 'bmc-6.1', 'bmc-6.1'),
                         self._firmware('node-2')['bmc'])

    def test_firmware_update_refused_in_other_states(self):
        self.alloc('baremetal', 'node', 'create', '--driver',
                   'fake-hardware', '--name', 'node-3')
        err = self.alloc_fails('baremetal', 'node', 'firmware', 'update',
                               'node-3', '--component', 'bmc=http://x/y')
        self.assertIn('Node node-3 is enroll', err)
        err = self.alloc_fails('baremetal', 'node', 'firmware', 'update',
                               'node-3', '--component', 'bmc')
        self.assertIn('--component takes <component>=<url>', err)

    def test_service_with_steps_from_a_file(self):
        self._node('node-4')
        self.alloc('baremetal', 'node', 'provide', 'node-4', '--wait', '30',
                   fmt=None)
        self.alloc('baremetal', 'node', 'deploy', 'node-4', '--wait', '30',
                   fmt=None)
        path = self.state_path + '/steps.json'
        with open(path, 'w') as f:
            json.dump([{'interface': 'firmware', 'step': 'update',
                        'args': {'settings': [
                            {'component': 'bios',
                             'url': 'http://images/bios-9'}]}}], f)
        self.alloc('baremetal', 'node', 'service', 'node-4',
                   '--service-steps', path, '--wait', '60', fmt=None)
        self.assertEqual('active', self._show('node-4')['provision_state'])
        self.assertEqual(('1.0', 'bios-9', 'bios-9'),
                         self._firmware('node-4')['bios'])

    def test_service_errors(self):
        self._node('node-5')
        err = self.alloc_fails('baremetal', 'node', 'service', 'node-5',
                               '--service-steps', '{not json')
        self.assertIn('--service-steps is not valid JSON', err)
        # A manageable node cannot be serviced.
        err = self.alloc_fails(
            'baremetal', 'node', 'service', 'node-5', '--service-steps',
            '[{"interface": "firmware", "step": "update", "args": '
            '{"settings": [{"component": "bmc", "url": "http://x"}]}}]')
        self.assertIn('(HTTP 400)', err)
        self.assertIn('manageable', err)

    def test_failed_update_is_reported_by_wait(self):
        self._node('node-6', '--driver-info', 'fake_fail_firmware=true')
        self.alloc('baremetal', 'node', 'provide', 'node-6', '--wait', '30',
                   fmt=None)
        self.alloc('baremetal', 'node', 'deploy', 'node-6', '--wait', '30',
                   fmt=None)
        self.config(step_retries=0, group='deferred_actions')
        result = self.alloc('baremetal', 'node', 'firmware', 'update',
                            'node-6', '--component', 'bmc=http://x/y',
                            '--wait', '60', fmt=None, expect=1)
        self.assertIn('updating bmc by servicing it', result.out)
        self.assertIn('provision state service failed', result.err)
        self.assertIn('task.driver.firmware.update', result.err)
        self.assertNotIn('Traceback', result.err)

    def test_partly_failed_update_shows_what_was_flashed(self):
        self._node('node-7', '--driver-info',
                   'fake_fail_firmware_component=bios')
        self.config(step_retries=0, group='deferred_actions')
        result = self.alloc('baremetal', 'node', 'firmware', 'update',
                            'node-7', '--component',
                            'bmc=http://images/bmc-7.0', '--component',
                            'bios=http://images/bios-3.0', '--wait', '60',
                            fmt=None, expect=1)
        self.assertIn('fake_fail_firmware_component', result.err)
        self.assertEqual('clean failed',
                         self._show('node-7')['provision_state'])
        # The BMC was flashed before the BIOS failed: its new version is
        # shown, the BIOS keeps its own.
        self.assertEqual({'bios': ('1.0', '1.0', None),
                          'bmc': ('1.0', 'bmc-7.0', 'bmc-7.0')},
                         self._firmware('node-7'))


class _Terminal(io.StringIO):
    """Standard error as a terminal: ``--wait`` shows its progress."""

    def isatty(self):
        return True


class TestWaitProgress(base.BaremetalCLITestCase):

    def configure(self):
        super().configure()
        self.config(launcher_interval=0.1, group='deferred_actions')

    def run_on_terminal(self, *argv):
        out, err = io.StringIO(), _Terminal()
        code = shell.main(list(argv), stdout=out, stderr=err)
        self.assertEqual(0, code, err.getvalue())
        return out.getvalue(), err.getvalue()

    def test_firmware_update_progress_on_a_terminal_only(self):
        self.alloc('baremetal', 'node', 'create', '--driver',
                   'fake-hardware', '--name', 'n1', '--driver-info',
                   'fake_firmware_polls=3', '--driver-info',
                   'fake_firmware_poll_delay=0.5')
        self.alloc('baremetal', 'node', 'manage', 'n1', '--wait', '30',
                   fmt=None)
        out, err = self.run_on_terminal(
            'baremetal', 'node', 'firmware', 'update', 'n1', '--component',
            'bmc=http://images/bmc-2.0', '--wait', '60')
        self.assertIn('updating bmc by cleaning it', out)
        lines = [line for line in err.split('\r') if 'Node n1:' in line]
        self.assertTrue(lines, err)
        # The node's states, the deferred action and the time spent.
        self.assertIn('Node n1: clean wait -> manageable', err)
        self.assertIn('firmware bmc: action ', err)
        self.assertIn('retries left, rescheduled ', err)
        self.assertRegex(err, r'\d+s elapsed')
        self.assertTrue(err.endswith('\n'))

        # Not on a terminal (the test base's StringIO): nothing.
        result = self.alloc('baremetal', 'node', 'firmware', 'update', 'n1',
                            '--component', 'bmc=http://images/bmc-3.0',
                            '--wait', '60', fmt=None)
        self.assertNotIn('elapsed', result.err)

    def test_machine_formats_stay_quiet(self):
        self.alloc('baremetal', 'node', 'create', '--driver',
                   'fake-hardware', '--name', 'n2', '--resource-class',
                   'gold')
        self.alloc('baremetal', 'node', 'manage', 'n2', '--wait', '30',
                   fmt=None)
        self.alloc('baremetal', 'node', 'provide', 'n2', '--wait', '30',
                   fmt=None)
        out, err = self.run_on_terminal(
            'baremetal', 'allocation', 'create', '--resource-class', 'gold',
            '--wait', '30', '-f', 'json')
        self.assertEqual('active', json.loads(out)['state'])
        self.assertNotIn('elapsed', err)
