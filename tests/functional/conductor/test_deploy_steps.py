"""Deployments made of deploy steps, on a real database.

A deployment runs every ``deploy_step`` with a priority above 0 of the
node's interfaces, highest first, with ``deploy.deploy`` at 100. A step
may wait for a call-back (``wait call-back``, resumed by
``continue_node_deploy``) or be deferrable: it then runs as a deferred
action, and the deployment goes on when the action ends.
"""

from alloc_framework.common import exception
from alloc_framework.common import states
from alloc_framework.conductor import provisioning
from alloc_framework.drivers import base as drivers_base
from alloc_framework.drivers import deferred
from alloc_framework.drivers.modules import fake
from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import deferred_action as da
from tests import base as test_base
from tests.functional.conductor import base
from tests.functional.conductor import conductors


def _ran(task, name):
    info = dict(task.node.driver_internal_info)
    info['ran'] = info.get('ran', []) + [name]
    task.node.driver_internal_info = info


class StepDeploy(fake.FakeDeploy):
    """A deployment of four steps around the core ``deploy``."""

    @drivers_base.deploy_step(priority=150)
    def partition(self, task):
        _ran(task, 'partition')

    def deploy(self, task):
        _ran(task, 'deploy')
        return super().deploy(task)

    @drivers_base.deploy_step(priority=60)
    @deferred.deferrable
    def write_image(self, task, polls=0):
        if task.node.driver_info.get('fail_write'):
            raise exception.InstanceDeployFailure(reason='disk is gone')
        if polls < 2:
            return deferred.Reschedule(delay=0, polls=polls + 1)
        _ran(task, 'write_image')
        task.node.save(task.context)
        return {'polls': polls}

    @drivers_base.deploy_step(priority=10)
    def configure(self, task):
        _ran(task, 'configure')

    @drivers_base.deploy_step(priority=0)
    def only_on_request(self, task):
        _ran(task, 'only_on_request')


class DeployStepsTestCase(base.ConductorTestCase):

    def setUp(self):
        super().setUp()
        self.restart_with_deploy(StepDeploy())

    def _deploy(self, **kw):
        node = self.make_node(provision_state=states.AVAILABLE, **kw)
        self.rpc.do_provisioning_action(self.ctx, node.id, 'active')
        return conductors.wait_unlocked(self.ctx, node.id)

    def _launch_until_ended(self, node):
        def ended():
            self.launcher.launch(self.manager.context)
            test_base.wait_for(lambda: self.launcher.busy == 0,
                               'idle launcher')
            action = objects.DeferredAction.list(
                self.ctx, filters={'node_id': node.id})[0]
            return action if action.state in da.TERMINAL else None
        action = test_base.wait_for(ended, 'the deploy step action')
        return action, conductors.wait_unlocked(self.ctx, node.id)

    def test_steps_run_in_priority_order_around_a_deferred_one(self):
        node = self._deploy()
        # partition and deploy ran; write_image waits as an action.
        self.assertEqual(states.DEPLOYWAIT, node.provision_state)
        self.assertEqual(states.ACTIVE, node.target_provision_state)
        self.assertEqual('write_image', node.deploy_step['step'])
        self.assertEqual(['partition', 'deploy'],
                         node.driver_internal_info['ran'])
        action, node = self._launch_until_ended(node)
        self.assertEqual(da.COMPLETED, action.state)
        self.assertEqual('task.driver.deploy.write_image', action.call)
        self.assertEqual('deploy', action.flow)
        self.assertEqual(2, action.reschedule_count)
        self.assertEqual(states.ACTIVE, node.provision_state)
        self.assertIsNone(node.target_provision_state)
        self.assertEqual({}, node.deploy_step)
        self.assertEqual(['partition', 'deploy', 'write_image', 'configure'],
                         node.driver_internal_info['ran'])
        self.assertIsNone(node.last_error)

    def test_a_failed_deferred_step_fails_the_deployment(self):
        node = self._deploy(driver_info={'fail_write': True})
        self.assertEqual(states.DEPLOYWAIT, node.provision_state)
        action, node = self._launch_until_ended(node)
        self.assertEqual(da.FAILED, action.state)
        self.assertEqual(states.DEPLOYFAIL, node.provision_state)
        self.assertIn(action.uuid, node.last_error)
        self.assertIn('disk is gone', node.last_error)
        self.assertEqual({}, node.deploy_step)
        self.assertNotIn('configure', node.driver_internal_info['ran'])

    def test_call_back_is_refused_while_the_action_can_run(self):
        node = self._deploy()
        self.assertRaises(exception.InvalidStateRequested,
                          self.rpc.continue_node_deploy, self.ctx, node.id)

    def test_deploy_steps_of_the_node(self):
        node = objects.Node.get_by_id(self.ctx, self.make_node().id)
        with self.manager._acquire(self.ctx, node.id, 'test',
                                   shared=True) as task:
            found = provisioning.deploy_steps(task)
        self.assertEqual(['partition', 'deploy', 'write_image', 'configure'],
                         [s['step'] for s in found])
