"""Reading nodes: list, detail, show, fields, filters, pagination, masking."""

from oslo_utils import uuidutils

from alloc_framework.common import states
from alloc_framework.objects.baremetal import allocation as allocation_obj
from tests.functional.api.baremetal import base


class TestNodeRead(base.BaremetalTestCase):
    with_conductor = False

    def test_list_summary_fields(self):
        node = self.make_node(name='node-1')
        body = self.get('/v1/nodes', status=200).json_body
        self.assertEqual(1, len(body['nodes']))
        item = body['nodes'][0]
        self.assertEqual({'uuid', 'name', 'instance_uuid', 'power_state',
                          'provision_state', 'maintenance', 'links'},
                         set(item))
        self.assertEqual(node.uuid, item['uuid'])
        self.assertEqual('http://localhost/v1/nodes/%s' % node.uuid,
                         item['links'][0]['href'])
        self.assertEqual('self', item['links'][0]['rel'])
        self.assertEqual('bookmark', item['links'][1]['rel'])

    def test_detail_and_show(self):
        node = self.make_node(name='node-1', owner='p1', lessee='p2',
                              traits=['CUSTOM_GOLD'])
        detail = self.get('/v1/nodes/detail', status=200).json_body
        item = detail['nodes'][0]
        for field in ('driver', 'driver_info', 'properties', 'extra',
                      'resource_class', 'traits', 'conductor_group',
                      'owner', 'lessee', 'allocation_uuid', 'protected',
                      'retired', 'description', 'fault', 'created_at'):
            self.assertIn(field, item)
        self.assertEqual(['CUSTOM_GOLD'], item['traits'])
        shown = self.get('/v1/nodes/%s' % node.uuid, status=200).json_body
        self.assertEqual(item, shown)
        by_name = self.get('/v1/nodes/node-1', status=200).json_body
        self.assertEqual(node.uuid, by_name['uuid'])
        query = self.get('/v1/nodes?detail=True', status=200).json_body
        self.assertEqual(item, query['nodes'][0])

    def test_fields_gated_by_version(self):
        node = self.make_node()
        old = self.get('/v1/nodes/%s' % node.uuid, version='1.51',
                       status=200).json_body
        self.assertNotIn('allocation_uuid', old)
        self.assertIn('description', old)
        older = self.get('/v1/nodes/%s' % node.uuid, version='1.20',
                         status=200).json_body
        self.assertNotIn('resource_class', older)
        self.assertNotIn('traits', older)
        resp = self.get('/v1/nodes/%s?fields=lessee' % node.uuid,
                        version='1.64')
        self.assertError(resp, 406, 'baremetal.version_not_acceptable')

    def test_interface_fields_gated_by_version(self):
        node = self.make_node()
        path = '/v1/nodes/%s' % node.uuid
        shown = self.get(path, version='1.30', status=200).json_body
        self.assertNotIn('power_interface', shown)
        self.assertNotIn('boot_interface', shown)
        shown = self.get(path, version='1.31', status=200).json_body
        self.assertIn('power_interface', shown)
        self.assertIn('boot_interface', shown)
        self.assertNotIn('bios_interface', shown)
        shown = self.get(path, version='1.40', status=200).json_body
        self.assertIn('bios_interface', shown)
        self.assertNotIn('firmware_interface', shown)
        shown = self.get(path, version='1.85', status=200).json_body
        self.assertNotIn('firmware_interface', shown)
        shown = self.get(path, version='1.86', status=200).json_body
        self.assertIn('firmware_interface', shown)
        self.assertNotIn('service_step', shown)
        shown = self.get(path, version='1.87', status=200).json_body
        self.assertEqual({}, shown['service_step'])
        resp = self.get(path + '?fields=bios_interface', version='1.39')
        self.assertError(resp, 406, 'baremetal.version_not_acceptable')
        for field, below in (('firmware_interface', '1.85'),
                             ('service_step', '1.86')):
            resp = self.get(path + '?fields=' + field, version=below)
            self.assertError(resp, 406, 'baremetal.version_not_acceptable')
            resp = self.get('/v1/nodes?fields=' + field, version=below)
            self.assertError(resp, 406, 'baremetal.version_not_acceptable')

    def test_fields(self):
        node = self.make_node(name='n1')
        body = self.get('/v1/nodes/%s?fields=uuid,name' % node.uuid,
                        status=200).json_body
        self.assertEqual({'uuid', 'name', 'links'}, set(body))
        body = self.get('/v1/nodes?fields=uuid,driver',
                        status=200).json_body
        self.assertEqual({'uuid', 'driver', 'links'},
                         set(body['nodes'][0]))

    def test_fields_allocation_uuid(self):
        # Upstream answers 500 here.
        node = self.make_node()
        body = self.get('/v1/nodes?fields=allocation_uuid',
                        status=200).json_body
        self.assertEqual([{'allocation_uuid': None,
                           'links': body['nodes'][0]['links']}],
                         body['nodes'])
        allocation = allocation_obj.Allocation(
            self.context, resource_class='baremetal', node_id=node.id,
            state='active', uuid=uuidutils.generate_uuid())
        allocation.create(self.context)
        node.allocation_id = allocation.id
        node.instance_uuid = allocation.uuid
        node.save(self.context)
        body = self.get('/v1/nodes?fields=allocation_uuid,uuid',
                        status=200).json_body
        self.assertEqual(allocation.uuid,
                         body['nodes'][0]['allocation_uuid'])

    def test_invalid_fields(self):
        node = self.make_node()
        self.assertError(self.get('/v1/nodes?fields=bogus'), 400,
                         'baremetal.invalid_field', 'bogus')
        self.assertError(self.get('/v1/nodes/%s?fields=uuid,nope'
                                  % node.uuid), 400,
                         'baremetal.invalid_field', 'nope')

    def test_detail_with_fields_is_400(self):
        self.assertError(self.get('/v1/nodes?detail=True&fields=uuid'), 400)

    def test_not_found_and_invalid_identity(self):
        self.assertError(self.get('/v1/nodes/%s'
                                  % uuidutils.generate_uuid()), 404,
                         'baremetal.node_not_found')
        self.assertError(self.get('/v1/nodes/missing'), 404)
        self.assertError(self.get('/v1/nodes/bad%20name'), 400,
                         'baremetal.invalid_identity')

    def test_json_suffix_on_node(self):
        node = self.make_node(name='n1')
        body = self.get('/v1/nodes/n1.json', version='1.90',
                        status=200).json_body
        self.assertEqual(node.uuid, body['uuid'])
        self.get('/v1/nodes/%s.json' % node.uuid, version='1.90',
                 status=200)

    def test_secrets_masked(self):
        node = self.make_node(driver_info={'ipmi_password': 'p4ss',
                                           'ipmi_username': 'admin',
                                           'auth_token': 'tok'},
                              instance_info={'configdrive': 'secret'})
        body = self.get('/v1/nodes/%s' % node.uuid, status=200).json_body
        self.assertEqual('******', body['driver_info']['ipmi_password'])
        self.assertEqual('******', body['driver_info']['auth_token'])
        self.assertEqual('admin', body['driver_info']['ipmi_username'])
        self.assertNotIn('p4ss', self.get('/v1/nodes/detail').text)

    def test_filters(self):
        a = self.make_node(resource_class='gold', maintenance=True,
                           owner='p1', conductor_group='g1')
        b = self.make_node(resource_class='silver',
                           provision_state=states.MANAGEABLE,
                           instance_uuid=uuidutils.generate_uuid(),
                           lessee='p2', driver='other-driver',
                           fault='power failure')

        def uuids(query):
            body = self.get('/v1/nodes?' + query, status=200).json_body
            return sorted(n['uuid'] for n in body['nodes'])

        self.assertEqual([a.uuid], uuids('resource_class=gold'))
        self.assertEqual([a.uuid], uuids('maintenance=true'))
        self.assertEqual([b.uuid], uuids('maintenance=false'))
        self.assertEqual([b.uuid], uuids('associated=True'))
        self.assertEqual([a.uuid], uuids('associated=False'))
        self.assertEqual([b.uuid], uuids('provision_state=manageable'))
        self.assertEqual([a.uuid], uuids('owner=p1'))
        self.assertEqual([b.uuid], uuids('lessee=p2'))
        self.assertEqual([a.uuid], uuids('conductor_group=G1'))
        self.assertEqual([b.uuid], uuids('driver=other-driver'))
        self.assertEqual([b.uuid], uuids('fault=power%20failure'))
        self.assertEqual([b.uuid], uuids('instance_uuid=%s'
                                         % b.instance_uuid))
        self.assertError(self.get('/v1/nodes?maintenance=maybe'), 400)
        self.assertError(self.get('/v1/nodes?provision_state=nope'), 400)
        self.assertError(self.get('/v1/nodes?instance_uuid=nope'), 400)
        self.assertError(self.get('/v1/nodes?lessee=p2', version='1.64'),
                         406)

    def test_pagination(self):
        nodes = [self.make_node() for _ in range(3)]
        body = self.get('/v1/nodes?limit=2', status=200).json_body
        self.assertEqual([n.uuid for n in nodes[:2]],
                         [n['uuid'] for n in body['nodes']])
        self.assertIn('marker=%s' % nodes[1].uuid, body['next'])
        self.assertTrue(body['next'].startswith(
            'http://localhost/v1/nodes?'))
        body = self.get('/v1/nodes?limit=2&marker=%s' % nodes[1].uuid,
                        status=200).json_body
        self.assertEqual([nodes[2].uuid], [n['uuid']
                                           for n in body['nodes']])
        self.assertNotIn('next', body)
        body = self.get('/v1/nodes?sort_key=uuid&sort_dir=desc',
                        status=200).json_body
        self.assertEqual(sorted((n.uuid for n in nodes), reverse=True),
                         [n['uuid'] for n in body['nodes']])
        self.assertError(self.get('/v1/nodes?limit=-1'), 400)
        self.assertError(self.get('/v1/nodes?limit=x'), 400)
        self.assertError(self.get('/v1/nodes?sort_key=driver_info'), 400)
        self.assertError(self.get('/v1/nodes?sort_dir=up'), 400)
        self.assertError(self.get('/v1/nodes?marker=nope'), 400)

    def test_states(self):
        node = self.make_node()
        body = self.get('/v1/nodes/%s/states' % node.uuid,
                        status=200).json_body
        self.assertEqual(states.AVAILABLE, body['provision_state'])
        self.assertEqual(states.POWER_OFF, body['power_state'])
        self.assertIsNone(body['target_provision_state'])

    def test_traits_list(self):
        node = self.make_node(traits=['CUSTOM_B', 'CUSTOM_A'])
        body = self.get('/v1/nodes/%s/traits' % node.uuid,
                        status=200).json_body
        self.assertEqual({'traits': ['CUSTOM_A', 'CUSTOM_B']}, body)
        self.assertError(self.get('/v1/nodes/%s/traits' % node.uuid,
                                  version='1.36'), 404)
