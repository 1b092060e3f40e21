"""IPMI nodes through the bare metal API (real WSGI app and conductor)
against emulated BMCs in their own processes."""

import time

from tests import base as tests_base
from tests.functional.api.baremetal import base
from tests.functional.drivers.ipmi import base as ipmi_base
from tests.functional.drivers.ipmi import fixture


class IPMIAPITestCase(base.BaremetalTestCase):
    # An emulated BMC: nothing here depends on the database.
    dialect_neutral = True

    def _start_conductor(self):
        ipmi_base.enable_ipmi(self)
        return super()._start_conductor()

    def create(self, driver_info, **kw):
        body = {'driver': 'ipmi', 'driver_info': driver_info}
        body.update(kw)
        return self.post('/v1/nodes', body, status=201).json_body

    def wait_state(self, uuid, field, value, timeout=30):
        def settled():
            body = self.get('/v1/nodes/%s' % uuid, status=200).json_body
            done = (body[field] == value and body['reservation'] is None
                    and not body['target_power_state']
                    and not body['target_provision_state'])
            return body if done else None
        return tests_base.wait_for(settled, 'node %s: %s to be %r'
                                   % (uuid, field, value), timeout=timeout)

    def provision(self, uuid, target):
        self.put('/v1/nodes/%s/states/provision' % uuid, {'target': target},
                 status=202)

    def power(self, uuid, target):
        self.put('/v1/nodes/%s/states/power' % uuid, {'target': target},
                 status=202)


class TestIPMINodes(IPMIAPITestCase):

    def test_enroll_manage_provide_power(self):
        bmc = self.useFixture(fixture.BMC())
        node = self.create(bmc.driver_info())
        self.assertEqual('ipmi', node['power_interface'])
        self.assertEqual('ipmi', node['management_interface'])
        # Masked like upstream: the secret never leaves the service.
        self.assertEqual('******', node['driver_info']['ipmi_password'])
        self.assertEqual(bmc.user, node['driver_info']['ipmi_username'])
        shown = self.get('/v1/nodes/%s' % node['uuid']).json_body
        self.assertEqual('******', shown['driver_info']['ipmi_password'])
        self.assertNotIn(bmc.password, self.get('/v1/nodes/detail').text)

        self.provision(node['uuid'], 'manage')
        body = self.wait_state(node['uuid'], 'provision_state', 'manageable')
        # Verification read the power state from the BMC.
        self.assertEqual('power off', body['power_state'])
        self.assertIsNone(body['last_error'])
        self.provision(node['uuid'], 'provide')
        self.wait_state(node['uuid'], 'provision_state', 'available')

        self.power(node['uuid'], 'power on')
        body = self.wait_state(node['uuid'], 'power_state', 'power on')
        self.assertIsNone(body['last_error'])
        self.assertEqual('on', bmc.state()['power'])
        self.power(node['uuid'], 'rebooting')
        self.wait_state(node['uuid'], 'power_state', 'power on')
        self.assertEqual('on', bmc.state()['power'])
        self.power(node['uuid'], 'power off')
        self.wait_state(node['uuid'], 'power_state', 'power off')
        self.assertEqual('off', bmc.state()['power'])

    def test_boot_device(self):
        bmc = self.useFixture(fixture.BMC())
        node = self.create(bmc.driver_info())
        path = '/v1/nodes/%s/management/boot_device' % node['uuid']
        self.assertEqual(
            {'supported_boot_devices': ['bios', 'cdrom', 'disk', 'pxe',
                                        'safe']},
            self.get(path + '/supported', status=200).json_body)
        self.put(path, {'boot_device': 'pxe', 'persistent': True},
                 status=204)
        self.assertEqual({'boot_device': 'pxe', 'persistent': True},
                         self.get(path, status=200).json_body)
        self.assertEqual(('network', True), (bmc.state()['boot_device'],
                                             bmc.state()['persistent']))
        self.put(path, {'boot_device': 'disk'}, status=204)
        self.assertEqual({'boot_device': 'disk', 'persistent': False},
                         self.get(path, status=200).json_body)
        self.assertEqual(('hd', False), (bmc.state()['boot_device'],
                                         bmc.state()['persistent']))
        # Bad input: a 400 naming the field, never a 500.
        self.assertError(self.put(path, {'boot_device': 'floppy'}), 400,
                         'baremetal.invalid_parameter_value', 'floppy')
        self.assertError(self.put(path, {'boot_device': 'pxe',
                                         'persistent': 'yes'}), 400,
                         'baremetal.invalid_field', 'persistent')
        self.assertError(self.put(path, {'device': 'pxe'}), 400,
                         'baremetal.invalid_body', 'device')
        self.assertError(self.put(path, {}), 400,
                         'baremetal.invalid_field', 'boot_device')
        self.assertEqual('hd', bmc.state()['boot_device'])

    def test_boot_device_of_an_unreachable_bmc(self):
        self.config(command_deadline=1.0, group='ipmi')
        bmc = self.useFixture(fixture.BMC(silent=True))
        node = self.create(bmc.driver_info())
        resp = self.put('/v1/nodes/%s/management/boot_device'
                        % node['uuid'], {'boot_device': 'pxe'})
        fault = self.assertError(resp, 500, 'baremetal.ipmi_failure',
                                 'no answer within 1.0 seconds')
        self.assertIn('127.0.0.1:%d' % bmc.port, fault['faultstring'])
        self.assertNotIn(bmc.password, resp.text)

    def test_wrong_password_leaves_node_in_enroll(self):
        bmc = self.useFixture(fixture.BMC())
        node = self.create(bmc.driver_info(ipmi_password='not-the-one'))
        self.provision(node['uuid'], 'manage')
        body = self.wait_state(node['uuid'], 'provision_state', 'enroll')
        self.assertIn('Failed to verify node', body['last_error'])
        self.assertIn('refused the credentials of user %r' % bmc.user,
                      body['last_error'])
        self.assertIn('127.0.0.1:%d' % bmc.port, body['last_error'])
        self.assertNotIn('not-the-one', body['last_error'])
        history = self.get('/v1/nodes/%s/history' % node['uuid']).text
        self.assertNotIn('not-the-one', history)
        # Fixed credentials: the node is managed.
        self.patch('/v1/nodes/%s' % node['uuid'],
                   [{'op': 'replace', 'path': '/driver_info/ipmi_password',
                     'value': bmc.password}], status=200)
        self.provision(node['uuid'], 'manage')
        body = self.wait_state(node['uuid'], 'provision_state', 'manageable')
        self.assertIsNone(body['last_error'])

    def test_silent_bmc_costs_bounded_time(self):
        bmc = self.useFixture(fixture.BMC(silent=True))
        node = self.create(bmc.driver_info())
        started = time.monotonic()
        self.provision(node['uuid'], 'manage')
        body = self.wait_state(node['uuid'], 'provision_state', 'enroll')
        elapsed = time.monotonic() - started
        self.assertIn('no answer', body['last_error'])
        self.assertIn('127.0.0.1:%d' % bmc.port, body['last_error'])
        # pyghmi gives up a log in after about 5 s; the deadline of the
        # conversation ([ipmi]command_deadline, 10 s here) bounds it.
        self.assertLess(elapsed, 12)
        self.assertIsNone(body['reservation'])

    def test_deadline_cuts_a_conversation_short(self):
        self.config(command_deadline=1.0, group='ipmi')
        bmc = self.useFixture(fixture.BMC(silent=True))
        node = self.create(bmc.driver_info())
        started = time.monotonic()
        self.power(node['uuid'], 'power on')

        def failed():
            body = self.get('/v1/nodes/%s' % node['uuid']).json_body
            return body if (body['last_error']
                            and body['reservation'] is None) else None
        body = tests_base.wait_for(failed, 'the power change to fail')
        self.assertLess(time.monotonic() - started, 4)
        self.assertIn('no answer within 1.0 seconds while setting the '
                      'power state to power on', body['last_error'])

    def test_missing_or_bad_driver_info(self):
        node = self.create({'ipmi_username': 'admin'})
        self.assertError(self.put('/v1/nodes/%s/management/boot_device'
                                  % node['uuid'], {'boot_device': 'pxe'}),
                         400, 'baremetal.missing_parameter_value',
                         'ipmi_address')
        self.provision(node['uuid'], 'manage')
        body = self.wait_state(node['uuid'], 'provision_state', 'enroll')
        self.assertIn('ipmi_address', body['last_error'])
        node = self.create({'ipmi_address': '127.0.0.1',
                            'ipmi_port': 'sixty'})
        self.provision(node['uuid'], 'manage')
        body = self.wait_state(node['uuid'], 'provision_state', 'enroll')
        self.assertIn('ipmi_port', body['last_error'])
