"""Object versions follow their fields: the fingerprint check.

Each registered object has a fingerprint: its version and a hash of its
fields (names and types) and remotable methods. Changing a field without
bumping the version changes the hash but not the version, and fails
here. After bumping the version (with a ``# Version x.y: ...`` line and,
when older peers need it, ``obj_make_compatible``), put the new
fingerprint in ``EXPECTED_FINGERPRINTS``; the failure message shows it.
"""

from oslo_versionedobjects import fixture

from alloc_framework.objects import baremetal
from alloc_framework.objects.baremetal import base as obj_base
from tests import base

EXPECTED_FINGERPRINTS = {
    'Allocation': '1.1-b1aa2881c7ce2ae8b054441a4f7e55d0',
    'AllocationCRUDPayload': '1.0-195b8b5078af9adfb50c1aa66ff676a4',
    'AllocationGroup': '1.0-bce0477ff23bce952e2078b476d6b4b7',
    'Conductor': '1.0-c1d71fbbca640666418d95deb6070523',
    'DeferredAction': '1.1-f250fb01a358bbf5c7ea3ba80e7daafe',
    'DeferredActionPayload': '1.0-ef25ea0dc0644bdfd49d7407c792b157',
    'FirmwareComponent': '1.1-7ecd119471acde3f5964a0b8dfafcb3b',
    'Node': '1.4-ca57e14b48d54658278f732e42865e8a',
    'NodeHistory': '1.2-7a6f5f44bab03628fa2a0d7ecc1bf7c8',
}


def project_classes():
    """``{name: [classes]}`` of this project's registered objects.

    The registry of oslo.versionedobjects is shared by every project in
    the process: keep ours only.
    """
    return {name: classes for name, classes in
            obj_base.AllocObjectRegistry.obj_classes().items()
            if classes[0].OBJ_PROJECT_NAMESPACE ==
            obj_base.OBJ_PROJECT_NAMESPACE}


class TestObjectVersions(base.TestCase):

    def test_versions(self):
        checker = fixture.ObjectVersionChecker(project_classes())
        expected, actual = checker.test_hashes(EXPECTED_FINGERPRINTS)
        self.assertEqual(
            expected, actual,
            'The fields or remotable methods of these objects changed: '
            'bump their VERSION, then update EXPECTED_FINGERPRINTS with '
            'the new fingerprints (the second dict).')

    def test_no_object_relationships(self):
        # Objects do not nest others; a nested object would need its
        # version in the parent's fingerprint (obj_relationships).
        checker = fixture.ObjectVersionChecker(project_classes())
        self.assertEqual({}, checker.get_dependency_tree())

    def test_node_1_0_has_no_new_interface_fields(self):
        node = baremetal.Node(driver='fake-hardware', power_interface='fake',
                              boot_interface='fake', bios_interface='fake',
                              firmware_interface='fake')
        data = node.obj_to_primitive(target_version='1.0')[
            'alloc_framework_object.data']
        self.assertEqual('fake', data['power_interface'])
        for field in ('boot_interface', 'bios_interface',
                      'firmware_interface'):
            self.assertNotIn(field, data)

    def test_node_1_1_has_no_shard_or_parent_node(self):
        node = baremetal.Node(driver='fake-hardware', shard='s1',
                              parent_node='1be26c0b-03f2-4d2e-ae87-'
                                          'c02d7f33c123',
                              boot_interface='fake')
        data = node.obj_to_primitive(target_version='1.1')[
            'alloc_framework_object.data']
        self.assertEqual('fake', data['boot_interface'])
        self.assertNotIn('shard', data)
        self.assertNotIn('parent_node', data)
        full = node.obj_to_primitive()['alloc_framework_object.data']
        self.assertEqual('s1', full['shard'])

    def test_node_1_2_has_no_service_step(self):
        node = baremetal.Node(driver='fake-hardware', firmware_interface='x',
                              service_step={'step': 'update'})
        data = node.obj_to_primitive(target_version='1.2')[
            'alloc_framework_object.data']
        self.assertEqual('x', data['firmware_interface'])
        self.assertNotIn('service_step', data)

    def test_node_1_3_has_no_power_off_instance_name_or_health(self):
        node = baremetal.Node(driver='fake-hardware', service_step={},
                              disable_power_off=True, instance_name='vm',
                              health='OK')
        data = node.obj_to_primitive(target_version='1.3')[
            'alloc_framework_object.data']
        self.assertEqual({}, data['service_step'])
        for field in ('disable_power_off', 'instance_name', 'health'):
            self.assertNotIn(field, data)

    def test_node_history_1_0_has_no_project(self):
        event = baremetal.NodeHistory(event='e', user='u', project='p')
        data = event.obj_to_primitive(target_version='1.0')[
            'alloc_framework_object.data']
        self.assertEqual('u', data['user'])
        self.assertNotIn('project', data)

    def test_node_history_1_1_has_no_state(self):
        event = baremetal.NodeHistory(
            event='e', project='p', state='deploy failed',
            target_provision_state='active', duration_seconds=3)
        data = event.obj_to_primitive(target_version='1.1')[
            'alloc_framework_object.data']
        self.assertEqual('p', data['project'])
        for field in ('state', 'target_provision_state',
                      'duration_seconds'):
            self.assertNotIn(field, data)
        self.assertEqual(3, event.obj_to_primitive()[
            'alloc_framework_object.data']['duration_seconds'])

    def test_firmware_component_1_0_has_no_identity(self):
        component = baremetal.FirmwareComponent(
            component='bmc', initial_version='1', vendor='v', model='m',
            serial_number='s')
        data = component.obj_to_primitive(target_version='1.0')[
            'alloc_framework_object.data']
        self.assertEqual('bmc', data['component'])
        for field in ('vendor', 'model', 'serial_number'):
            self.assertNotIn(field, data)

    def test_deferred_action_1_0_has_no_flow(self):
        action = baremetal.DeferredAction(call='task.driver.power.x',
                                          flow='service')
        data = action.obj_to_primitive(target_version='1.0')[
            'alloc_framework_object.data']
        self.assertEqual('task.driver.power.x', data['call'])
        self.assertNotIn('flow', data)
