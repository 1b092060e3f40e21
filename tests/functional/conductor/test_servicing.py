"""Servicing, and clean or service steps that run as deferred actions.

On a real database: the ``service`` flow of an active node, the step
runner shared with cleaning, deferrable steps (the fake firmware update)
that become deferred actions whose end moves the flow on, and the wait
time-outs that leave a node waiting for a live action alone.
"""

import datetime
from unittest import mock

from alloc_framework.common import exception
from alloc_framework.common import states
from alloc_framework.conductor import provisioning
from alloc_framework.conductor import steps
from alloc_framework.db import api as db_api
from alloc_framework.db.sqlalchemy import models
from alloc_framework.drivers import base as drivers_base
from alloc_framework.drivers.modules import fake
from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import base as obj_base
from alloc_framework.objects.baremetal import deferred_action as da
from tests import base as test_base
from tests.functional.conductor import base
from tests.functional.conductor import conductors

UPDATE = {'interface': 'firmware', 'step': 'update',
          'args': {'settings': [{'component': 'bmc',
                                 'url': 'http://images/bmc-2.0'}]}}


class ServiceDeploy(fake.FakeDeploy):
    """Service steps of every kind: synchronous, failing, waiting."""

    @drivers_base.service_step(argsinfo={'note': {'description': 'Kept.',
                                                  'required': True}})
    def write_note(self, task, note):
        info = dict(task.node.driver_internal_info)
        info['notes'] = info.get('notes', []) + [note]
        task.node.driver_internal_info = info

    @drivers_base.service_step()
    def explode(self, task):
        raise exception.InstanceDeployFailure(reason='the disk caught fire')

    @drivers_base.service_step()
    def wait_for_agent(self, task):
        return states.SERVICEWAIT


class _Base(base.ConductorTestCase):

    def setUp(self):
        super().setUp()
        self.restart_with_deploy(ServiceDeploy())

    def _node(self, state=states.ACTIVE, **kw):
        return self.make_node(provision_state=state, **kw)

    def _act(self, node, action, **kw):
        self.rpc.do_provisioning_action(self.ctx, node.id, action, **kw)
        return conductors.wait_unlocked(self.ctx, node.id)

    def _launch(self):
        # As the periodic: with the conductor's context, not the one of
        # the request that created the actions.
        report = self.launcher.launch(self.manager.context)
        test_base.wait_for(lambda: self.launcher.busy == 0, 'idle launcher')
        return report

    def _actions(self, node):
        return objects.DeferredAction.list(self.ctx,
                                           filters={'node_id': node.id})

    def _get(self, node):
        return objects.Node.get_by_id(self.ctx, node.id)

    def _read_firmware(self, node):
        """The reading the node got when it was managed."""
        objects.FirmwareComponent.sync(
            self.ctx, node.id, fake.FakeFirmware().get_components(
                type('Task', (), {'node': node})))

    def _versions(self, node):
        return {c.component: (c.initial_version, c.current_version,
                              c.last_version_flashed)
                for c in objects.FirmwareComponent.list_by_node_id(
                    self.ctx, node.id)}


class ServicingTestCase(_Base):

    def test_service_runs_steps_and_returns_to_active(self):
        node = self._node()
        node = self._act(node, 'service', service_steps=[
            {'interface': 'deploy', 'step': 'write_note',
             'args': {'note': 'a'}},
            {'interface': 'deploy', 'step': 'write_note',
             'args': {'note': 'b'}}])
        self.assertEqual(states.ACTIVE, node.provision_state)
        self.assertIsNone(node.target_provision_state)
        self.assertEqual(['a', 'b'], node.driver_internal_info['notes'])
        self.assertEqual({}, node.service_step)
        self.assertNotIn('service_steps', node.driver_internal_info)
        self.assertIsNone(node.last_error)

    def test_service_only_from_active_or_service_failed(self):
        steps_ = [{'interface': 'deploy', 'step': 'write_note',
                   'args': {'note': 'a'}}]
        for state in (states.MANAGEABLE, states.AVAILABLE, states.ENROLL):
            node = self._node(state)
            self.assertRaises(exception.InvalidStateRequested,
                              self.rpc.do_provisioning_action, self.ctx,
                              node.id, 'service', service_steps=steps_)
            self.assertEqual(state, self._get(node).provision_state)

    def test_bad_service_steps_refused_naming_the_field(self):
        node = self._node()
        cases = [
            (None, 'service_steps must be a non-empty list'),
            ([], 'service_steps must be a non-empty list'),
            ({'interface': 'deploy'}, 'service_steps must be a non-empty'),
            (['write_note'], 'service_steps[0] must be an object'),
            ([{'interface': 'deploy', 'step': 'nope'}],
             'service_steps[0]: service step nope of interface deploy'),
            ([{'interface': 'bogus', 'step': 'write_note'}],
             'service_steps[0]: service step write_note of interface bogus'),
            # A clean step is not a service step.
            ([{'interface': 'deploy', 'step': 'erase_devices'}],
             'service step erase_devices'),
            ([{'interface': 'deploy', 'step': 'write_note'}],
             'service_steps[0].args: step write_note requires the '
             'argument(s) note'),
            ([{'interface': 'deploy', 'step': 'write_note',
               'args': {'note': 'x', 'extra': 1}}],
             'service_steps[0].args: step write_note does not accept'),
            ([{'interface': 'deploy', 'step': 'write_note', 'args': [1]}],
             'service_steps[0].args must be an object'),
            ([{'interface': 'firmware', 'step': 'update',
               'args': {'settings': 'bmc'}}],
             'service_steps[0]: args.settings must be a non-empty list'),
            ([{'interface': 'firmware', 'step': 'update',
               'args': {'settings': [{'component': 'bmc'}]}}],
             'service_steps[0]: args.settings[0] must be'),
        ]
        for bad, message in cases:
            exc = self.assertRaises(exception.InvalidParameterValue,
                                    self.rpc.do_provisioning_action,
                                    self.ctx, node.id, 'service',
                                    service_steps=bad)
            self.assertIn(message, str(exc))
        node = self._get(node)
        self.assertEqual(states.ACTIVE, node.provision_state)
        self.assertIsNone(node.reservation)
        self.assertEqual([], self._actions(node))

    def test_service_steps_only_with_service(self):
        node = self._node(states.MANAGEABLE)
        self.assertRaises(exception.InvalidParameterValue,
                          self.rpc.do_provisioning_action, self.ctx, node.id,
                          'provide', service_steps=[UPDATE])

    def test_service_in_maintenance_refused(self):
        node = self._node(maintenance=True)
        self.assertRaises(exception.NodeInMaintenance,
                          self.rpc.do_provisioning_action, self.ctx, node.id,
                          'service', service_steps=[UPDATE])

    def test_failure_then_service_again_or_abort(self):
        node = self._node()
        node = self._act(node, 'service', service_steps=[
            {'interface': 'deploy', 'step': 'explode'}])
        self.assertEqual(states.SERVICEFAIL, node.provision_state)
        self.assertEqual(states.ACTIVE, node.target_provision_state)
        self.assertIn('Servicing failed', node.last_error)
        self.assertIn('the disk caught fire', node.last_error)
        self.assertFalse(node.maintenance)
        self.assertEqual({}, node.service_step)
        history = objects.NodeHistory.list_by_node_id(self.ctx, node.id)
        self.assertIn('the disk caught fire', history[-1].event)
        # service failed --service--> servicing -> active.
        node = self._act(node, 'service', service_steps=[
            {'interface': 'deploy', 'step': 'write_note',
             'args': {'note': 'fixed'}}])
        self.assertEqual(states.ACTIVE, node.provision_state)
        self.assertIsNone(node.last_error)
        node = self._act(node, 'service', service_steps=[
            {'interface': 'deploy', 'step': 'explode'}])
        self.assertEqual(states.SERVICEFAIL, node.provision_state)
        # service failed --abort--> active.
        self.rpc.do_provisioning_action(self.ctx, node.id, 'abort')
        node = self._get(node)
        self.assertEqual(states.ACTIVE, node.provision_state)
        self.assertIsNone(node.target_provision_state)
        self.assertIsNone(node.reservation)

    def test_step_that_waits_then_continue(self):
        node = self._node()
        node = self._act(node, 'service', service_steps=[
            {'interface': 'deploy', 'step': 'wait_for_agent'},
            {'interface': 'deploy', 'step': 'write_note',
             'args': {'note': 'after'}}])
        self.assertEqual(states.SERVICEWAIT, node.provision_state)
        self.assertEqual(states.ACTIVE, node.target_provision_state)
        self.assertEqual('wait_for_agent', node.service_step['step'])
        self.assertNotIn('notes', node.driver_internal_info)
        self.rpc.continue_node_service(self.ctx, node.id)
        node = conductors.wait_unlocked(self.ctx, node.id)
        self.assertEqual(states.ACTIVE, node.provision_state)
        self.assertEqual(['after'], node.driver_internal_info['notes'])
        self.assertRaises(exception.InvalidStateRequested,
                          self.rpc.continue_node_service, self.ctx, node.id)

    def test_abort_service_wait(self):
        node = self._node()
        node = self._act(node, 'service', service_steps=[
            {'interface': 'deploy', 'step': 'wait_for_agent'}])
        self.rpc.do_provisioning_action(self.ctx, node.id, 'abort')
        node = self._get(node)
        self.assertEqual(states.SERVICEFAIL, node.provision_state)
        self.assertIn('service wait', node.last_error)
        self.assertEqual({}, node.service_step)

    def test_interrupted_servicing_fails(self):
        node = self._node(states.SERVICING,
                          target_provision_state=states.ACTIVE,
                          reservation=self.host,
                          service_step={'step': 'write_note'})
        self.manager.del_host()
        self.manager.init_host()
        node = self._get(node)
        self.assertEqual(states.SERVICEFAIL, node.provision_state)
        self.assertIn('stopped while the node was servicing',
                      node.last_error)
        self.assertEqual({}, node.service_step)


class DeferredStepTestCase(_Base):
    """Deferrable steps run as deferred actions; their end moves on."""

    def test_service_firmware_update_waits_for_its_action(self):
        node = self._node(driver_info={'fake_firmware_polls': 2})
        self._read_firmware(node)
        node = self._act(node, 'service', service_steps=[
            UPDATE, {'interface': 'deploy', 'step': 'write_note',
                     'args': {'note': 'after'}}])
        self.assertEqual(states.SERVICEWAIT, node.provision_state)
        self.assertEqual(states.ACTIVE, node.target_provision_state)
        self.assertEqual('update', node.service_step['step'])
        [action] = self._actions(node)
        self.assertEqual('task.driver.firmware.update', action.call)
        self.assertEqual('service', action.flow)
        self.assertEqual(UPDATE['args'], action.arguments)
        self.assertEqual(da.CREATED, action.state)
        self.assertEqual(action.uuid,
                         node.driver_internal_info['waiting_on_action'])
        # The update polls twice: the node keeps waiting meanwhile.
        for _poll in range(2):
            self._launch()
            self.assertEqual(da.RESCHEDULE, self._actions(node)[0].state)
            node = self._get(node)
            self.assertEqual(states.SERVICEWAIT, node.provision_state)
            self.assertNotIn('notes', node.driver_internal_info)
        self._launch()
        [action] = self._actions(node)
        self.assertEqual(da.COMPLETED, action.state)
        node = self._get(node)
        self.assertEqual(states.ACTIVE, node.provision_state)
        self.assertIsNone(node.target_provision_state)
        self.assertIsNone(node.reservation)
        self.assertEqual(['after'], node.driver_internal_info['notes'])
        self.assertNotIn('waiting_on_action', node.driver_internal_info)
        self.assertEqual({}, node.service_step)
        self.assertEqual({'bmc': ('1.0', 'bmc-2.0', 'bmc-2.0'),
                          'bios': ('1.0', '1.0', None)},
                         self._versions(node))
        # The history keeps what the action did after it is purged.
        [event] = [e for e in objects.NodeHistory.list_by_node_id(
            self.ctx, node.id) if e.event_type == 'deferred_action']
        self.assertEqual('INFO', event.severity)
        self.assertIn(action.uuid, event.event)
        self.assertIn('task.driver.firmware.update', event.event)
        self.assertIn('"updated": ["bmc"]', event.event)

    def test_two_deferred_steps_in_a_row(self):
        second = {'interface': 'firmware', 'step': 'update',
                  'args': {'settings': [{'component': 'bios',
                                         'url': 'http://images/bios-7'}]}}
        node = self._node()
        self._read_firmware(node)
        node = self._act(node, 'service', service_steps=[UPDATE, second])
        first_action = self._actions(node)[0]
        self._launch()
        node = self._get(node)
        self.assertEqual(states.SERVICEWAIT, node.provision_state)
        self.assertEqual('bios', node.service_step['args']['settings'][0][
            'component'])
        actions = self._actions(node)
        self.assertEqual([da.COMPLETED, da.CREATED],
                         [a.state for a in actions])
        self.assertEqual(first_action.uuid, actions[0].uuid)
        # The second action still names the request that asked for both.
        self.assertEqual(first_action.request_id, actions[1].request_id)
        self.assertIsNotNone(actions[1].request_id)
        self._launch()
        node = self._get(node)
        self.assertEqual(states.ACTIVE, node.provision_state)
        self.assertEqual({'bmc': ('1.0', 'bmc-2.0', 'bmc-2.0'),
                          'bios': ('1.0', 'bios-7', 'bios-7')},
                         self._versions(node))

    def test_manual_clean_firmware_update(self):
        node = self._node(states.MANAGEABLE)
        node = self._act(node, 'clean', clean_steps=[UPDATE])
        self.assertEqual(states.CLEANWAIT, node.provision_state)
        self.assertEqual(states.MANAGEABLE, node.target_provision_state)
        self.assertEqual('update', node.clean_step['step'])
        [action] = self._actions(node)
        self.assertEqual('clean', action.flow)
        self._launch()
        node = self._get(node)
        self.assertEqual(states.MANAGEABLE, node.provision_state)
        self.assertIsNone(node.target_provision_state)
        self.assertEqual({}, node.clean_step)
        self.assertEqual('bmc-2.0',
                         self._versions(node)['bmc'][1])

    def test_failed_action_fails_the_service_naming_it(self):
        node = self._node(driver_info={'fake_fail_firmware': True})
        node = self._act(node, 'service', service_steps=[UPDATE])
        [action] = self._actions(node)
        self._launch()
        self.assertEqual(da.FAILED, self._actions(node)[0].state)
        node = self._get(node)
        self.assertEqual(states.SERVICEFAIL, node.provision_state)
        self.assertIn(action.uuid, node.last_error)
        self.assertIn('task.driver.firmware.update', node.last_error)
        self.assertIn('fake_fail_firmware', node.last_error)
        self.assertNotIn('waiting_on_action', node.driver_internal_info)
        self.assertIsNone(node.reservation)
        events = [e.event for e in objects.NodeHistory.list_by_node_id(
            self.ctx, node.id)]
        self.assertTrue(any(action.uuid in e and 'Servicing failed' in e
                            for e in events), events)

    def test_retries_before_failing(self):
        self.config(step_retries=1, group='deferred_actions')
        node = self._node(driver_info={'fake_fail_firmware': True})
        node = self._act(node, 'service', service_steps=[UPDATE])
        self._launch()
        self.assertEqual(da.PENDING_RETRY, self._actions(node)[0].state)
        self.assertEqual(states.SERVICEWAIT,
                         self._get(node).provision_state)
        self._launch()
        self.assertEqual(states.SERVICEFAIL,
                         self._get(node).provision_state)

    def test_failed_action_fails_cleaning_into_maintenance(self):
        node = self._node(states.MANAGEABLE,
                          driver_info={'fake_fail_firmware': True})
        node = self._act(node, 'clean', clean_steps=[UPDATE])
        self._launch()
        node = self._get(node)
        self.assertEqual(states.CLEANFAIL, node.provision_state)
        self.assertTrue(node.maintenance)
        self.assertEqual(provisioning.CLEAN_FAILURE, node.fault)
        self.assertIn('Cleaning failed', node.last_error)
        self.assertEqual({}, node.clean_step)

    def test_abort_leaves_the_action_to_end_alone(self):
        node = self._node()
        node = self._act(node, 'service', service_steps=[UPDATE])
        self.rpc.do_provisioning_action(self.ctx, node.id, 'abort')
        self.assertEqual(states.SERVICEFAIL, self._get(node).provision_state)
        self._launch()
        self.assertEqual(da.COMPLETED, self._actions(node)[0].state)
        node = self._get(node)
        # The update happened, but the node was not moved on by it.
        self.assertEqual(states.SERVICEFAIL, node.provision_state)
        self.assertIn('Aborted', node.last_error)

    def test_continue_refused_while_the_action_is_live(self):
        node = self._node(driver_info={'fake_firmware_polls': 1})
        node = self._act(node, 'service', service_steps=[UPDATE])
        exc = self.assertRaises(exception.InvalidStateRequested,
                                self.rpc.continue_node_service, self.ctx,
                                node.id)
        self.assertIn('deferred action', str(exc))
        self.assertEqual(states.SERVICEWAIT,
                         self._get(node).provision_state)

    def test_manage_caches_firmware_components(self):
        node = self._node(states.ENROLL)
        node = self._act(node, 'manage')
        self.assertEqual(states.MANAGEABLE, node.provision_state)
        self.assertEqual({'bmc': ('1.0', '1.0', None),
                          'bios': ('1.0', '1.0', None)},
                         self._versions(node))


class WaitTimeoutTestCase(_Base):
    """``service wait`` times out, unless a live action holds the node."""

    def setUp(self):
        super().setUp()
        self.config(service_callback_timeout=300, clean_callback_timeout=300,
                    group='conductor')

    def _age(self, node, seconds):
        past = obj_base.utcnow() - datetime.timedelta(seconds=seconds)
        with db_api.get_engine().begin() as conn:
            conn.execute(models.Node.__table__.update()
                         .where(models.Node.__table__.c.id == node.id)
                         .values(provision_updated_at=past))

    def _check(self):
        self.manager._check_wait_timeouts(self.ctx)

    def test_service_wait_times_out(self):
        node = self._node(states.SERVICEWAIT,
                          target_provision_state=states.ACTIVE,
                          service_step={'step': 'wait_for_agent',
                                        'interface': 'deploy'})
        self._age(node, 301)
        self._check()
        node = self._get(node)
        self.assertEqual(states.SERVICEFAIL, node.provision_state)
        self.assertIn('Timeout reached while servicing', node.last_error)
        self.assertIn('wait_for_agent', node.last_error)
        self.assertFalse(node.maintenance)

    def test_live_action_holds_the_node_then_times_out_when_ended(self):
        node = self._node(driver_info={'fake_firmware_polls': 5,
                                       'fake_firmware_poll_delay': 3600})
        node = self._act(node, 'service', service_steps=[UPDATE])
        self._launch()
        self.assertEqual(da.RESCHEDULE, self._actions(node)[0].state)
        self._age(node, 301)
        self._check()
        self.assertEqual(states.SERVICEWAIT, self._get(node).provision_state)
        # The action ends without moving the node (say it failed while
        # the node was locked): nothing holds the node any more.
        action = self._actions(node)[0]
        with db_api.get_engine().begin() as conn:
            conn.execute(models.DeferredAction.__table__.update()
                         .where(models.DeferredAction.__table__.c.id
                                == action.id)
                         .values(state=da.FAILED))
        self._check()
        node = self._get(node)
        self.assertEqual(states.SERVICEFAIL, node.provision_state)
        self.assertIn('Timeout reached', node.last_error)

    def test_purged_action_no_longer_holds_the_node(self):
        node = self._node(states.CLEANWAIT,
                          target_provision_state=states.MANAGEABLE,
                          driver_internal_info={
                              steps.WAITING_ACTION:
                                  '6a1f2f1c-0000-4000-8000-000000000000'})
        self._age(node, 301)
        self._check()
        node = self._get(node)
        self.assertEqual(states.CLEANFAIL, node.provision_state)
        self.assertTrue(node.maintenance)


class BrokenFlowTestCase(_Base):
    """An unexpected error after an action completed fails the flow."""

    def test_node_not_left_servicing(self):
        node = self._node()
        node = self._act(node, 'service', service_steps=[UPDATE])
        with mock.patch.object(steps, 'step_done',
                               side_effect=RuntimeError('db went away')):
            self._launch()
        node = self._get(node)
        self.assertEqual(states.SERVICEFAIL, node.provision_state)
        self.assertIn('db went away', node.last_error)
        self.assertIsNone(node.reservation)
