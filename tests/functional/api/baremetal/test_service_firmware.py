"""The service provision verb (1.87) and node firmware components (1.86).

Over HTTP against the real WSGI application and an in-process conductor,
whose deferred action launcher the tests run themselves.
"""

from alloc_framework.common import states
from alloc_framework.conductor import steps
from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import deferred_action as da
from tests import base as test_base
from tests.functional.api.baremetal import base
from tests.functional.conductor import conductors

UPDATE = {'interface': 'firmware', 'step': 'update',
          'args': {'settings': [{'component': 'bmc',
                                 'url': 'http://images/bmc-3.1'}]}}


class _Base(base.BaremetalTestCase):

    def _start_conductor(self):
        # The tests launch deferred actions themselves.
        self.config(launcher_interval=0, group='deferred_actions')
        self.config(step_retries=0, group='deferred_actions')
        manager = super()._start_conductor()
        self.launcher = manager.deferred_actions
        return manager

    def _launch(self):
        self.launcher.launch(self.context)
        test_base.wait_for(lambda: self.launcher.busy == 0, 'idle launcher')

    def _provision(self, node, body, **kw):
        return self.put('/v1/nodes/%s/states/provision' % node.uuid, body,
                        **kw)


class TestFirmware(_Base):

    def test_list_after_manage_and_update(self):
        node = self.make_node(provision_state=states.ENROLL)
        path = '/v1/nodes/%s/firmware' % node.uuid
        self.assertEqual({'firmware': []},
                         self.get(path, status=200).json_body)
        self._provision(node, {'target': 'manage'}, status=202)
        conductors.wait_unlocked(self.context, node.id)
        body = self.get(path, status=200).json_body
        self.assertEqual(['bios', 'bmc'],
                         [c['component'] for c in body['firmware']])
        bmc = body['firmware'][1]
        self.assertEqual({'component', 'initial_version', 'current_version',
                          'last_version_flashed', 'vendor', 'model',
                          'serial_number', 'created_at', 'updated_at'},
                         set(bmc))
        # What the fake hardware reports of its devices (1.114).
        self.assertEqual(('Fake Vendor', 'Fake Model', 'FAKE-0001'),
                         (bmc['vendor'], bmc['model'],
                          bmc['serial_number']))
        self.assertEqual('1.0', bmc['initial_version'])
        self.assertEqual('1.0', bmc['current_version'])
        self.assertIsNone(bmc['last_version_flashed'])
        self.assertIsNone(bmc['updated_at'])
        self.assertTrue(bmc['created_at'].endswith('+00:00'))
        # A firmware update through manual cleaning.
        self._provision(node, {'target': 'clean', 'clean_steps': [UPDATE]},
                        status=202)
        conductors.wait_unlocked(self.context, node.id)
        self._launch()
        body = self.get(path, status=200).json_body
        bmc = body['firmware'][1]
        self.assertEqual(('1.0', 'bmc-3.1', 'bmc-3.1'),
                         (bmc['initial_version'], bmc['current_version'],
                          bmc['last_version_flashed']))
        self.assertIsNotNone(bmc['updated_at'])
        self.assertEqual('1.0', body['firmware'][0]['current_version'])
        # Also by name.
        named = self.make_node(name='fw-node')
        self.assertEqual({'firmware': []}, self.get(
            '/v1/nodes/fw-node/firmware', status=200).json_body)
        self.assertNotEqual(named.uuid, node.uuid)

    def test_not_found_before_1_86_and_for_unknown_nodes(self):
        node = self.make_node()
        path = '/v1/nodes/%s/firmware' % node.uuid
        self.assertError(self.get(path, version='1.85'), 404)
        self.get(path, version='1.86', status=200)
        self.assertError(self.get('/v1/nodes/nope/firmware'), 404)
        resp = self.request('POST', path, body={})
        self.assertError(resp, 405)
        self.assertEqual('GET', resp.headers['Allow'])


class TestService(_Base):

    def test_service_with_a_deferred_firmware_update(self):
        node = self.make_node(provision_state=states.ACTIVE,
                              driver_info={'fake_firmware_polls': 1})
        self._provision(node, {'target': 'service',
                               'service_steps': [UPDATE]}, status=202)
        conductors.wait_unlocked(self.context, node.id)
        shown = self.get('/v1/nodes/%s' % node.uuid, status=200).json_body
        self.assertEqual('service wait', shown['provision_state'])
        self.assertEqual('active', shown['target_provision_state'])
        self.assertEqual('update', shown['service_step']['step'])
        actions = self.get('/v1/deferred_actions?node=%s' % node.uuid,
                           status=200).json_body['deferred_actions']
        self.assertEqual(['task.driver.firmware.update'],
                         [a['call'] for a in actions])
        self._launch()
        self.assertEqual('service wait', self.get(
            '/v1/nodes/%s/states' % node.uuid,
            status=200).json_body['provision_state'])
        self._launch()
        shown = self.get('/v1/nodes/%s' % node.uuid, status=200).json_body
        self.assertEqual('active', shown['provision_state'])
        self.assertIsNone(shown['target_provision_state'])
        self.assertEqual({}, shown['service_step'])
        self.assertEqual(da.COMPLETED, objects.DeferredAction.list(
            self.context, filters={'node_id': node.id})[0].state)

    def test_verb_and_steps_gated_by_1_87(self):
        node = self.make_node(provision_state=states.ACTIVE)
        resp = self._provision(node, {'target': 'service',
                                      'service_steps': [UPDATE]},
                               version='1.86')
        self.assertError(resp, 406, 'baremetal.version_not_acceptable',
                         'service')
        resp = self._provision(node, {'target': 'clean',
                                      'service_steps': [UPDATE]},
                               version='1.86')
        self.assertError(resp, 406, 'baremetal.version_not_acceptable',
                         'service_steps')
        self.assertEqual(states.ACTIVE, objects.Node.get_by_id(
            self.context, node.id).provision_state)

    def test_hostile_service_steps_are_400_naming_the_field(self):
        node = self.make_node(provision_state=states.ACTIVE)
        shape = 'baremetal.invalid_field'
        cases = [
            ({'target': 'service'}, shape, 'service_steps'),
            ({'target': 'service', 'service_steps': None}, shape,
             'service_steps'),
            ({'target': 'service', 'service_steps': UPDATE}, shape,
             'service_steps'),
            ({'target': 'service', 'service_steps': []}, shape,
             'service_steps'),
            ({'target': 'service', 'service_steps': ['update']}, shape,
             'service_steps'),
            ({'target': 'service', 'service_steps': [
                {'interface': 'firmware'}]}, shape, 'service_steps'),
            ({'target': 'service', 'service_steps': [
                {'interface': 'firmware', 'step': 'update',
                 'args': 'bmc'}]}, shape, 'service_steps'),
            ({'target': 'active', 'service_steps': [UPDATE]}, shape,
             'service_steps'),
            # Checked by the conductor against the node's interfaces.
            ({'target': 'service', 'service_steps': [
                {'interface': 'bogus', 'step': 'update'}]}, None,
             'service_steps[0]: service step update of interface bogus'),
            ({'target': 'service', 'service_steps': [
                {'interface': 'deploy', 'step': 'erase_devices'}]}, None,
             'service_steps[0]'),
            ({'target': 'service', 'service_steps': [
                {'interface': 'firmware', 'step': 'update'}]}, None,
             'service_steps[0].args: step update requires the '
             'argument(s) settings'),
            ({'target': 'service', 'service_steps': [
                {'interface': 'firmware', 'step': 'update',
                 'args': {'settings': [], 'speed': 'fast'}}]}, None,
             'does not accept the argument(s) speed'),
            ({'target': 'service', 'service_steps': [
                {'interface': 'firmware', 'step': 'update',
                 'args': {'settings': [{'component': 'bmc',
                                        'url': 7}]}}]}, None,
             'service_steps[0]: args.settings[0]'),
        ]
        for body, code, message in cases:
            resp = self._provision(node, body)
            self.assertError(resp, 400, code, message)
        node = objects.Node.get_by_id(self.context, node.id)
        self.assertEqual(states.ACTIVE, node.provision_state)
        self.assertIsNone(node.reservation)
        self.assertEqual([], objects.DeferredAction.list(
            self.context, filters={'node_id': node.id}))

    def test_service_of_a_node_not_active_is_400(self):
        node = self.make_node(provision_state=states.MANAGEABLE)
        resp = self._provision(node, {'target': 'service',
                                      'service_steps': [UPDATE]})
        self.assertError(resp, 400, None, 'service')

    def test_abort_while_waiting_for_the_action(self):
        node = self.make_node(provision_state=states.ACTIVE)
        self._provision(node, {'target': 'service',
                               'service_steps': [UPDATE]}, status=202)
        conductors.wait_unlocked(self.context, node.id)
        self._provision(node, {'target': 'abort'}, status=202)
        shown = self.get('/v1/nodes/%s' % node.uuid, status=200).json_body
        self.assertEqual('service failed', shown['provision_state'])
        self._launch()
        shown = self.get('/v1/nodes/%s' % node.uuid, status=200).json_body
        self.assertEqual('service failed', shown['provision_state'])
        self.assertNotIn(steps.WAITING_ACTION,
                         shown['driver_internal_info'])
        # service failed --abort--> active.
        self._provision(node, {'target': 'abort'}, status=202)
        shown = self.get('/v1/nodes/%s' % node.uuid, status=200).json_body
        self.assertEqual('active', shown['provision_state'])

    def test_filter_by_new_states(self):
        self.make_node(provision_state=states.SERVICEFAIL)
        body = self.get('/v1/nodes?provision_state=service%20failed',
                        status=200).json_body
        self.assertEqual(1, len(body['nodes']))
