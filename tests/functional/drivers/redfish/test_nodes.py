"""Redfish nodes through the bare metal API, a real conductor and real BMCs.

Each BMC is an emulator in its own process (see :mod:`.emulators`); the
requests go through the whole WSGI application. sushy-emulator applies
power changes after a random delay of up to ~11 s: the tests poll the
node, the driver polls the BMC, and nothing sleeps in a worker.
"""

import logging
import time

import fixtures
import requests

from alloc_framework.common import states
from alloc_framework.drivers import node_tree
from tests import base as tests_base
from tests.functional.api.baremetal import base
from tests.functional.drivers.allocation import placement_fixtures
from tests.functional.drivers import redfish
from tests.functional.drivers.redfish import emulators
from tests.functional.objects.baremetal import factories

# A power change of sushy-emulator shows after at most ~11 s.
POWER_WAIT = 40


class RedfishNodeTestCase(base.BaremetalTestCase):
    # Emulated BMCs: nothing here depends on the database.
    dialect_neutral = True

    # Generous: four test workers share two CPUs with the emulators and
    # the database servers (the unanswering BMCs have their own).
    redfish_options = {'read_timeout': 10, 'connection_timeout': 10}
    conductor_options = {}

    def setUp(self):
        # Everything the service logs, to look for credentials in it.
        self.logs = fixtures.FakeLogger(level=logging.DEBUG)
        super().setUp()
        self.useFixture(self.logs)

    def _start_conductor(self):
        redfish.enable_redfish(self, **self.redfish_options)
        self.config(group='conductor', **self.conductor_options)
        return super()._start_conductor()

    def create(self, driver_info, **kw):
        body = {'driver': 'redfish', 'driver_info': driver_info,
                'resource_class': 'baremetal'}
        body.update(kw)
        return self.post('/v1/nodes', body, status=201).json_body

    def node(self, uuid):
        return self.get('/v1/nodes/%s' % uuid, status=200).json_body

    def provision(self, uuid, target, status=202):
        return self.put('/v1/nodes/%s/states/provision' % uuid,
                        {'target': target}, status=status)

    def settled(self, uuid, timeout=30):
        """The node once no conductor works on it any more."""
        def check():
            node = self.node(uuid)
            if (node['provision_state'] not in states.TRANSIENT_STATES
                    and not node['target_power_state']
                    and not node['reservation']):
                return node
            return None
        return tests_base.wait_for(check, 'node %s to settle' % uuid,
                                   timeout=timeout, interval=0.1)

    def power(self, uuid, target):
        self.put('/v1/nodes/%s/states/power' % uuid, {'target': target},
                 status=202)
        return self.settled(uuid, timeout=POWER_WAIT)

    def assertNoSecret(self, secret, *texts):
        for text in texts + (self.logs.output,):
            self.assertNotIn(secret, text or '')


class TestSushyEmulator(RedfishNodeTestCase):

    def setUp(self):
        super().setUp()
        self.bmc = self.useFixture(emulators.SushyEmulator())

    def bmc_power(self, path):
        return requests.get(self.bmc.address + path, timeout=10, auth=(
            emulators.USERNAME, emulators.PASSWORD)).json()['PowerState']

    def test_enroll_manage_provide_power_and_boot_device(self):
        path = self.bmc.system_path()
        node = self.create(self.bmc.driver_info(redfish_system_id=path),
                           name='rf-0', properties={'gpus': 2})
        self.assertEqual('enroll', node['provision_state'])
        self.assertEqual('redfish', node['power_interface'])
        self.assertEqual('redfish', node['management_interface'])
        self.assertEqual('******', node['driver_info']['redfish_password'])
        self.assertEqual(emulators.USERNAME,
                         node['driver_info']['redfish_username'])

        self.provision('rf-0', 'manage')
        node = self.settled('rf-0')
        self.assertEqual('manageable', node['provision_state'],
                         node['last_error'])
        self.assertEqual('power off', node['power_state'])
        # The emulator's fake system has no Processors collection: the
        # operator's GPU count stays, and nothing failed.
        self.assertEqual({'gpus': 2}, node['properties'])
        self.assertNotIn('hardware properties', self.logs.output)
        self.provision('rf-0', 'provide')
        node = self.settled('rf-0')
        self.assertEqual('available', node['provision_state'],
                         node['last_error'])

        node = self.power('rf-0', 'power on')
        self.assertIsNone(node['last_error'])
        self.assertEqual('power on', node['power_state'])
        self.assertEqual('On', self.bmc_power(path))

        supported = self.get('/v1/nodes/rf-0/management/boot_device/'
                             'supported', status=200).json_body
        self.assertEqual({'cdrom', 'disk', 'pxe', 'uefi-http'},
                         set(supported['supported_boot_devices']))
        self.put('/v1/nodes/rf-0/management/boot_device',
                 {'boot_device': 'pxe', 'persistent': True}, status=204)
        self.assertEqual({'boot_device': 'pxe', 'persistent': True},
                         self.get('/v1/nodes/rf-0/management/boot_device',
                                  status=200).json_body)
        self.put('/v1/nodes/rf-0/management/boot_device',
                 {'boot_device': 'cdrom'}, status=204)
        # The emulator keeps every override "Continuous".
        self.assertEqual('cdrom', self.get(
            '/v1/nodes/rf-0/management/boot_device',
            status=200).json_body['boot_device'])
        resp = self.put('/v1/nodes/rf-0/management/boot_device',
                        {'boot_device': 'floppy'})
        self.assertError(resp, 400, code='baremetal.invalid_parameter_value',
                         contains='Invalid boot_device floppy')
        resp = self.put('/v1/nodes/rf-0/management/boot_device',
                        {'persistent': True})
        self.assertError(resp, 400, contains='boot_device')

        node = self.power('rf-0', 'power off')
        self.assertIsNone(node['last_error'])
        self.assertEqual('power off', node['power_state'])
        self.assertEqual('Off', self.bmc_power(path))
        self.assertNoSecret(emulators.PASSWORD)

    def test_wrong_password_leaves_the_node_in_enroll(self):
        node = self.create(self.bmc.driver_info(
            redfish_password='not-the-password'))
        self.provision(node['uuid'], 'manage')
        node = self.settled(node['uuid'])
        self.assertEqual('enroll', node['provision_state'])
        self.assertIn('Redfish authentication failed for node %s at %s: '
                      'check redfish_username/redfish_password'
                      % (node['uuid'], self.bmc.address), node['last_error'])
        self.assertEqual('******', node['driver_info']['redfish_password'])
        self.assertNoSecret('not-the-password', node['last_error'])
        # The operator fixes the password: the node can be managed.
        self.patch('/v1/nodes/%s' % node['uuid'], [
            {'op': 'replace', 'path': '/driver_info/redfish_password',
             'value': emulators.PASSWORD}], status=200)
        self.provision(node['uuid'], 'manage')
        node = self.settled(node['uuid'])
        self.assertEqual('manageable', node['provision_state'],
                         node['last_error'])

    def test_unknown_system_id(self):
        node = self.create(self.bmc.driver_info(
            redfish_system_id='no-such-system'))
        self.provision(node['uuid'], 'manage')
        node = self.settled(node['uuid'])
        self.assertEqual('enroll', node['provision_state'])
        self.assertIn('check redfish_system_id', node['last_error'])


class TestBadDriverInfo(RedfishNodeTestCase):

    def test_missing_address(self):
        node = self.create({'redfish_username': 'admin'})
        resp = self.put('/v1/nodes/%s/states/power' % node['uuid'],
                        {'target': 'power on'})
        self.assertError(resp, 400, code='baremetal.missing_parameter_value',
                         contains='Missing redfish_address')
        self.provision(node['uuid'], 'manage')
        node = self.settled(node['uuid'])
        self.assertEqual('enroll', node['provision_state'])
        self.assertIn('Missing redfish_address', node['last_error'])

    def test_invalid_values_name_the_key(self):
        cases = {
            'redfish_address': {'redfish_address': 'ftp://bmc'},
            'redfish_verify_ca': {'redfish_address': 'https://bmc',
                                  'redfish_verify_ca': 'maybe'},
            'redfish_auth_type': {'redfish_address': 'https://bmc',
                                  'redfish_auth_type': 'kerberos'},
        }
        for key, info in cases.items():
            node = self.create(info)
            resp = self.put('/v1/nodes/%s/management/boot_device'
                            % node['uuid'], {'boot_device': 'pxe'})
            self.assertError(resp, 400,
                             code='baremetal.invalid_parameter_value',
                             contains='Invalid %s' % key)

    def test_credentials_in_the_address_are_refused(self):
        node = self.create({'redfish_address': 'https://root:Zq9pw@bmc'})
        resp = self.put('/v1/nodes/%s/states/power' % node['uuid'],
                        {'target': 'power on'})
        fault = self.assertError(resp, 400,
                                 code='baremetal.invalid_parameter_value',
                                 contains='Invalid redfish_address')
        self.assertNoSecret('Zq9pw', fault['faultstring'])


class TestUnansweringBMC(RedfishNodeTestCase):
    """BMCs that do not answer cost a bounded time and leave clear errors.
    """

    redfish_options = {'read_timeout': 1, 'connection_timeout': 1}

    def _check(self, address, what):
        node = self.create({'redfish_address': address,
                            'redfish_username': 'admin',
                            'redfish_password': 'secret-pw'})
        started = time.monotonic()
        self.provision(node['uuid'], 'manage')
        node = self.settled(node['uuid'], timeout=20)
        self.assertLess(time.monotonic() - started, 10)
        self.assertEqual('enroll', node['provision_state'])
        self.assertIn('Redfish BMC of node %s at %s did not answer'
                      % (node['uuid'], address), node['last_error'])
        self.assertIn(what, node['last_error'])

        started = time.monotonic()
        node = self.power(node['uuid'], 'power on')
        self.assertLess(time.monotonic() - started, 10)
        self.assertIn('did not answer', node['last_error'])
        self.assertIsNone(node['target_power_state'])
        resp = self.get('/v1/nodes/%s/management/boot_device'
                        % node['uuid'])
        self.assertError(resp, 504, code='baremetal.redfish_connection_error')
        self.assertNoSecret('secret-pw', node['last_error'])

    def test_listening_socket_that_never_answers(self):
        bmc = self.useFixture(emulators.SilentBMC())
        self._check(bmc.address, 'timed out')

    def test_closed_port(self):
        self._check('http://127.0.0.1:%d' % tests_base.free_port(),
                    'refused')


class TestPowerDeadline(RedfishNodeTestCase):

    conductor_options = {'power_state_change_timeout': 1}

    def test_a_power_change_that_does_not_show_in_time_fails(self):
        bmc = self.useFixture(emulators.FirmwareBMC(power_delay=60))
        node = self.create(bmc.driver_info())
        self.provision(node['uuid'], 'manage')
        self.assertEqual('manageable',
                         self.settled(node['uuid'])['provision_state'])
        started = time.monotonic()
        node = self.power(node['uuid'], 'power on')
        self.assertLess(time.monotonic() - started, 10)
        self.assertIn('did not reach "power on" within 1s: its Redfish BMC '
                      'still reports Off', node['last_error'])
        self.assertEqual('power off', node['power_state'])
        self.assertEqual(['On'], bmc.counters()['resets'])


class TestPowerDelay(RedfishNodeTestCase):

    conductor_options = {'power_state_change_timeout': 10}

    def test_power_changes_that_show_after_seconds_succeed(self):
        bmc = self.useFixture(emulators.FirmwareBMC(power_delay=1.5))
        node = self.create(bmc.driver_info())
        for target in ('power on', 'power off'):
            started = time.monotonic()
            node = self.power(node['uuid'], target)
            self.assertGreaterEqual(time.monotonic() - started, 1.4)
            self.assertIsNone(node['last_error'])
            self.assertEqual(target, node['power_state'])
        self.assertEqual('Off', bmc.counters()['power'])
        self.assertEqual(['On', 'ForceOff'], bmc.counters()['resets'])


class TestStoppingConductor(RedfishNodeTestCase):

    conductor_options = {'power_state_change_timeout': 120}

    def test_a_stopping_conductor_ends_the_power_wait_at_once(self):
        bmc = self.useFixture(emulators.FirmwareBMC(power_delay=120))
        node = self.create(bmc.driver_info())
        self.put('/v1/nodes/%s/states/power' % node['uuid'],
                 {'target': 'power on'}, status=202)
        tests_base.wait_for(lambda: bmc.counters()['resets'],
                            'the reset request')
        started = time.monotonic()
        self.manager.del_host()
        # The worker was waiting on the conductor's stop event, not
        # sleeping: the stop does not wait for the 120 s.
        self.assertLess(time.monotonic() - started, 10)
        node = self.node(node['uuid'])
        self.assertIn('Waiting for node %s to reach "power on" was '
                      'interrupted: the conductor is stopping'
                      % node['uuid'], node['last_error'])
        self.assertIsNone(node['target_power_state'])
        self.assertIsNone(node['reservation'])


class TestGPUs(RedfishNodeTestCase):
    """Verification records the GPUs the BMC lists as ``properties['gpus']``.
    """

    def manage(self, bmc, properties):
        node = self.create(bmc.driver_info(), properties=properties)
        self.provision(node['uuid'], 'manage')
        node = self.settled(node['uuid'])
        self.assertEqual('manageable', node['provision_state'],
                         node['last_error'])
        self.assertIsNone(node['last_error'])
        return node

    def test_gpus_are_counted(self):
        bmc = self.useFixture(emulators.FirmwareBMC(processors=[
            'CPU', 'CPU', 'GPU', 'FPGA', 'GPU', 'GPU:Absent', 'Accelerator',
            'GPU']))
        node = self.manage(bmc, {'cpus': 64, 'gpus': 1})
        # Three GPUs: not the absent one, not the FPGA or the accelerator.
        self.assertEqual({'cpus': 64, 'gpus': 3}, node['properties'])

    def test_processors_without_a_gpu_count_zero(self):
        for processors in (['CPU', 'CPU'], []):
            bmc = self.useFixture(emulators.FirmwareBMC(
                processors=processors))
            node = self.manage(bmc, {'gpus': 2})
            self.assertEqual({'gpus': 0}, node['properties'], processors)

    def test_no_processors_collection_keeps_the_operator_value(self):
        bmc = self.useFixture(emulators.FirmwareBMC())
        self.assertEqual({'gpus': 2},
                         self.manage(bmc, {'gpus': 2})['properties'])
        self.assertEqual({}, self.manage(bmc, {})['properties'])

    def test_a_bmc_error_on_processors_is_a_warning(self):
        bmc = self.useFixture(emulators.FirmwareBMC(processors=['GPU'],
                                                    processors_error=True))
        node = self.manage(bmc, {'gpus': 2})
        self.assertEqual({'gpus': 2}, node['properties'])
        self.assertIn('Node %s: could not read its hardware properties, '
                      'they stay as they were: Redfish request for node %s '
                      'at %s failed:' % (node['uuid'], node['uuid'],
                                         bmc.address), self.logs.output)
        self.assertIn('Internal error reading processors', self.logs.output)
        self.assertNoSecret(emulators.PASSWORD)


class TestGPUProviders(RedfishNodeTestCase):
    """The GPUs the BMC lists become child providers, and are reshaped.

    With ``[allocation]backend = placement`` (our Placement in process):
    a Redfish node verified against a BMC listing two GPUs gets one
    ``PGPU: 1`` child provider per GPU; a node left in an earlier shape
    (``PGPU: 2`` on its root, held there by its allocation) is reshaped
    when its conductor starts, and only then.
    """

    manage = TestGPUs.manage

    def _start_conductor(self):
        self.placement = self.useFixture(
            placement_fixtures.PlacementBackendFixture(self, 'in-process'))
        return super()._start_conductor()

    def call(self, method, url, body=None, expected=(200,)):
        kwargs = {'json': body} if body is not None else {}
        resp = self.placement.client.adapter.request(
            url, method, headers={'OpenStack-API-Version': 'placement 1.36'},
            **kwargs)
        self.assertIn(resp.status_code, expected, resp.text)
        return resp.json() if resp.content else None

    def tree(self, root):
        """{provider uuid: (name, {class: total})} of the tree."""
        found = {}
        for rp in self.call('GET', '/resource_providers?in_tree=%s'
                            % root)['resource_providers']:
            inventories = self.call(
                'GET', '/resource_providers/%s/inventories' % rp['uuid'])
            found[rp['uuid']] = (rp['name'], {
                rc: r['total']
                for rc, r in inventories['inventories'].items()})
        return found

    def held(self, consumer):
        return {rp: v['resources'] for rp, v in self.call(
            'GET', '/allocations/%s' % consumer)['allocations'].items()}

    def test_bmc_gpus_become_children_and_are_reshaped_at_start(self):
        bmc = self.useFixture(emulators.FirmwareBMC(
            processors=['CPU', 'GPU', 'GPU']))
        node = self.manage(bmc, {})
        uuid = node['uuid']
        self.assertEqual({'gpus': 2}, node['properties'])
        gpus = [node_tree.child_uuid(uuid, 'gpu%d' % i) for i in range(2)]
        new_shape = {
            uuid: (node['name'] or uuid, {'CUSTOM_BAREMETAL': 1}),
            gpus[0]: ('%s_gpu0' % uuid, {'PGPU': 1}),
            gpus[1]: ('%s_gpu1' % uuid, {'PGPU': 1})}
        # Verified: the new shape directly (the conductor syncs the
        # providers once the node's change is saved and its lock gone).
        tests_base.wait_for(lambda: self.tree(uuid) == new_shape,
                            'the GPU child providers', timeout=30)

        self.provision(uuid, 'provide')
        self.assertEqual('available', self.settled(uuid)['provision_state'])
        allocation = factories.make_allocation(self.context)
        self.assertEqual(uuid, self.placement.backend.allocate(
            self.context, allocation))
        self.assertEqual({uuid: {'CUSTOM_BAREMETAL': 1},
                          gpus[0]: {'PGPU': 1}, gpus[1]: {'PGPU': 1}},
                         self.held(allocation.uuid))

        # What an earlier release left: the GPUs on the root, held there.
        current = self.call('GET', '/allocations/%s' % allocation.uuid)
        self.call('PUT', '/allocations/%s' % allocation.uuid, {
            'allocations': {uuid: {'resources': {'CUSTOM_BAREMETAL': 1}}},
            'project_id': current['project_id'],
            'user_id': current['user_id'],
            'consumer_generation': current['consumer_generation']},
            expected=(204,))
        for gpu in gpus:
            self.call('DELETE', '/resource_providers/%s' % gpu,
                      expected=(204,))
        rp = self.call('GET', '/resource_providers/%s' % uuid)
        inventories = self.call(
            'GET', '/resource_providers/%s/inventories' % uuid)
        records = inventories['inventories']
        records['PGPU'] = node_tree.inventory(2)
        self.call('PUT', '/resource_providers/%s/inventories' % uuid,
                  {'resource_provider_generation': rp['generation'],
                   'inventories': records})
        current = self.call('GET', '/allocations/%s' % allocation.uuid)
        self.call('PUT', '/allocations/%s' % allocation.uuid, {
            'allocations': {uuid: {'resources': {'CUSTOM_BAREMETAL': 1,
                                                 'PGPU': 2}}},
            'project_id': current['project_id'],
            'user_id': current['user_id'],
            'consumer_generation': current['consumer_generation']},
            expected=(204,))
        old_shape = {uuid: (node['name'] or uuid,
                            {'CUSTOM_BAREMETAL': 1, 'PGPU': 2})}
        self.assertEqual(old_shape, self.tree(uuid))

        # A running conductor's sync does not reshape.
        self.manager.allocation_backend.node_changed(self.context, uuid)
        self.assertEqual(old_shape, self.tree(uuid))
        self.assertIn('need a reshape, which runs only when its conductor '
                      'starts', self.logs.output)

        # What the conductor runs when it starts, before it serves.
        self.manager.start_backend()
        self.assertEqual(new_shape, self.tree(uuid))
        self.assertEqual({uuid: {'CUSTOM_BAREMETAL': 1},
                          gpus[0]: {'PGPU': 1}, gpus[1]: {'PGPU': 1}},
                         self.held(allocation.uuid))
        self.assertIn('Reshaped the resource providers of node %s: '
                      'consumer %s' % (uuid, allocation.uuid),
                      self.logs.output)
