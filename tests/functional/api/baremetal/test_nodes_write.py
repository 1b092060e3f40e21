"""Writing nodes: create, patch, delete, traits, states, maintenance."""

from oslo_utils import uuidutils

from alloc_framework.common import states
from alloc_framework.objects.baremetal import allocation as allocation_obj
from alloc_framework.objects.baremetal import node as node_obj
from tests import base as tests_base
from tests.functional.api.baremetal import base


class NodeWriteTestCase(base.BaremetalTestCase):

    def wait_state(self, uuid, field, value, timeout=30):
        """Poll the node until ``field`` is ``value`` and the work is done.

        The API answers 202 once the conductor started the work; the
        worker holds the node lock until the work ends.
        """
        def settled():
            body = self.get('/v1/nodes/%s' % uuid, status=200).json_body
            done = (body[field] == value and body['reservation'] is None
                    and not body['target_power_state'])
            return body if done else None
        return tests_base.wait_for(settled, 'node %s: %s to be %r'
                                   % (uuid, field, value), timeout=timeout)

    def allocate(self, node):
        allocation = allocation_obj.Allocation(
            self.context, resource_class=node.resource_class,
            node_id=node.id, state='active', uuid=uuidutils.generate_uuid())
        allocation.create(self.context)
        node.allocation_id = allocation.id
        node.instance_uuid = allocation.uuid
        node.save(self.context)
        return allocation


class TestCreate(NodeWriteTestCase):

    def test_create(self):
        resp = self.post('/v1/nodes', {'driver': 'fake-hardware',
                                       'name': 'node-1',
                                       'resource_class': 'gold',
                                       'driver_info': {'ipmi_password': 'x'},
                                       'properties': {'cpus': 4},
                                       'owner': 'p1'}, status=201)
        body = resp.json_body
        self.assertEqual('http://localhost/v1/nodes/%s' % body['uuid'],
                         resp.headers['Location'])
        self.assertEqual('enroll', body['provision_state'])
        self.assertEqual('node-1', body['name'])
        self.assertEqual('gold', body['resource_class'])
        self.assertEqual({'ipmi_password': '******'}, body['driver_info'])
        self.assertEqual('p1', body['owner'])
        self.assertIsNone(body['allocation_uuid'])
        self.get('/v1/nodes/node-1', status=200)

    def test_create_with_uuid(self):
        uuid = uuidutils.generate_uuid()
        body = self.post('/v1/nodes', {'driver': 'fake-hardware',
                                       'uuid': uuid}, status=201).json_body
        self.assertEqual(uuid, body['uuid'])
        resp = self.post('/v1/nodes', {'driver': 'fake-hardware',
                                       'uuid': uuid})
        self.assertError(resp, 409)

    def test_old_version_creates_available_nodes(self):
        body = self.post('/v1/nodes', {'driver': 'fake-hardware'},
                         version='1.10', status=201).json_body
        self.assertEqual('available', body['provision_state'])

    def test_create_errors(self):
        cases = [
            ({}, 'driver'),
            ({'driver': 'fake-hardware', 'provision_state': 'active'},
             'provision_state'),
            ({'driver': 'fake-hardware', 'allocation_uuid':
              uuidutils.generate_uuid()}, 'allocation_uuid'),
            ({'driver': 'fake-hardware', 'bogus': 1}, 'bogus'),
            ({'driver': 'fake-hardware', 'name': 'bad name'}, 'name'),
            ({'driver': 'fake-hardware', 'uuid': 'nope'}, 'uuid'),
            ({'driver': 'fake-hardware', 'driver_info': []}, 'driver_info'),
            ({'driver': 'fake-hardware', 'maintenance': 'yes'},
             'maintenance'),
        ]
        for body, field in cases:
            resp = self.post('/v1/nodes', body)
            self.assertError(resp, 400, contains=field)
        self.assertEqual([], node_obj.Node.list(self.context))

    def test_unknown_driver_is_refused(self):
        resp = self.post('/v1/nodes', {'driver': 'no-such-driver'})
        self.assertIn(resp.status_int, (400, 404), resp.text)
        self.assertEqual([], node_obj.Node.list(self.context))

    def test_duplicate_name_is_409(self):
        self.post('/v1/nodes', {'driver': 'fake-hardware', 'name': 'n'},
                  status=201)
        resp = self.post('/v1/nodes', {'driver': 'fake-hardware',
                                       'name': 'n'})
        self.assertError(resp, 409)

    def test_field_of_later_version_is_406(self):
        resp = self.post('/v1/nodes', {'driver': 'fake-hardware',
                                       'resource_class': 'x'},
                         version='1.20')
        self.assertError(resp, 406)


class TestInterfaces(NodeWriteTestCase):
    """The per-kind interface fields, each from its version."""

    def test_create_with_interfaces(self):
        body = self.post('/v1/nodes', {'driver': 'fake-hardware',
                                       'boot_interface': 'no-boot',
                                       'bios_interface': 'no-bios'},
                         version='1.85', status=201).json_body
        self.assertEqual('no-boot', body['boot_interface'])
        self.assertEqual('no-bios', body['bios_interface'])
        self.assertEqual('fake', body['power_interface'])
        # No firmware_interface before the version that adds it.
        self.assertNotIn('firmware_interface', body)
        node = node_obj.Node.get_by_uuid(self.context, body['uuid'])
        self.assertEqual('fake', node.firmware_interface)

    def test_firmware_interface_from_1_86(self):
        resp = self.post('/v1/nodes', {'driver': 'fake-hardware',
                                       'firmware_interface': 'no-firmware'},
                         version='1.85')
        self.assertError(resp, 406, 'baremetal.version_not_acceptable',
                         'firmware_interface')
        body = self.post('/v1/nodes', {'driver': 'fake-hardware',
                                       'firmware_interface': 'no-firmware'},
                         version='1.86', status=201).json_body
        self.assertEqual('no-firmware', body['firmware_interface'])
        path = '/v1/nodes/%s' % body['uuid']
        patch = [{'op': 'replace', 'path': '/firmware_interface',
                  'value': 'fake'}]
        resp = self.patch(path, patch, version='1.85')
        self.assertError(resp, 406, 'baremetal.version_not_acceptable',
                         'firmware_interface')
        body = self.patch(path, patch, version='1.86', status=200).json_body
        self.assertEqual('fake', body['firmware_interface'])
        resp = self.patch(path, [{'op': 'replace',
                                  'path': '/firmware_interface',
                                  'value': 'nope'}], version='1.86')
        self.assertEqual(400, resp.status_int, resp.text)
        self.assertIn('nope', resp.text)
        # Removing it goes back to the hardware type's default.
        body = self.patch(path, [{'op': 'remove',
                                  'path': '/firmware_interface'}],
                          version='1.86', status=200).json_body
        self.assertEqual('fake', body['firmware_interface'])

    def test_service_step_is_read_only(self):
        node = self.make_node()
        resp = self.patch('/v1/nodes/%s' % node.uuid, [
            {'op': 'add', 'path': '/service_step', 'value': {'x': 1}}])
        self.assertError(resp, 400, 'baremetal.read_only_field',
                         'service_step')

    def test_bios_interface_from_1_40(self):
        resp = self.post('/v1/nodes', {'driver': 'fake-hardware',
                                       'bios_interface': 'fake'},
                         version='1.39')
        self.assertError(resp, 406)
        body = self.post('/v1/nodes', {'driver': 'fake-hardware',
                                       'boot_interface': 'fake'},
                         version='1.31', status=201).json_body
        self.assertEqual('fake', body['boot_interface'])
        self.assertNotIn('bios_interface', body)
        resp = self.patch('/v1/nodes/%s' % body['uuid'], [
            {'op': 'add', 'path': '/bios_interface', 'value': 'no-bios'}],
            version='1.39')
        self.assertError(resp, 406)
        body = self.patch('/v1/nodes/%s' % body['uuid'], [
            {'op': 'add', 'path': '/bios_interface', 'value': 'no-bios'}],
            version='1.40', status=200).json_body
        self.assertEqual('no-bios', body['bios_interface'])

    def test_patch_interfaces(self):
        node = self.make_node(provision_state=states.MANAGEABLE)
        path = '/v1/nodes/%s' % node.uuid
        body = self.patch(path, [
            {'op': 'replace', 'path': '/boot_interface', 'value': 'no-boot'},
        ], status=200).json_body
        self.assertEqual('no-boot', body['boot_interface'])
        # Removing the value goes back to the hardware type's default.
        body = self.patch(path, [
            {'op': 'remove', 'path': '/boot_interface'}],
            status=200).json_body
        self.assertEqual('fake', body['boot_interface'])
        resp = self.patch(path, [
            {'op': 'replace', 'path': '/bios_interface', 'value': 'nope'}])
        self.assertEqual(400, resp.status_int, resp.text)
        self.assertIn('nope', resp.text)


class TestPatch(NodeWriteTestCase):

    def test_patch_fields(self):
        node = self.make_node()
        body = self.patch('/v1/nodes/%s' % node.uuid, [
            {'op': 'add', 'path': '/name', 'value': 'renamed'},
            {'op': 'add', 'path': '/extra/a', 'value': 1},
            {'op': 'replace', 'path': '/resource_class', 'value': 'gold'},
            {'op': 'add', 'path': '/driver_info/ipmi_password',
             'value': 'secret'},
        ], status=200).json_body
        self.assertEqual('renamed', body['name'])
        self.assertEqual({'a': 1}, body['extra'])
        self.assertEqual('gold', body['resource_class'])
        self.assertEqual('******', body['driver_info']['ipmi_password'])
        node = node_obj.Node.get_by_id(self.context, node.id)
        self.assertEqual('secret', node.driver_info['ipmi_password'])
        body = self.patch('/v1/nodes/renamed', [
            {'op': 'remove', 'path': '/extra/a'},
            {'op': 'remove', 'path': '/name'}], status=200).json_body
        self.assertIsNone(body['name'])
        self.assertEqual({}, body['extra'])

    def test_read_only_fields_are_400(self):
        node = self.make_node()
        for field in ('allocation_uuid', 'provision_state', 'uuid',
                      'power_state', 'traits', 'driver_internal_info',
                      'reservation', 'created_at'):
            resp = self.patch('/v1/nodes/%s' % node.uuid, [
                {'op': 'replace', 'path': '/' + field, 'value': 'x'}])
            self.assertError(resp, 400, 'baremetal.read_only_field',
                             '/' + field)

    def test_bad_patches_are_400(self):
        node = self.make_node()
        path = '/v1/nodes/%s' % node.uuid
        for patch in ({'op': 'add'}, [{'op': 'move', 'path': '/name'}],
                      [{'op': 'add', 'path': 'name', 'value': 'x'}],
                      [{'op': 'add', 'path': '/name'}],
                      [{'op': 'remove', 'path': '/extra/missing'}],
                      [{'op': 'add', 'path': '/bogus', 'value': 1}],
                      [{'op': 'add', 'path': '/name', 'value': 'a b'}],
                      [{'op': 'add', 'path': '/instance_uuid',
                        'value': 'nope'}], []):
            resp = self.patch(path, patch)
            self.assertEqual(400, resp.status_int, '%s: %s'
                             % (patch, resp.text))

    def test_set_instance_uuid_creates_no_allocation(self):
        node = self.make_node()
        instance = uuidutils.generate_uuid()
        body = self.patch('/v1/nodes/%s' % node.uuid, [
            {'op': 'add', 'path': '/instance_uuid', 'value': instance}],
            status=200).json_body
        self.assertEqual(instance, body['instance_uuid'])
        self.assertIsNone(body['allocation_uuid'])
        self.assertEqual([], allocation_obj.Allocation.list(self.context))

    def test_unset_instance_uuid_deletes_allocation(self):
        node = self.make_node()
        allocation = self.allocate(node)
        body = self.patch('/v1/nodes/%s' % node.uuid, [
            {'op': 'remove', 'path': '/instance_uuid'}],
            status=200).json_body
        self.assertIsNone(body['instance_uuid'])
        self.assertIsNone(body['allocation_uuid'])
        self.assertRaises(Exception, allocation_obj.Allocation.get_by_uuid,
                          self.context, allocation.uuid)

    def test_unset_instance_uuid_of_active_node_is_409(self):
        node = self.make_node(provision_state=states.ACTIVE)
        allocation = self.allocate(node)
        resp = self.patch('/v1/nodes/%s' % node.uuid, [
            {'op': 'remove', 'path': '/instance_uuid'}])
        self.assertError(resp, 409)
        node = node_obj.Node.get_by_id(self.context, node.id)
        self.assertEqual(allocation.uuid, node.instance_uuid)
        self.assertEqual(allocation.id, node.allocation_id)

    def test_unset_instance_uuid_of_active_node_in_maintenance(self):
        node = self.make_node(provision_state=states.ACTIVE,
                              maintenance=True)
        self.allocate(node)
        body = self.patch('/v1/nodes/%s' % node.uuid, [
            {'op': 'remove', 'path': '/instance_uuid'}],
            status=200).json_body
        self.assertIsNone(body['allocation_uuid'])
        self.assertEqual([], allocation_obj.Allocation.list(self.context))


class TestDelete(NodeWriteTestCase):

    def test_delete(self):
        node = self.make_node()
        self.delete('/v1/nodes/%s' % node.uuid, status=204)
        self.assertError(self.get('/v1/nodes/%s' % node.uuid), 404)
        self.assertError(self.delete('/v1/nodes/%s' % node.uuid), 404)

    def test_delete_deletes_allocation(self):
        node = self.make_node(maintenance=True)
        allocation = self.allocate(node)
        self.delete('/v1/nodes/%s' % node.uuid, status=204)
        self.assertError(self.get('/v1/allocations/%s' % allocation.uuid),
                         404)


class TestTraits(NodeWriteTestCase):

    def test_traits(self):
        node = self.make_node()
        path = '/v1/nodes/%s/traits' % node.uuid
        self.put(path, {'traits': ['CUSTOM_A', 'HW_CPU_X86_AVX']},
                 status=204)
        self.assertEqual({'traits': ['CUSTOM_A', 'HW_CPU_X86_AVX']},
                         self.get(path, status=200).json_body)
        self.put(path + '/CUSTOM_B', status=204)
        self.delete(path + '/CUSTOM_A', status=204)
        self.assertEqual({'traits': ['CUSTOM_B', 'HW_CPU_X86_AVX']},
                         self.get(path, status=200).json_body)
        self.assertError(self.delete(path + '/CUSTOM_A'), 404)
        self.delete(path, status=204)
        self.assertEqual({'traits': []}, self.get(path).json_body)

    def test_invalid_traits(self):
        node = self.make_node()
        path = '/v1/nodes/%s/traits' % node.uuid
        self.assertError(self.put(path, {'traits': ['lower']}), 400)
        self.assertError(self.put(path, {'traits': 'CUSTOM_A'}), 400)
        self.assertError(self.put(path, {'other': []}), 400)
        self.assertError(self.put(path + '/not_valid'), 400)
        self.assertError(self.put(path, {'traits': ['CUSTOM_%d' % i
                                                    for i in range(51)]}),
                         400)


class TestStates(NodeWriteTestCase):

    def test_provision_cycle(self):
        node = self.make_node(provision_state=states.ENROLL)
        path = '/v1/nodes/%s/states/provision' % node.uuid
        resp = self.put(path, {'target': 'manage'}, status=202)
        self.assertEqual('http://localhost/v1/nodes/%s/states' % node.uuid,
                         resp.headers['Location'])
        self.wait_state(node.uuid, 'provision_state', 'manageable')
        self.put(path, {'target': 'clean', 'clean_steps': [
            {'interface': 'deploy', 'step': 'erase_devices'}]}, status=202)
        self.wait_state(node.uuid, 'provision_state', 'manageable')
        self.put(path, {'target': 'provide'}, status=202)
        self.wait_state(node.uuid, 'provision_state', 'available')
        self.put(path, {'target': 'active'}, status=202)
        self.wait_state(node.uuid, 'provision_state', 'active')
        self.put(path, {'target': 'deleted'}, status=202)
        self.wait_state(node.uuid, 'provision_state', 'available')
        self.put(path, {'target': 'deploy'}, status=202)
        self.wait_state(node.uuid, 'provision_state', 'active')
        self.put(path, {'target': 'undeploy'}, status=202)
        self.wait_state(node.uuid, 'provision_state', 'available')

    def test_provision_errors(self):
        node = self.make_node()
        path = '/v1/nodes/%s/states/provision' % node.uuid
        self.assertError(self.put(path, {'target': 'fly'}), 400)
        self.assertError(self.put(path, {}), 400)
        self.assertError(self.put(path, {'target': 'clean'}), 400)
        self.assertError(self.put(path, {'target': 'provide',
                                         'clean_steps': []}), 400)
        self.assertError(self.put(path, {'target': 'provide'}), 400,
                         'baremetal.invalid_state_requested')
        self.assertError(self.put(path, {'target': 'deploy'},
                                  version='1.72'), 406)

    def test_provision_state_visible_with_the_202(self):
        node = self.make_node()
        self.put('/v1/nodes/%s/states/provision' % node.uuid,
                 {'target': 'active'}, status=202)
        # The first move is saved before the answer: a client polling
        # after the 202 never sees the old state without a target.
        body = self.get('/v1/nodes/%s' % node.uuid).json_body
        self.assertIn((body['provision_state'],
                       body['target_provision_state']),
                      [('deploying', 'active'), ('active', None)])
        body = self.wait_state(node.uuid, 'provision_state', 'active')
        self.assertIsNone(body['target_provision_state'])
        self.assertIsNone(body['last_error'])

    def test_provision_failure_visible(self):
        node = self.make_node(driver_info={'fake_fail_deploy': True})
        self.put('/v1/nodes/%s/states/provision' % node.uuid,
                 {'target': 'active'}, status=202)
        body = self.wait_state(node.uuid, 'provision_state', 'deploy failed')
        self.assertEqual('active', body['target_provision_state'])
        self.assertIn('fake_fail_deploy', body['last_error'])

    def test_power(self):
        node = self.make_node()
        path = '/v1/nodes/%s/states/power' % node.uuid
        self.put(path, {'target': 'power on'}, status=202)
        body = self.get('/v1/nodes/%s' % node.uuid).json_body
        self.assertIn((body['power_state'], body['target_power_state']),
                      [('power off', 'power on'), ('power on', None)])
        self.wait_state(node.uuid, 'power_state', 'power on')
        self.put(path, {'target': 'rebooting'}, status=202)
        self.wait_state(node.uuid, 'power_state', 'power on')
        self.put(path, {'target': 'power off'}, status=202)
        self.wait_state(node.uuid, 'power_state', 'power off')
        self.assertError(self.put(path, {'target': 'sleep'}), 400)

    def test_boot_device(self):
        node = self.make_node()
        path = '/v1/nodes/%s/management/boot_device' % node.uuid
        self.assertEqual({'boot_device': None, 'persistent': False},
                         self.get(path, status=200).json_body)
        self.assertEqual(
            {'supported_boot_devices': ['pxe', 'disk', 'cdrom', 'bios']},
            self.get(path + '/supported', status=200).json_body)
        self.put(path, {'boot_device': 'cdrom', 'persistent': True},
                 status=204)
        self.assertEqual({'boot_device': 'cdrom', 'persistent': True},
                         self.get(path, status=200).json_body)
        self.assertError(self.put(path, {'boot_device': 'tape'}), 400,
                         'baremetal.invalid_parameter_value', 'tape')
        self.assertError(self.put(path, {'boot_device': 5}), 400,
                         'baremetal.invalid_field', 'boot_device')
        self.assertError(self.put(path, ['pxe']), 400)
        self.assertError(self.get('/v1/nodes/nope/management/boot_device'),
                         404)

    def test_maintenance(self):
        node = self.make_node()
        path = '/v1/nodes/%s/maintenance' % node.uuid
        self.put(path, {'reason': 'broken fan'}, status=202)
        body = self.get('/v1/nodes/%s' % node.uuid).json_body
        self.assertTrue(body['maintenance'])
        self.assertEqual('broken fan', body['maintenance_reason'])
        self.delete(path, status=202)
        body = self.get('/v1/nodes/%s' % node.uuid).json_body
        self.assertFalse(body['maintenance'])
        self.assertIsNone(body['maintenance_reason'])
        self.assertError(self.put(path, {'reason': 5}), 400)

    def test_history(self):
        node = self.make_node(provision_state=states.ENROLL)
        self.put('/v1/nodes/%s/states/provision' % node.uuid,
                 {'target': 'provide'})
        from alloc_framework.objects.baremetal import node_history
        event = node_history.NodeHistory.record(
            self.context, node, 'something happened')
        body = self.get('/v1/nodes/%s/history' % node.uuid,
                        status=200).json_body
        uuids = [e['uuid'] for e in body['history']]
        self.assertIn(event.uuid, uuids)
        item = body['history'][uuids.index(event.uuid)]
        self.assertEqual({'uuid', 'created_at', 'severity', 'event',
                          'links'}, set(item))
        shown = self.get('/v1/nodes/%s/history/%s' % (node.uuid, event.uuid),
                         status=200).json_body
        self.assertEqual('something happened', shown['event'])
        self.assertIn('event_type', shown)
        self.assertError(self.get('/v1/nodes/%s/history' % node.uuid,
                                  version='1.77'), 404)
        self.assertError(self.get('/v1/nodes/%s/history/%s'
                                  % (node.uuid, uuidutils.generate_uuid())),
                         404)
