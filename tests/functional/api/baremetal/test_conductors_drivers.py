"""Conductors, drivers (hardware types) and node validation.

``/v1/conductors`` (1.49), ``/v1/drivers`` (details from 1.30, ``fields``
from 1.77) and ``/v1/nodes/{node}/validate``, against the real API and an
in-process conductor, as upstream's API reference describes them.
"""

import datetime

from alloc_framework.objects.baremetal import conductor as conductor_obj
from tests.functional.api.baremetal import base


class WithIPMITestCase(base.BaremetalTestCase):
    """The conductor has the ``ipmi`` hardware type too."""

    def _start_conductor(self):
        self.config(enabled_hardware_types=['fake-hardware', 'ipmi'])
        return super()._start_conductor()


class TestConductors(base.BaremetalTestCase):

    def _register(self, hostname, group='', drivers=('ipmi',)):
        return conductor_obj.Conductor.register(
            self.context, hostname, conductor_group=group,
            drivers=list(drivers))

    def test_absent_before_1_49(self):
        self.assertError(self.get('/v1/conductors', version='1.48'), 404)
        self.assertError(self.get('/v1/conductors/test-host',
                                  version='1.48'), 404)
        self.get('/v1/conductors', version='1.49', status=200)

    def test_list_summary_and_detail(self):
        self._register('other-host', group='rack1')
        body = self.get('/v1/conductors', status=200).json_body
        self.assertEqual(['other-host', 'test-host'],
                         sorted(c['hostname'] for c in body['conductors']))
        other = [c for c in body['conductors']
                 if c['hostname'] == 'other-host'][0]
        self.assertEqual({'hostname', 'conductor_group', 'alive', 'links'},
                         set(other))
        self.assertEqual('rack1', other['conductor_group'])
        self.assertIs(True, other['alive'])
        self.assertTrue(other['links'][0]['href'].endswith(
            '/v1/conductors/other-host'))
        body = self.get('/v1/conductors?detail=True', status=200).json_body
        own = [c for c in body['conductors']
               if c['hostname'] == 'test-host'][0]
        self.assertEqual({'hostname', 'conductor_group', 'alive', 'drivers',
                          'created_at', 'updated_at', 'links'}, set(own))
        self.assertIn('fake-hardware', own['drivers'])

    def test_dead_and_offline_conductors_are_not_alive(self):
        dead = self._register('dead-host')
        gone = self._register('gone-host')
        gone.unregister()
        # A heartbeat older than the timeout: the conductor died.
        conductor_obj._update(
            self.context, 'dead-host', dead.registration,
            {'updated_at': datetime.datetime.utcnow()
             - datetime.timedelta(seconds=3600)})
        alive = {c['hostname']: c['alive'] for c in self.get(
            '/v1/conductors', status=200).json_body['conductors']}
        self.assertEqual({'test-host': True, 'dead-host': False,
                          'gone-host': False}, alive)

    def test_show_and_fields(self):
        shown = self.get('/v1/conductors/test-host', status=200).json_body
        self.assertEqual('test-host', shown['hostname'])
        self.assertIn('fake-hardware', shown['drivers'])
        self.assertIs(True, shown['alive'])
        shown = self.get('/v1/conductors/test-host?fields=hostname,alive',
                         status=200).json_body
        self.assertEqual({'hostname', 'alive', 'links'}, set(shown))
        listed = self.get('/v1/conductors?fields=drivers',
                          status=200).json_body['conductors']
        self.assertEqual([{'drivers', 'links'}], [set(c) for c in listed])

    def test_host_names_with_dots(self):
        self._register('cond-1.example.org')
        shown = self.get('/v1/conductors/cond-1.example.org',
                         status=200).json_body
        self.assertEqual('cond-1.example.org', shown['hostname'])

    def test_unknown_and_bad_queries(self):
        self.assertError(self.get('/v1/conductors/nope'), 404,
                         contains='nope')
        self.assertError(self.get('/v1/conductors?fields=nope'), 400)
        self.assertError(self.get('/v1/conductors?detail=True&'
                                  'fields=hostname'), 400)
        self.assertError(self.get('/v1/conductors?detail=maybe'), 400)
        # As upstream, alive and drivers are no sort keys.
        self.assertError(self.get('/v1/conductors?sort_key=alive'), 400)
        self.assertError(self.get('/v1/conductors?sort_dir=up'), 400)
        self.assertError(self.get('/v1/conductors?limit=x'), 400)
        self.assertError(self.get('/v1/conductors?marker=nope'), 404)

    def test_pagination_by_host_name(self):
        for name in ('a-host', 'b-host'):
            self._register(name)
        body = self.get('/v1/conductors?limit=2&sort_key=hostname',
                        status=200).json_body
        self.assertEqual(['a-host', 'b-host'],
                         [c['hostname'] for c in body['conductors']])
        self.assertIn('marker=b-host', body['next'])
        body = self.get('/v1/conductors?limit=2&sort_key=hostname&'
                        'marker=b-host', status=200).json_body
        self.assertEqual(['test-host'],
                         [c['hostname'] for c in body['conductors']])
        self.assertNotIn('next', body)
        body = self.get('/v1/conductors?sort_key=hostname&sort_dir=desc',
                        status=200).json_body
        self.assertEqual(['test-host', 'b-host', 'a-host'],
                         [c['hostname'] for c in body['conductors']])


class TestConductorPolicy(WithIPMITestCase):
    auth_strategy = 'keystone'

    def test_project_member_is_refused(self):
        project = {'X-Roles': 'member,reader', 'X-Project-Id': 'p1'}
        system = {'X-Roles': 'reader', 'OpenStack-System-Scope': 'all'}
        for path in ('/v1/conductors', '/v1/drivers',
                     '/v1/drivers/ipmi/properties'):
            self.assertError(self.get(path, headers=project), 403)
        self.get('/v1/conductors', headers=system, status=200)
        self.get('/v1/drivers', headers=system, status=200)

    def test_validate_is_for_the_node_owner(self):
        self.make_node(name='owned', owner='p1')
        # Another project does not even see the node.
        self.assertError(self.get(
            '/v1/nodes/owned/validate',
            headers={'X-Roles': 'member,reader', 'X-Project-Id': 'p2'}),
            404)
        # The owner's reader sees it but may not validate it.
        self.assertError(self.get(
            '/v1/nodes/owned/validate',
            headers={'X-Roles': 'reader', 'X-Project-Id': 'p1'}), 403)


class TestDrivers(WithIPMITestCase):

    def test_list(self):
        drivers = self.get('/v1/drivers', status=200).json_body['drivers']
        by_name = {d['name']: d for d in drivers}
        self.assertIn('fake-hardware', by_name)
        fake = by_name['fake-hardware']
        self.assertEqual(['test-host'], fake['hosts'])
        self.assertEqual('dynamic', fake['type'])
        self.assertEqual({'name', 'hosts', 'type', 'links', 'properties'},
                         set(fake))
        self.assertTrue(fake['properties'][0]['href'].endswith(
            '/v1/drivers/fake-hardware/properties'))

    def test_before_1_30_no_type_nor_detail(self):
        drivers = self.get('/v1/drivers', version='1.29',
                           status=200).json_body['drivers']
        self.assertNotIn('type', drivers[0])
        self.assertError(self.get('/v1/drivers?detail=True',
                                  version='1.29'), 406)
        self.assertError(self.get('/v1/drivers?type=dynamic',
                                  version='1.29'), 406)
        shown = self.get('/v1/drivers/fake-hardware', version='1.29',
                         status=200).json_body
        self.assertNotIn('default_power_interface', shown)

    def test_detail_and_show(self):
        drivers = self.get('/v1/drivers?detail=True',
                           status=200).json_body['drivers']
        fake = [d for d in drivers if d['name'] == 'fake-hardware'][0]
        shown = self.get('/v1/drivers/fake-hardware', status=200).json_body
        self.assertEqual(fake, shown)
        self.assertEqual('fake', shown['default_power_interface'])
        self.assertIn('fake', shown['enabled_power_interfaces'])
        self.assertIn('default_firmware_interface', shown)
        # The enabled interfaces are the type's, not every loaded one.
        ipmi = self.get('/v1/drivers/ipmi', status=200).json_body
        self.assertNotIn('fake', ipmi['enabled_power_interfaces'])
        self.assertEqual(ipmi['enabled_power_interfaces'][0],
                         ipmi['default_power_interface'])
        # Firmware interfaces appear at 1.86, bios ones at 1.40.
        shown = self.get('/v1/drivers/fake-hardware', version='1.85',
                         status=200).json_body
        self.assertNotIn('default_firmware_interface', shown)
        self.assertIn('default_bios_interface', shown)
        shown = self.get('/v1/drivers/fake-hardware', version='1.39',
                         status=200).json_body
        self.assertNotIn('default_bios_interface', shown)

    def test_type_filter(self):
        self.assertEqual([], self.get('/v1/drivers?type=classic',
                                      status=200).json_body['drivers'])
        self.assertTrue(self.get('/v1/drivers?type=dynamic',
                                 status=200).json_body['drivers'])
        self.assertError(self.get('/v1/drivers?type=nope'), 400)

    def test_fields_from_1_77(self):
        self.assertError(self.get('/v1/drivers?fields=name',
                                  version='1.76'), 406)
        drivers = self.get('/v1/drivers?fields=name,hosts',
                           status=200).json_body['drivers']
        self.assertEqual({'name', 'hosts', 'links'}, set(drivers[0]))
        shown = self.get('/v1/drivers/ipmi?fields=default_power_interface',
                         status=200).json_body
        self.assertEqual({'default_power_interface', 'links'}, set(shown))
        self.assertError(self.get('/v1/drivers?fields=nope'), 400)
        self.assertError(self.get('/v1/drivers?fields=name&detail=True'),
                         400)

    def test_unknown_driver(self):
        self.assertError(self.get('/v1/drivers/nope'), 404, contains='nope')
        self.assertError(self.get('/v1/drivers/nope/properties'), 404,
                         contains='nope')

    def test_properties(self):
        props = self.get('/v1/drivers/ipmi/properties',
                         status=200).json_body
        self.assertIn('ipmi_address', props)
        self.assertIsInstance(props['ipmi_address'], str)
        props = self.get('/v1/drivers/fake-hardware/properties',
                         status=200).json_body
        self.assertIn('fake_fail_power', props)


class TestNodeValidate(WithIPMITestCase):

    def test_every_interface_passes(self):
        node = self.make_node(name='fake-node')
        found = self.get('/v1/nodes/fake-node/validate',
                         status=200).json_body
        self.assertEqual({'power', 'deploy', 'management', 'boot', 'bios',
                          'firmware'}, set(found))
        for kind, verdict in found.items():
            self.assertEqual({'result': True, 'reason': None}, verdict,
                             kind)
        self.get('/v1/nodes/%s/validate' % node.uuid, status=200)

    def test_interface_verdicts_and_reasons(self):
        self.make_node(name='bmc-node', driver='ipmi',
                       power_interface='ipmi',
                       management_interface='ipmi', driver_info={})
        found = self.get('/v1/nodes/bmc-node/validate',
                         status=200).json_body
        self.assertIs(False, found['power']['result'])
        self.assertIn('ipmi_address', found['power']['reason'])
        self.assertIs(False, found['management']['result'])
        self.assertIs(True, found['deploy']['result'])

    def test_unknown_node(self):
        self.assertError(self.get('/v1/nodes/nope/validate'), 404)
