"""The conductor manager through the local RPC transport, on a real DB."""

import datetime
import threading
from unittest import mock

from oslo_utils import uuidutils

from alloc_framework.common import exception
from alloc_framework.common import states
from alloc_framework.conductor import hash_ring
from alloc_framework.conductor import manager as manager_mod
from alloc_framework.conductor import provisioning
from alloc_framework.db import api as db_api
from alloc_framework.db.sqlalchemy import models
from alloc_framework.drivers import base as drivers_base
from alloc_framework.drivers import driver_factory
from alloc_framework.drivers.modules import fake
from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import base as obj_base
from alloc_framework import periodics
from tests.functional.conductor import base
from tests.functional.conductor import conductors


class LifeCycleTestCase(base.ConductorTestCase):

    def test_registered_and_alive(self):
        cond = objects.Conductor.get_by_hostname(self.ctx, self.host)
        self.assertTrue(cond.online)
        self.assertEqual(['fake-hardware'], cond.drivers)
        self.assertEqual(self.manager.conductor.id, cond.id)

    def test_del_host_unregisters(self):
        self.manager.del_host()
        self.assertFalse(objects.Conductor.get_by_hostname(
            self.ctx, self.host).online)
        self.assertRaises(exception.TemporaryFailure, self.rpc.create_node,
                          self.ctx, objects.Node(driver='fake-hardware'))
        self.assertRaises(exception.NoFreeConductorWorker,
                          self.manager.spawn_worker, lambda: None)

    def test_heartbeat_revives_row(self):
        self.manager.conductor.unregister(self.ctx)
        self.manager._heartbeat(self.ctx)
        self.assertTrue(objects.Conductor.get_by_hostname(
            self.ctx, self.host).online)

    def test_stale_locks_released_at_start(self):
        node = self.make_node()
        objects.Node.reserve(self.ctx, node.id, 'other-host')
        self.start_conductor('other-host')
        self.assertIsNone(objects.Node.get_by_id(self.ctx,
                                                 node.id).reservation)

    def test_locks_of_a_live_host_are_left_alone(self):
        # Another process runs as other-host: a second one with that
        # name refuses to start and touches none of its locks.
        node = self.make_node()
        objects.Node.reserve(self.ctx, node.id, 'other-host')
        live = objects.Conductor.register(self.ctx, 'other-host')
        second = manager_mod.ConductorManager('other-host', self.conf)
        self.assertRaises(exception.ConductorAlreadyRegistered,
                          second.init_host)
        self.assertEqual('other-host', objects.Node.get_by_id(
            self.ctx, node.id).reservation)
        self.assertEqual(live.registration, objects.Conductor.get_by_hostname(
            self.ctx, 'other-host').registration)

    def test_locks_of_a_dead_host_are_released_at_take_over(self):
        node = self.make_node()
        objects.Node.reserve(self.ctx, node.id, 'other-host')
        objects.Conductor.register(self.ctx, 'other-host')
        with db_api.get_engine().begin() as conn:
            conn.execute(models.Conductor.__table__.update().values(
                updated_at=obj_base.utcnow() - datetime.timedelta(
                    seconds=self.conf.conductor.heartbeat_timeout + 1)))
        self.start_conductor('other-host')
        self.assertIsNone(objects.Node.get_by_id(self.ctx,
                                                 node.id).reservation)

    def test_stop_leaves_a_registration_taken_over(self):
        # This process was taken for dead and another one took its host
        # over: stopping, it leaves that one registered.
        objects.Conductor.register(self.ctx, self.host,
                                   registration='another-process',
                                   timeout=0)
        self.manager.del_host()
        self.assertTrue(objects.Conductor.get_by_hostname(
            self.ctx, self.host).online)

    def test_work_interrupted_by_a_crash_fails_at_start(self):
        deploying = self.make_node(provision_state=states.DEPLOYING,
                                   target_provision_state=states.ACTIVE)
        cleaning = self.make_node(provision_state=states.CLEANING,
                                  target_provision_state=states.AVAILABLE,
                                  clean_step={'step': 'erase'})
        powering = self.make_node(power_state=states.POWER_OFF,
                                  target_power_state=states.POWER_ON)
        waiting = self.make_node(provision_state=states.DEPLOYWAIT,
                                 target_provision_state=states.ACTIVE)
        others = self.make_node(provision_state=states.DEPLOYING,
                                target_provision_state=states.ACTIVE)
        for node in (deploying, cleaning, powering):
            objects.Node.reserve(self.ctx, node.id, 'other-host')
        objects.Node.reserve(self.ctx, others.id, 'third-host')
        self.start_conductor('other-host')

        node = objects.Node.get_by_id(self.ctx, deploying.id)
        self.assertEqual((states.DEPLOYFAIL, states.ACTIVE),
                         (node.provision_state, node.target_provision_state))
        self.assertIn('other-host stopped while the node was deploying',
                      node.last_error)
        self.assertIsNone(node.reservation)
        node = objects.Node.get_by_id(self.ctx, cleaning.id)
        self.assertEqual(states.CLEANFAIL, node.provision_state)
        self.assertTrue(node.maintenance)
        self.assertEqual({}, node.clean_step)
        node = objects.Node.get_by_id(self.ctx, powering.id)
        self.assertIsNone(node.target_power_state)
        self.assertIn('changing to power on', node.last_error)
        # A wait state has no worker to lose; another host's lock is its.
        node = objects.Node.get_by_id(self.ctx, waiting.id)
        self.assertEqual(states.DEPLOYWAIT, node.provision_state)
        node = objects.Node.get_by_id(self.ctx, others.id)
        self.assertEqual(states.DEPLOYING, node.provision_state)
        self.assertEqual('third-host', node.reservation)

    def test_broken_plugin_stops_start(self):
        from alloc_framework.conductor import manager as manager_mod
        self.config(enabled_hardware_types=['fake-hardware', 'missing'])
        manager = manager_mod.ConductorManager('broken', self.conf)
        self.assertRaises(exception.DriverLoadError, manager.init_host)
        self.assertRaises(exception.ConductorNotFound,
                          objects.Conductor.get_by_hostname, self.ctx,
                          'broken')

    def test_periodics_collected_from_config(self):
        tasks = periodics.collect_for_conductor(self.manager, self.ctx)
        # check_allocations_interval is 0 in these tests: no take-over.
        self.assertEqual(['ConductorManager._clean_up_deferred_actions',
                          'ConductorManager._heartbeat',
                          'ConductorManager._launch_deferred_actions'],
                         [t.__qualname__ for t, _a, _k in tasks])
        self.config(heartbeat_interval=7, check_allocations_interval=9,
                    group='conductor')
        self.config(launcher_interval=2, idle_cleanup_interval=3,
                    group='deferred_actions')
        tasks = periodics.collect_for_conductor(self.manager, self.ctx)
        spacing = {t.__qualname__: t._periodic_spacing
                   for t, _a, _k in tasks}
        self.assertEqual({'ConductorManager._heartbeat': 7,
                          'ConductorManager._take_over_allocations': 9,
                          'ConductorManager._launch_deferred_actions': 2,
                          'ConductorManager._clean_up_deferred_actions': 3},
                         spacing)
        for _task, args, _kwargs in tasks:
            self.assertEqual((self.ctx,), args)

    def test_stop_does_not_wait_for_periods(self):
        # Periods far longer than the test timeout: stopping must not
        # wait for them to end.
        self.manager.del_host()
        self.config(heartbeat_interval=3600, check_allocations_interval=3600,
                    group='conductor')
        self.config(launcher_interval=3600, idle_cleanup_interval=3600,
                    group='deferred_actions')
        self.manager.init_host()
        runner = self.manager._periodics
        self.assertTrue(runner.running)
        self.assertEqual(['ConductorManager._clean_up_deferred_actions',
                          'ConductorManager._heartbeat',
                          'ConductorManager._launch_deferred_actions',
                          'ConductorManager._take_over_allocations'],
                         runner.names)
        self.manager.del_host()
        self.assertFalse(runner.running)
        self.assertIsNone(self.manager._periodics)

    def test_take_over_periodic_calls_allocations(self):
        self.config(check_allocations_interval=9, group='conductor')
        tasks = {t.__qualname__: (t, a, k) for t, a, k in
                 periodics.collect_for_conductor(self.manager, self.ctx)}
        task, args, kwargs = tasks['ConductorManager._take_over_allocations']
        with mock.patch('alloc_framework.conductor.allocations.'
                        'take_over_dead_allocations') as take_over:
            task(*args, **kwargs)
        take_over.assert_called_once_with(self.manager, self.ctx)

    def test_periodics_run_until_stopped(self):
        # The real runner, with a short heartbeat: the heartbeat runs
        # again and again, and del_host() ends the worker thread.
        self.manager.del_host()
        self.config(heartbeat_interval=1, group='conductor')
        beats = threading.Semaphore(0)
        real_touch = objects.Conductor.touch

        def touch(conductor, context):
            real_touch(conductor, context)
            beats.release()

        with mock.patch.object(objects.Conductor, 'touch', touch):
            self.manager.init_host()
            thread = self.manager._periodics._thread
            for _ in range(2):
                self.assertTrue(beats.acquire(timeout=60))
            self.manager.del_host()
        self.assertFalse(thread.is_alive())

    def test_pool_is_bounded(self):
        self.manager.del_host()
        self.config(workers_pool_size=2, group='conductor')
        self.manager.init_host()
        release = threading.Event()
        self.addCleanup(release.set)
        rejected = False
        for _ in range(6):
            try:
                self.manager.spawn_worker(release.wait)
            except exception.NoFreeConductorWorker:
                rejected = True
                break
        release.set()
        self.assertTrue(rejected)


class NodeCrudTestCase(base.ConductorTestCase):

    def test_create_fills_interfaces(self):
        node = self.rpc.create_node(
            self.ctx, objects.Node(self.ctx, driver='fake-hardware',
                                   name='n1'))
        fresh = objects.Node.get_by_uuid(self.ctx, node.uuid)
        self.assertEqual('fake', fresh.power_interface)
        self.assertEqual('fake', fresh.deploy_interface)
        self.assertEqual(states.ENROLL, fresh.provision_state)

    def test_create_stores_every_interface_kind(self):
        node = self.rpc.create_node(
            self.ctx, objects.Node(self.ctx, driver='fake-hardware',
                                   bios_interface='no-bios'))
        fresh = objects.Node.get_by_uuid(self.ctx, node.uuid)
        self.assertEqual('fake', fresh.boot_interface)
        self.assertEqual('no-bios', fresh.bios_interface)
        self.assertEqual('fake', fresh.firmware_interface)

    def test_create_unknown_driver_or_interface(self):
        exc = self.assertRaises(exception.DriverNotFound,
                                self.rpc.create_node, self.ctx,
                                objects.Node(driver='ipmi'))
        self.assertEqual(400, exc.code)
        self.assertIn('ipmi', str(exc))
        self.assertRaises(exception.InterfaceNotFoundInEntrypoint,
                          self.rpc.create_node, self.ctx,
                          objects.Node(driver='fake-hardware',
                                       power_interface='ipmitool'))
        self.assertEqual([], objects.Node.list(self.ctx))

    def test_update_applies_only_changes(self):
        node = self.make_node(extra={'a': 1}, name='old')
        api_copy = objects.Node.get_by_id(self.ctx, node.id)
        # Someone else changes another field meanwhile.
        node.description = 'kept'
        node.save()
        api_copy.name = 'new'
        result = self.rpc.update_node(self.ctx, api_copy)
        self.assertEqual('new', result.name)
        fresh = objects.Node.get_by_id(self.ctx, node.id)
        self.assertEqual('kept', fresh.description)
        self.assertIsNone(fresh.reservation)

    def test_update_instance_uuid_rules(self):
        node = self.make_node(instance_uuid=uuidutils.generate_uuid())
        node.instance_uuid = uuidutils.generate_uuid()
        self.assertRaises(exception.NodeAssociated, self.rpc.update_node,
                          self.ctx, node)
        node.instance_uuid = None
        self.assertIsNone(self.rpc.update_node(self.ctx, node).instance_uuid)

    def _allocated_node(self, **kw):
        node = self.make_node(resource_class='gold', **kw)
        alloc = objects.Allocation(self.ctx, resource_class='gold',
                                   state='active', node_id=node.id)
        alloc.create()
        node.instance_uuid = alloc.uuid
        node.allocation_id = alloc.id
        node.save()
        return node, alloc

    def test_unset_instance_releases_allocation(self):
        node, alloc = self._allocated_node(provision_state=states.AVAILABLE)
        node = objects.Node.get_by_id(self.ctx, node.id)
        node.instance_uuid = None
        result = self.rpc.update_node(self.ctx, node)
        self.assertIsNone(result.allocation_id)
        self.assertRaises(exception.AllocationNotFound,
                          objects.Allocation.get_by_id, self.ctx, alloc.id)

    def test_unset_instance_of_active_allocated_node(self):
        node, alloc = self._allocated_node(provision_state=states.ACTIVE)
        node = objects.Node.get_by_id(self.ctx, node.id)
        node.instance_uuid = None
        exc = self.assertRaises(exception.NodeIsAllocated,
                                self.rpc.update_node, self.ctx, node)
        self.assertEqual(409, exc.code)
        self.assertEqual(alloc.uuid, objects.Node.get_by_id(
            self.ctx, node.id).instance_uuid)
        # In maintenance it is allowed.
        node = objects.Node.get_by_id(self.ctx, node.id)
        node.maintenance = True
        self.rpc.update_node(self.ctx, node)
        node = objects.Node.get_by_id(self.ctx, node.id)
        node.instance_uuid = None
        self.assertIsNone(self.rpc.update_node(self.ctx, node).allocation_id)

    def test_driver_change_only_when_idle(self):
        node = self.make_node(provision_state=states.ACTIVE)
        node.power_interface = 'fake'
        self.assertRaises(exception.InvalidStateRequested,
                          self.rpc.update_node, self.ctx, node)

    def test_maintenance_off_clears_reason(self):
        node = self.make_node(maintenance=True, maintenance_reason='why',
                              fault='power failure')
        node.maintenance = False
        result = self.rpc.update_node(self.ctx, node)
        self.assertIsNone(result.maintenance_reason)
        self.assertIsNone(result.fault)

    def test_protect_only_active(self):
        node = self.make_node(provision_state=states.AVAILABLE)
        node.protected = True
        self.assertRaises(exception.InvalidStateRequested,
                          self.rpc.update_node, self.ctx, node)

    def test_destroy_rules(self):
        active = self.make_node(provision_state=states.ACTIVE)
        self.assertRaises(exception.InvalidStateRequested,
                          self.rpc.destroy_node, self.ctx, active.id)
        assoc = self.make_node(instance_uuid=uuidutils.generate_uuid())
        self.assertRaises(exception.NodeAssociated, self.rpc.destroy_node,
                          self.ctx, assoc.id)
        prot = self.make_node(provision_state=states.ACTIVE, protected=True,
                              maintenance=True)
        self.assertRaises(exception.NodeProtected, self.rpc.destroy_node,
                          self.ctx, prot.id)
        ok = self.make_node(provision_state=states.MANAGEABLE)
        self.rpc.destroy_node(self.ctx, ok.id)
        self.assertRaises(exception.NodeNotFound, objects.Node.get_by_id,
                          self.ctx, ok.id)
        for node in (active, assoc, prot):
            self.assertIsNone(objects.Node.get_by_id(
                self.ctx, node.id).reservation)

    def test_destroy_in_maintenance_deletes_allocation(self):
        node, alloc = self._allocated_node(provision_state=states.ACTIVE,
                                           maintenance=True)
        self.rpc.destroy_node(self.ctx, node.id)
        self.assertRaises(exception.AllocationNotFound,
                          objects.Allocation.get_by_id, self.ctx, alloc.id)

    def test_locked_node(self):
        node = self.make_node(provision_state=states.MANAGEABLE)
        objects.Node.reserve(self.ctx, node.id, 'someone-else')
        exc = self.assertRaises(exception.NodeLocked, self.rpc.destroy_node,
                                self.ctx, node.id)
        self.assertIn('someone-else', str(exc))
        objects.Node.get_by_id(self.ctx, node.id)

    def test_traits(self):
        node = self.make_node()
        self.rpc.add_node_traits(self.ctx, node.id, ['CUSTOM_A'])
        self.rpc.add_node_traits(self.ctx, node.id, ['CUSTOM_B'])
        self.assertEqual(['CUSTOM_A', 'CUSTOM_B'], objects.Node.get_by_id(
            self.ctx, node.id).traits)
        self.rpc.add_node_traits(self.ctx, node.id, ['CUSTOM_C'],
                                 replace=True)
        self.rpc.remove_node_traits(self.ctx, node.id, ['CUSTOM_C'])
        self.assertRaises(exception.NodeTraitNotFound,
                          self.rpc.remove_node_traits, self.ctx, node.id,
                          ['CUSTOM_C'])
        self.rpc.add_node_traits(self.ctx, node.id, ['CUSTOM_D'])
        self.rpc.remove_node_traits(self.ctx, node.id)
        self.assertEqual([], objects.Node.get_by_id(self.ctx,
                                                    node.id).traits)
        self.assertRaises(exception.InvalidTrait, self.rpc.add_node_traits,
                          self.ctx, node.id, ['bad'])


class ProvisioningTestCase(base.ConductorTestCase):

    def _node(self, **kw):
        return self.rpc.create_node(self.ctx, objects.Node(
            self.ctx, driver='fake-hardware', **kw))

    def _act(self, node, action, **kw):
        self.rpc.do_provisioning_action(self.ctx, node.id, action, **kw)
        return conductors.wait_unlocked(self.ctx, node.id)

    def test_full_life_cycle(self):
        node = self._node()
        node = self._act(node, 'manage')
        self.assertEqual(states.MANAGEABLE, node.provision_state)
        self.assertEqual(states.POWER_OFF, node.power_state)
        node = self._act(node, 'provide')
        self.assertEqual(states.AVAILABLE, node.provision_state)
        self.assertIsNone(node.target_provision_state)
        self.assertEqual('erase_devices_metadata',
                         node.driver_internal_info['fake_cleaned'])
        node = self._act(node, 'active')
        self.assertEqual(states.ACTIVE, node.provision_state)
        self.assertTrue(node.driver_internal_info['fake_deployed'])
        node = self._act(node, 'deleted')
        self.assertEqual(states.AVAILABLE, node.provision_state)
        self.assertFalse(node.driver_internal_info['fake_deployed'])
        self.assertIsNone(node.reservation)
        self.assertIsNone(node.last_error)

    def test_deploy_validates_the_boot_interface(self):
        node = self._node(provision_state=states.AVAILABLE)
        with mock.patch.object(
                fake.FakeBoot, 'validate',
                side_effect=exception.InvalidParameterValue(err='no image')):
            exc = self.assertRaises(exception.InvalidParameterValue,
                                    self.rpc.do_provisioning_action,
                                    self.ctx, node.id, 'active')
        self.assertIn('no image', str(exc))
        node = objects.Node.get_by_id(self.ctx, node.id)
        self.assertEqual(states.AVAILABLE, node.provision_state)
        self.assertIsNone(node.reservation)

    def test_undeploy_releases_instance_and_allocation(self):
        node = self._node(provision_state=states.ACTIVE,
                          resource_class='gold',
                          instance_info={'image_source': 'x'})
        alloc = objects.Allocation(self.ctx, resource_class='gold',
                                   state='active', node_id=node.id)
        alloc.create()
        node = objects.Node.get_by_id(self.ctx, node.id)
        node.instance_uuid = alloc.uuid
        node.allocation_id = alloc.id
        node.save()
        node = self._act(node, 'undeploy')
        self.assertEqual(states.AVAILABLE, node.provision_state)
        self.assertIsNone(node.instance_uuid)
        self.assertIsNone(node.allocation_id)
        self.assertEqual({}, node.instance_info)
        self.assertRaises(exception.AllocationNotFound,
                          objects.Allocation.get_by_id, self.ctx, alloc.id)

    def test_automated_clean_disabled(self):
        node = self._node(provision_state=states.MANAGEABLE,
                          automated_clean=False)
        node = self._act(node, 'provide')
        self.assertEqual(states.AVAILABLE, node.provision_state)
        self.assertNotIn('fake_cleaned', node.driver_internal_info)

    def test_manual_clean(self):
        node = self._node(provision_state=states.MANAGEABLE)
        node = self._act(node, 'clean', clean_steps=[
            {'interface': 'deploy', 'step': 'erase_devices',
             'args': {'passes': 3}}])
        self.assertEqual(states.MANAGEABLE, node.provision_state)
        self.assertEqual('erase_devices:3',
                         node.driver_internal_info['fake_cleaned'])
        self.assertEqual({}, node.clean_step)

    def test_manual_clean_bad_steps(self):
        node = self._node(provision_state=states.MANAGEABLE)
        for steps in (None, [], [{'interface': 'deploy', 'step': 'nope'}],
                      [{'interface': 'deploy', 'step': 'erase_devices',
                        'args': {'bogus': 1}}]):
            self.assertRaises(exception.InvalidParameterValue, self._act,
                              node, 'clean', clean_steps=steps)
        node = objects.Node.get_by_id(self.ctx, node.id)
        self.assertEqual(states.MANAGEABLE, node.provision_state)
        self.assertIsNone(node.reservation)

    def test_invalid_transitions(self):
        node = self._node()
        exc = self.assertRaises(exception.InvalidStateRequested, self._act,
                                node, 'provide')
        self.assertIn('enroll', str(exc))
        self.assertRaises(exception.InvalidParameterValue, self._act, node,
                          'explode')
        self.assertIsNone(objects.Node.get_by_id(self.ctx,
                                                 node.id).reservation)

    def test_deploy_in_maintenance(self):
        node = self._node(provision_state=states.AVAILABLE,
                          maintenance=True)
        self.assertRaises(exception.NodeInMaintenance, self._act, node,
                          'active')

    def test_undeploy_protected(self):
        node = self._node(provision_state=states.ACTIVE, protected=True)
        self.assertRaises(exception.NodeProtected, self._act, node,
                          'deleted')

    def test_deploy_failure(self):
        node = self._node(provision_state=states.AVAILABLE,
                          driver_info={'fake_fail_deploy': True})
        node = self._act(node, 'active')
        self.assertEqual(states.DEPLOYFAIL, node.provision_state)
        self.assertEqual(states.ACTIVE, node.target_provision_state)
        self.assertIn('fake_fail_deploy', node.last_error)
        history = objects.NodeHistory.list_by_node_id(self.ctx, node.id)
        self.assertEqual(1, len(history))
        self.assertEqual('ERROR', history[0].severity)
        self.assertEqual(self.host, history[0].conductor)
        # Recovering: tear down from deploy failed.
        node.driver_info = {}
        node.save()
        node = self._act(node, 'deleted')
        self.assertEqual(states.AVAILABLE, node.provision_state)

    def test_clean_failure_sets_maintenance(self):
        node = self._node(provision_state=states.MANAGEABLE,
                          driver_info={'fake_fail_clean': True})
        node = self._act(node, 'provide')
        self.assertEqual(states.CLEANFAIL, node.provision_state)
        self.assertTrue(node.maintenance)
        self.assertEqual(provisioning.CLEAN_FAILURE, node.fault)
        self.assertIn('Cleaning failed', node.last_error)
        node = self._act(node, 'manage')
        self.assertEqual(states.MANAGEABLE, node.provision_state)

    def test_abort_clean_wait(self):
        node = self._node(provision_state=states.CLEANWAIT,
                          target_provision_state=states.AVAILABLE)
        node = self._act(node, 'abort')
        self.assertEqual(states.CLEANFAIL, node.provision_state)
        self.assertIn('Aborted', node.last_error)


class PowerTestCase(base.ConductorTestCase):

    def _power(self, node, new_state):
        self.rpc.change_node_power_state(self.ctx, node.id, new_state)
        return conductors.wait_unlocked(self.ctx, node.id)

    def test_power_actions(self):
        node = self.make_node(power_state=states.POWER_OFF)
        node = self._power(node, states.POWER_ON)
        self.assertEqual(states.POWER_ON, node.power_state)
        self.assertIsNone(node.target_power_state)
        self._power(node, states.REBOOT)
        node = self._power(node, states.POWER_OFF)
        self.assertEqual(states.POWER_OFF, node.power_state)
        self.assertEqual(['power on', 'rebooting', 'power off'],
                         node.driver_internal_info['fake_power_actions'])
        self.assertIsNone(node.reservation)

    def test_power_failure_recorded(self):
        node = self.make_node(power_state=states.POWER_OFF,
                              driver_info={'fake_fail_power': True})
        node = self._power(node, states.POWER_ON)
        self.assertEqual(states.POWER_OFF, node.power_state)
        self.assertIsNone(node.target_power_state)
        self.assertIn('power on', node.last_error)
        self.assertEqual('power', objects.NodeHistory.list_by_node_id(
            self.ctx, node.id)[0].event_type)

    def test_invalid_power_state(self):
        node = self.make_node()
        self.assertRaises(exception.InvalidParameterValue,
                          self.rpc.change_node_power_state, self.ctx,
                          node.id, 'sideways')


class _WaitingDeploy(fake.FakeDeploy):
    """Deploys and cleans asynchronously: waits for a call-back."""

    def deploy(self, task):
        return states.DEPLOYWAIT

    def continue_deploy(self, task):
        if task.node.driver_info.get('fake_fail_deploy'):
            raise exception.InstanceDeployFailure(reason='late failure')
        return None

    @drivers_base.clean_step(priority=20)
    def wait_for_agent(self, task):
        return states.CLEANWAIT


class WaitStatesTestCase(base.ConductorTestCase):

    def setUp(self):
        super().setUp()
        self.manager.del_host()
        factory = driver_factory.DriverFactory(self.conf)
        factory.interfaces['deploy']['fake'] = _WaitingDeploy()
        self.manager.driver_factory = factory
        self.manager.init_host()

    def _node(self, **kw):
        return objects.Node.get_by_id(self.ctx, self.make_node(**kw).id)

    def _get(self, node):
        return conductors.wait_unlocked(self.ctx, node.id)

    def test_deploy_waits_for_call_back(self):
        node = self._node(provision_state=states.AVAILABLE)
        self.rpc.do_provisioning_action(self.ctx, node.id, 'active')
        node = self._get(node)
        self.assertEqual(states.DEPLOYWAIT, node.provision_state)
        self.assertEqual(states.ACTIVE, node.target_provision_state)
        self.rpc.continue_node_deploy(self.ctx, node.id)
        node = self._get(node)
        self.assertEqual(states.ACTIVE, node.provision_state)
        self.assertIsNone(node.target_provision_state)
        self.assertRaises(exception.InvalidStateRequested,
                          self.rpc.continue_node_deploy, self.ctx, node.id)

    def test_late_deploy_failure(self):
        node = self._node(provision_state=states.AVAILABLE,
                          driver_info={'fake_fail_deploy': True})
        self.rpc.do_provisioning_action(self.ctx, node.id, 'active')
        self._get(node)
        self.rpc.continue_node_deploy(self.ctx, node.id)
        node = self._get(node)
        self.assertEqual(states.DEPLOYFAIL, node.provision_state)
        self.assertIn('late failure', node.last_error)

    def test_cleaning_resumes_after_waiting_step(self):
        node = self._node(provision_state=states.MANAGEABLE)
        self.rpc.do_provisioning_action(self.ctx, node.id, 'provide')
        node = self._get(node)
        self.assertEqual(states.CLEANWAIT, node.provision_state)
        self.assertEqual(states.AVAILABLE, node.target_provision_state)
        self.assertEqual('wait_for_agent', node.clean_step['step'])
        self.assertNotIn('fake_cleaned', node.driver_internal_info)
        self.rpc.continue_node_clean(self.ctx, node.id)
        node = self._get(node)
        self.assertEqual(states.AVAILABLE, node.provision_state)
        # The step after the waiting one ran on resume.
        self.assertEqual('erase_devices_metadata',
                         node.driver_internal_info['fake_cleaned'])
        self.assertNotIn('clean_steps', node.driver_internal_info)
        self.assertEqual({}, node.clean_step)

    def test_abort_waiting_deploy(self):
        node = self._node(provision_state=states.AVAILABLE)
        self.rpc.do_provisioning_action(self.ctx, node.id, 'active')
        self._get(node)
        # Abort is bookkeeping only: done when the call returns.
        self.rpc.do_provisioning_action(self.ctx, node.id, 'abort')
        node = objects.Node.get_by_id(self.ctx, node.id)
        self.assertIsNone(node.reservation)
        self.assertEqual(states.DEPLOYFAIL, node.provision_state)
        self.assertRaises(exception.InvalidStateRequested,
                          self.rpc.continue_node_deploy, self.ctx, node.id)


class WaitTimeoutTestCase(base.ConductorTestCase):
    """Nodes nothing resumes fail after [conductor]*_callback_timeout."""

    def setUp(self):
        super().setUp()
        self.config(deploy_callback_timeout=600, clean_callback_timeout=300,
                    group='conductor')

    def _waiting(self, state, seconds_ago, **kw):
        target = (states.ACTIVE if state == states.DEPLOYWAIT
                  else states.AVAILABLE)
        node = self.make_node(provision_state=state,
                              target_provision_state=target, **kw)
        past = obj_base.utcnow() - datetime.timedelta(seconds=seconds_ago)
        with db_api.get_engine().begin() as conn:
            conn.execute(models.Node.__table__.update()
                         .where(models.Node.__table__.c.id == node.id)
                         .values(provision_updated_at=past))
        return node

    def _check(self, manager=None):
        (manager or self.manager)._check_wait_timeouts(self.ctx)

    def _get(self, node):
        return objects.Node.get_by_id(self.ctx, node.id)

    def test_periodic_collected(self):
        self.config(check_provision_state_interval=11, group='conductor')
        spacing = {t.__qualname__: t._periodic_spacing for t, _a, _k in
                   periodics.collect_for_conductor(self.manager, self.ctx)}
        self.assertEqual(11, spacing['ConductorManager._check_wait_timeouts'])

    def test_deploy_wait_times_out(self):
        old = self._waiting(states.DEPLOYWAIT, 601)
        recent = self._waiting(states.DEPLOYWAIT, 500)
        self._check()
        node = self._get(old)
        self.assertEqual(states.DEPLOYFAIL, node.provision_state)
        self.assertEqual(states.ACTIVE, node.target_provision_state)
        self.assertIn('Timeout reached while waiting for callback',
                      node.last_error)
        self.assertIn('600 seconds', node.last_error)
        self.assertIsNone(node.reservation)
        self.assertFalse(node.maintenance)
        history = objects.NodeHistory.list_by_node_id(self.ctx, node.id)
        self.assertIn('Timeout reached', history[-1].event)
        self.assertEqual(states.DEPLOYWAIT,
                         self._get(recent).provision_state)

    def test_clean_wait_times_out_into_maintenance(self):
        node = self._waiting(states.CLEANWAIT, 301,
                             clean_step={'step': 'wait_for_agent',
                                         'interface': 'deploy'})
        self._waiting(states.DEPLOYWAIT, 301)
        self._check()
        node = self._get(node)
        self.assertEqual(states.CLEANFAIL, node.provision_state)
        self.assertTrue(node.maintenance)
        self.assertEqual(provisioning.CLEAN_FAILURE, node.fault)
        self.assertIn('wait_for_agent', node.last_error)
        self.assertEqual({}, node.clean_step)
        # 301 s is within the deploy timeout: that node still waits.
        self.assertEqual([states.DEPLOYWAIT], [
            n.provision_state for n in objects.Node.list(
                self.ctx, filters={'provision_state': states.DEPLOYWAIT})])

    def test_zero_disables(self):
        self.config(deploy_callback_timeout=0, group='conductor')
        node = self._waiting(states.DEPLOYWAIT, 10 ** 6)
        self._check()
        self.assertEqual(states.DEPLOYWAIT, self._get(node).provision_state)

    def test_maintenance_and_locked_nodes_left_alone(self):
        in_maintenance = self._waiting(states.DEPLOYWAIT, 601,
                                       maintenance=True)
        locked = self._waiting(states.CLEANWAIT, 601, reservation='other')
        self._check()
        self.assertEqual(states.DEPLOYWAIT,
                         self._get(in_maintenance).provision_state)
        self.assertEqual(states.CLEANWAIT, self._get(locked).provision_state)

    def test_each_conductor_times_out_its_own_nodes(self):
        other = self.start_conductor('other-host')
        # 20 random UUIDs all on one side of two: one chance in 500,000.
        nodes = [self._waiting(states.DEPLOYWAIT, 601) for _ in range(20)]
        ring = hash_ring.HashRingManager(self.conf, self.ctx)
        mine = {n.id for n in nodes
                if ring.get_host_for_node(n.uuid) == self.host}
        self.assertTrue(0 < len(mine) < len(nodes), mine)
        self._check()
        self.assertEqual(mine, {n.id for n in nodes if self._get(
            n).provision_state == states.DEPLOYFAIL})
        self._check(other)
        self.assertEqual({states.DEPLOYFAIL},
                         {self._get(n).provision_state for n in nodes})


class AsynchronousWorkTestCase(base.ConductorTestCase):
    """Power and provisioning calls return while a worker does the work."""

    def setUp(self):
        super().setUp()
        self.gate = base.Gate(self)
        self.manager.del_host()
        factory = driver_factory.DriverFactory(self.conf)
        factory.interfaces['power']['fake'] = base.SlowPower(self.gate)
        factory.interfaces['deploy']['fake'] = base.SlowDeploy(self.gate)
        self.manager.driver_factory = factory
        self.manager.init_host()

    def _entered(self):
        self.assertTrue(self.gate.entered.wait(30),
                        'the worker never reached the interface')

    def _get(self, node):
        return objects.Node.get_by_id(self.ctx, node.id)

    def test_power_call_returns_while_worker_works(self):
        node = self.make_node(power_state=states.POWER_OFF)
        self.rpc.change_node_power_state(self.ctx, node.id, states.POWER_ON)
        # Saved before the call returned: a client polling after the 202
        # sees the target, and the worker holds the lock.
        node = self._get(node)
        self.assertEqual(states.POWER_OFF, node.power_state)
        self.assertEqual(states.POWER_ON, node.target_power_state)
        self.assertEqual(self.host, node.reservation)
        self._entered()
        self.assertRaises(exception.NodeLocked,
                          self.rpc.change_node_power_state, self.ctx,
                          node.id, states.POWER_OFF)
        self.gate.opened.set()
        node = conductors.wait_unlocked(self.ctx, node.id)
        self.assertEqual(states.POWER_ON, node.power_state)
        self.assertIsNone(node.target_power_state)
        self.assertIsNone(node.last_error)

    def test_deploy_call_returns_while_worker_works(self):
        node = self.make_node(provision_state=states.AVAILABLE)
        self.rpc.do_provisioning_action(self.ctx, node.id, 'active')
        node = self._get(node)
        self.assertEqual(states.DEPLOYING, node.provision_state)
        self.assertEqual(states.ACTIVE, node.target_provision_state)
        self.assertEqual(self.host, node.reservation)
        self._entered()
        self.assertRaises(exception.NodeLocked,
                          self.rpc.do_provisioning_action, self.ctx,
                          node.id, 'deleted')
        self.assertEqual(states.DEPLOYING,
                         self._get(node).provision_state)
        self.gate.opened.set()
        node = conductors.wait_unlocked(self.ctx, node.id)
        self.assertEqual(states.ACTIVE, node.provision_state)
        self.assertIsNone(node.target_provision_state)
        self.assertTrue(node.driver_internal_info['fake_deployed'])

    def test_failure_in_worker_ends_in_failure_state(self):
        node = self.make_node(provision_state=states.AVAILABLE,
                              driver_info={'fake_fail_deploy': True})
        self.rpc.do_provisioning_action(self.ctx, node.id, 'active')
        self._entered()
        self.assertEqual(states.DEPLOYING, self._get(node).provision_state)
        self.gate.opened.set()
        node = conductors.wait_unlocked(self.ctx, node.id)
        self.assertEqual(states.DEPLOYFAIL, node.provision_state)
        self.assertEqual(states.ACTIVE, node.target_provision_state)
        self.assertIn('fake_fail_deploy', node.last_error)

    def test_unexpected_error_in_worker(self):
        # A flow that raises instead of recording its failure is a bug;
        # the node must still end in the failure state, unlocked.
        self.gate.opened.set()

        def broken(conf, task):
            raise RuntimeError('bug')

        node = self.make_node(provision_state=states.AVAILABLE)
        with mock.patch.dict(provisioning.FLOWS, {states.DEPLOY: broken}):
            self.rpc.do_provisioning_action(self.ctx, node.id, 'active')
            node = conductors.wait_unlocked(self.ctx, node.id)
        self.assertEqual(states.DEPLOYFAIL, node.provision_state)
        self.assertIn('bug', node.last_error)

    def test_move_without_work_needs_no_worker(self):
        node = self.make_node(provision_state=states.AVAILABLE)
        self.rpc.do_provisioning_action(self.ctx, node.id, 'manage')
        node = self._get(node)
        self.assertEqual(states.MANAGEABLE, node.provision_state)
        self.assertIsNone(node.target_provision_state)
        self.assertIsNone(node.reservation)

    def _fill_pool(self):
        """Occupy every worker and the whole queue of a pool of 2."""
        self.manager.del_host()
        self.config(workers_pool_size=2, group='conductor')
        self.manager.init_host()
        busy = threading.Semaphore(0)

        def work():
            busy.release()
            self.gate.opened.wait(60)
        for _ in range(2):
            self.manager.spawn_worker(work)
        for _ in range(2):
            self.assertTrue(busy.acquire(timeout=30))
        # Both threads are busy: what is queued now stays queued.
        while True:
            try:
                self.manager.spawn_worker(work)
            except exception.NoFreeConductorWorker:
                break

    def test_full_pool_leaves_node_as_it_was(self):
        deploying = self.make_node(provision_state=states.AVAILABLE)
        powering = self.make_node(power_state=states.POWER_OFF)
        self._fill_pool()
        self.assertRaises(exception.NoFreeConductorWorker,
                          self.rpc.do_provisioning_action, self.ctx,
                          deploying.id, 'active')
        node = self._get(deploying)
        self.assertEqual(states.AVAILABLE, node.provision_state)
        self.assertIsNone(node.target_provision_state)
        self.assertIsNone(node.reservation)
        self.assertEqual(provisioning.NO_FREE_WORKER, node.last_error)
        self.assertRaises(exception.NoFreeConductorWorker,
                          self.rpc.change_node_power_state, self.ctx,
                          powering.id, states.POWER_ON)
        node = self._get(powering)
        self.assertIsNone(node.target_power_state)
        self.assertIsNone(node.reservation)
        self.assertEqual(provisioning.NO_FREE_WORKER, node.last_error)

    def test_stop_lets_work_in_flight_finish(self):
        node = self.make_node(provision_state=states.AVAILABLE)
        self.rpc.do_provisioning_action(self.ctx, node.id, 'active')
        self._entered()
        stopper = threading.Thread(target=self.manager.del_host)
        stopper.start()
        self.addCleanup(stopper.join, 60)
        # del_host waits for the pool: the deployment is still running.
        stopper.join(0.2)
        self.assertTrue(stopper.is_alive())
        self.gate.opened.set()
        stopper.join(60)
        self.assertFalse(stopper.is_alive())
        node = self._get(node)
        self.assertEqual(states.ACTIVE, node.provision_state)
        self.assertIsNone(node.reservation)


class ConductorGroupTestCase(base.ConductorTestCase):

    def test_node_in_group_without_conductor(self):
        node = self.make_node(provision_state=states.MANAGEABLE)
        node.conductor_group = 'Nowhere'
        node = self.rpc.update_node(self.ctx, node)
        self.assertEqual('nowhere', node.conductor_group)
        # Work that needs the node's hardware waits for a conductor of
        # its group ...
        self.assertRaises(exception.TemporaryFailure,
                          self.rpc.change_node_power_state, self.ctx,
                          node.id, states.POWER_ON)
        # ... but the node can still be moved back, or deleted.
        node.conductor_group = ''
        self.assertEqual('', self.rpc.update_node(self.ctx,
                                                  node).conductor_group)
        self.rpc.change_node_power_state(self.ctx, node.id, states.POWER_ON)
        conductors.wait_unlocked(self.ctx, node.id)
        self.rpc.destroy_node(self.ctx, node.id)
