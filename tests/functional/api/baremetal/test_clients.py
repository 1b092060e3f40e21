"""Real clients against the API served over HTTP.

python-ironicclient (library and the ``openstack baremetal`` commands,
run in-process) and openstacksdk use the server unchanged, with
``auth_type none`` and an endpoint, negotiating the newest version both
sides know.
"""

import datetime
import json

import fixtures

from alloc_framework.common import states
from alloc_framework.objects.baremetal import base as obj_base
from alloc_framework.objects.baremetal import firmware
from tests import base as tests_base
from tests.functional.api.baremetal import base
from tests.functional import openstack_client


def _get(row, field):
    """A column of a ``-f json`` listing, whatever its header style."""
    for key, value in row.items():
        if key.lower().replace(' ', '_') == field:
            return value
    raise KeyError(field)


class ClientTestCase(base.BaremetalTestCase):
    # Real clients over HTTP: their SQL is the API's, tested elsewhere.
    dialect_neutral = True

    def setUp(self):
        super().setUp()
        self.server = self.useFixture(tests_base.Server(self.app))
        self.url = self.server.url


class TestIronicClient(ClientTestCase):

    def client(self):
        from ironicclient import client
        return client.get_client(1, endpoint=self.url, auth_type='none',
                                 os_ironic_api_version='latest')

    def test_nodes_and_allocations(self):
        from ironicclient import exc

        ironic = self.client()
        node = ironic.node.create(driver='fake-hardware', name='node-1',
                                  resource_class='baremetal')
        self.assertEqual('enroll', node.provision_state)
        self.assertEqual(['node-1'], [n.name for n in ironic.node.list()])
        ironic.node.update('node-1', [{'op': 'add', 'path': '/extra/a',
                                       'value': 'b'}])
        self.assertEqual({'a': 'b'}, ironic.node.get('node-1').extra)
        # Power changes answer 202 while the conductor works: poll.
        ironic.node.set_power_state('node-1', 'on')
        tests_base.wait_for(lambda: (ironic.node.get('node-1').power_state
                                     == 'power on'
                                     and ironic.node.get('node-1').reservation
                                     is None), 'node-1 to be powered on')
        # The client's default pauses between polls (2 s, 1 s) are made
        # for real hardware; the fake hardware is done in milliseconds.
        ironic.node.set_provision_state('node-1', 'manage')
        ironic.node.wait_for_provision_state('node-1', 'manageable',
                                             timeout=30, poll_interval=0.1)
        ironic.node.set_provision_state('node-1', 'provide')
        ironic.node.wait_for_provision_state('node-1', 'available',
                                             timeout=30, poll_interval=0.1)

        allocation = ironic.allocation.create(resource_class='baremetal',
                                              name='alloc-1')
        allocation = ironic.allocation.wait(allocation.uuid, timeout=30,
                                            poll_interval=0.1)
        self.assertEqual('active', allocation.state)
        self.assertEqual(node.uuid, allocation.node_uuid)
        self.assertEqual([allocation.uuid],
                         [a.uuid for a in ironic.allocation.list()])
        self.assertEqual('alloc-1', ironic.allocation.get('alloc-1').name)
        self.assertEqual(allocation.uuid,
                         ironic.node.get('node-1').allocation_uuid)
        ironic.allocation.delete(allocation.uuid)
        self.assertEqual([], ironic.allocation.list())

        error = self.assertRaises(exc.NotFound, ironic.allocation.get,
                                  allocation.uuid)
        self.assertIn('could not be found', str(error))
        error = self.assertRaises(exc.BadRequest, ironic.allocation.create,
                                  resource_class='baremetal',
                                  uuid='not-a-uuid')
        self.assertIn('uuid', str(error))

    def test_shards_children_inventory_unhold(self):
        # Microversions 1.81 to 1.85 through the library, as upstream's
        # clients use them.
        from ironicclient import exc

        ironic = self.client()
        parent = ironic.node.create(driver='fake-hardware', name='parent',
                                    shard='rack-1')
        self.assertEqual('rack-1', parent.shard)
        ironic.node.create(driver='fake-hardware', name='plain')
        child = ironic.node.create(driver='fake-hardware', name='dpu',
                                   parent_node='parent')
        self.assertEqual(parent.uuid, child.parent_node)

        self.assertEqual(['parent', 'plain'],
                         sorted(n.name for n in ironic.node.list()))
        self.assertEqual(['dpu', 'parent', 'plain'], sorted(
            n.name for n in ironic.node.list(include_children=True)))
        self.assertEqual(['dpu'], [n.name for n in ironic.node.list(
            parent_node=parent.uuid)])
        self.assertEqual([child.uuid],
                         ironic.node.list_children_of_node('parent'))
        self.assertEqual(['parent'], [n.name for n in ironic.node.list(
            shards=['rack-1'])])
        self.assertEqual(['plain'], [n.name for n in ironic.node.list(
            sharded=False)])
        shards = {s.name: s.count for s in ironic.shard.list()}
        self.assertEqual({'rack-1': 1, 'None': 2}, shards)

        ironic.node.update('plain', [{'op': 'add', 'path': '/shard',
                                      'value': 'rack-1'}])
        self.assertEqual('rack-1', ironic.node.get('plain').shard)

        error = self.assertRaises(exc.NotFound, ironic.node.get_inventory,
                                  'parent')
        self.assertIn('inventory', str(error))
        error = self.assertRaises(exc.BadRequest,
                                  ironic.node.set_provision_state,
                                  'parent', 'unhold')
        self.assertIn('enroll', str(error))

    def test_conductors_drivers_validate_boot_device(self):
        from ironicclient import exc

        ironic = self.client()
        conductors = ironic.conductor.list(detail=True)
        self.assertEqual([('test-host', True, ['fake-hardware'])],
                         [(c.hostname, c.alive, c.drivers)
                          for c in conductors])
        self.assertEqual('test-host',
                         ironic.conductor.get('test-host').hostname)
        drivers = ironic.driver.list(detail=True)
        self.assertEqual([('fake-hardware', 'dynamic', 'fake')],
                         [(d.name, d.type, d.default_power_interface)
                          for d in drivers])
        self.assertEqual(['test-host'],
                         ironic.driver.get('fake-hardware').hosts)
        self.assertIn('fake_fail_power',
                      ironic.driver.properties('fake-hardware'))
        node = ironic.node.create(driver='fake-hardware', name='ic-v-node')
        verdicts = ironic.node.validate(node.uuid).to_dict()
        self.assertEqual({'result': True, 'reason': None},
                         verdicts['power'])
        ironic.node.set_boot_device(node.uuid, 'cdrom', persistent=True)
        self.assertEqual({'boot_device': 'cdrom', 'persistent': True},
                         ironic.node.get_boot_device(node.uuid))
        self.assertIn('cdrom', ironic.node.get_supported_boot_devices(
            node.uuid)['supported_boot_devices'])
        error = self.assertRaises(exc.BadRequest,
                                  ironic.node.set_boot_device, node.uuid,
                                  'floppy')
        self.assertIn('floppy', str(error))
        self.assertRaises(exc.NotFound, ironic.conductor.get, 'nope')


class BaremetalCommandTestCase(ClientTestCase):
    """Runs the real ``openstack baremetal`` commands against the API."""

    def setUp(self):
        super().setUp()
        # --wait polls a long action such as provide (cleaning) every
        # 10 s, a short one every 2 s: made for real hardware, where the
        # fake hardware is done in milliseconds.
        from ironicclient.v1 import utils
        self.useFixture(fixtures.MonkeyPatch(
            'ironicclient.v1.utils.PROVISION_ACTIONS',
            {action: wait and dict(wait, poll_interval=0.1)
             for action, wait in utils.PROVISION_ACTIONS.items()}))
        self.openstack = self.useFixture(openstack_client.OpenStackClient(
            '--os-auth-type', 'none', '--os-endpoint', self.url,
            '--os-baremetal-api-version', 'latest'))

    def run_cli(self, *args):
        result = self.openstack.run(*args)
        self.assertEqual(0, result.returncode,
                         '%s\n%s' % (result.stdout, result.stderr))
        return result.stdout


class TestBaremetalCommand(BaremetalCommandTestCase):

    def _start_conductor(self):
        # The service test runs the deferred action launcher itself.
        self.config(launcher_interval=0, group='deferred_actions')
        return super()._start_conductor()

    def test_allocation_and_node_commands(self):
        node = json.loads(self.run_cli(
            'baremetal', 'node', 'create', '--driver', 'fake-hardware',
            '--name', 'cli-node', '--resource-class', 'baremetal',
            '-f', 'json'))
        self.assertEqual('cli-node', node['name'])
        self.run_cli('baremetal', 'node', 'set', 'cli-node',
                     '--extra', 'k=v')
        self.run_cli('baremetal', 'node', 'manage', 'cli-node', '--wait',
                     '30')
        self.run_cli('baremetal', 'node', 'provide', 'cli-node', '--wait',
                     '30')
        shown = json.loads(self.run_cli('baremetal', 'node', 'show',
                                        'cli-node', '-f', 'json'))
        self.assertEqual('available', shown['provision_state'])
        self.assertEqual({'k': 'v'}, shown['extra'])
        listed = json.loads(self.run_cli('baremetal', 'node', 'list',
                                         '-f', 'json'))
        self.assertEqual(['cli-node'], [_get(n, 'name') for n in listed])

        created = json.loads(self.run_cli(
            'baremetal', 'allocation', 'create', '--resource-class',
            'baremetal', '--name', 'cli-alloc', '--wait', '30',
            '-f', 'json'))
        self.assertEqual('active', created['state'])
        self.assertEqual(node['uuid'], created['node_uuid'])
        listed = json.loads(self.run_cli('baremetal', 'allocation', 'list',
                                         '-f', 'json'))
        self.assertEqual([created['uuid']], [_get(a, 'uuid') for a in listed])
        shown = json.loads(self.run_cli('baremetal', 'allocation', 'show',
                                        'cli-alloc', '-f', 'json'))
        self.assertEqual(created['uuid'], shown['uuid'])
        self.run_cli('baremetal', 'allocation', 'delete', 'cli-alloc')
        self.assertEqual([], json.loads(self.run_cli(
            'baremetal', 'allocation', 'list', '-f', 'json')))

    def test_shard_and_child_node_commands(self):
        parent = json.loads(self.run_cli(
            'baremetal', 'node', 'create', '--driver', 'fake-hardware',
            '--name', 'cli-parent', '--shard', 'rack-1', '-f', 'json'))
        self.assertEqual('rack-1', parent['shard'])
        self.run_cli('baremetal', 'node', 'create', '--driver',
                     'fake-hardware', '--name', 'cli-child',
                     '--parent-node', 'cli-parent')
        children = json.loads(self.run_cli(
            'baremetal', 'node', 'children', 'list', 'cli-parent',
            '-f', 'json'))
        self.assertEqual(1, len(children))
        listed = json.loads(self.run_cli('baremetal', 'node', 'list',
                                         '-f', 'json'))
        self.assertEqual(['cli-parent'], [_get(n, 'name') for n in listed])
        listed = json.loads(self.run_cli('baremetal', 'node', 'list',
                                         '--include-children', '-f',
                                         'json'))
        self.assertEqual(['cli-child', 'cli-parent'],
                         sorted(_get(n, 'name') for n in listed))
        shards = json.loads(self.run_cli('baremetal', 'shard', 'list',
                                         '-f', 'json'))
        self.assertEqual({'rack-1': 1, 'None': 1},
                         {_get(s, 'name'): _get(s, 'count')
                          for s in shards})
        self.run_cli('baremetal', 'node', 'unset', 'cli-parent',
                     '--shard')
        shown = json.loads(self.run_cli('baremetal', 'node', 'show',
                                        'cli-parent', '-f', 'json'))
        self.assertIsNone(shown['shard'])

    def test_service_and_firmware_commands(self):
        """``baremetal node service`` (1.87), ``... firmware list`` (1.86).
        """
        self.run_cli('baremetal', 'node', 'create', '--driver',
                     'fake-hardware', '--name', 'fw-node')
        self.run_cli('baremetal', 'node', 'manage', 'fw-node', '--wait',
                     '30')
        self.run_cli('baremetal', 'node', 'provide', 'fw-node', '--wait',
                     '30')
        self.run_cli('baremetal', 'node', 'deploy', 'fw-node', '--wait',
                     '30')
        listed = json.loads(self.run_cli(
            'baremetal', 'node', 'firmware', 'list', 'fw-node', '-f',
            'json'))
        self.assertEqual({'bios': '1.0', 'bmc': '1.0'},
                         {_get(c, 'component'): _get(c, 'current_version')
                          for c in listed})
        steps = json.dumps([{'interface': 'firmware', 'step': 'update',
                             'args': {'settings': [
                                 {'component': 'bmc',
                                  'url': 'http://images/bmc-4.2'}]}}])
        self.run_cli('baremetal', 'node', 'service', 'fw-node',
                     '--service-steps', steps)
        # The update is a deferred action: run it as the launcher would.
        tests_base.wait_for(
            lambda: json.loads(self.run_cli(
                'baremetal', 'node', 'show', 'fw-node', '-f',
                'json'))['provision_state'] == 'service wait',
            'fw-node to wait for its firmware update')
        self.manager.deferred_actions.launch(self.context)
        tests_base.wait_for(
            lambda: json.loads(self.run_cli(
                'baremetal', 'node', 'show', 'fw-node', '-f',
                'json'))['provision_state'] == 'active',
            'fw-node to be active again')
        listed = json.loads(self.run_cli(
            'baremetal', 'node', 'firmware', 'list', 'fw-node', '-f',
            'json'))
        bmc = [c for c in listed if _get(c, 'component') == 'bmc'][0]
        self.assertEqual(('1.0', 'bmc-4.2', 'bmc-4.2'),
                         (_get(bmc, 'initial_version'),
                          _get(bmc, 'current_version'),
                          _get(bmc, 'last_version_flashed')))
        result = self.openstack.run(
            'baremetal', 'node', 'service', 'fw-node', '--service-steps',
            '[{"interface": "firmware", "step": "nope"}]')
        self.assertNotEqual(0, result.returncode)
        self.assertIn('service_steps[0]', result.stderr)

    def test_history_and_firmware_identity(self):
        """``node history list/get`` (1.115 fields), ``firmware list``."""
        node = self.make_node(name='hist-node',
                              provision_state=states.DEPLOYWAIT,
                              target_provision_state=states.ACTIVE,
                              power_state=states.POWER_ON)
        node.provision_updated_at = (obj_base.utcnow()
                                     - datetime.timedelta(minutes=5))
        node.save(self.context)
        self.run_cli('baremetal', 'node', 'abort', 'hist-node')
        tests_base.wait_for(
            lambda: json.loads(self.run_cli(
                'baremetal', 'node', 'show', 'hist-node', '-f',
                'json'))['provision_state'] == states.DEPLOYFAIL,
            'hist-node to fail its deployment')
        [short] = json.loads(self.run_cli(
            'baremetal', 'node', 'history', 'list', 'hist-node', '-f',
            'json'))
        self.assertIn('Aborted by request', _get(short, 'event'))
        [long] = json.loads(self.run_cli(
            'baremetal', 'node', 'history', 'list', 'hist-node', '--long',
            '-f', 'json'))
        self.assertEqual((states.DEPLOYFAIL, states.ACTIVE),
                         (_get(long, 'state'),
                          _get(long, 'target_provision_state')))
        self.assertGreaterEqual(_get(long, 'duration_seconds'), 300)
        event = json.loads(self.run_cli(
            'baremetal', 'node', 'history', 'get', 'hist-node',
            _get(short, 'uuid'), '-f', 'json'))
        self.assertEqual(states.DEPLOYFAIL, event['state'])
        self.assertEqual(_get(long, 'duration_seconds'),
                         event['duration_seconds'])
        # The firmware listing of python-ironicclient 6.3 shows the
        # versions; the 1.114 fields do not disturb it.
        firmware.FirmwareComponent.sync(self.context, node.id, [
            {'component': 'bmc', 'current_version': '1.0',
             'vendor': 'Acme'}])
        [bmc] = json.loads(self.run_cli(
            'baremetal', 'node', 'firmware', 'list', 'hist-node', '-f',
            'json'))
        self.assertEqual(('bmc', '1.0'), (_get(bmc, 'component'),
                                          _get(bmc, 'current_version')))

    def test_conductor_and_driver_commands(self):
        conductors = json.loads(self.run_cli(
            'baremetal', 'conductor', 'list', '-f', 'json'))
        self.assertEqual([('test-host', True)],
                         [(_get(c, 'hostname'), _get(c, 'alive'))
                          for c in conductors])
        shown = json.loads(self.run_cli(
            'baremetal', 'conductor', 'show', 'test-host', '-f', 'json'))
        self.assertEqual(['fake-hardware'], shown['drivers'])
        long = json.loads(self.run_cli(
            'baremetal', 'conductor', 'list', '--long', '-f', 'json'))
        self.assertEqual(['fake-hardware'], _get(long[0], 'drivers'))
        drivers = json.loads(self.run_cli(
            'baremetal', 'driver', 'list', '-f', 'json'))
        self.assertEqual([('fake-hardware', 'test-host')],
                         [(_get(d, 'name'), _get(d, 'hosts'))
                          for d in drivers])
        long = json.loads(self.run_cli(
            'baremetal', 'driver', 'list', '--long', '--type', 'dynamic',
            '-f', 'json'))
        self.assertEqual([('fake-hardware', 'fake')],
                         [(_get(d, 'name'), _get(d, 'default_power_interface'))
                          for d in long])
        shown = json.loads(self.run_cli(
            'baremetal', 'driver', 'show', 'fake-hardware', '-f', 'json'))
        self.assertEqual('fake', shown['default_power_interface'])
        props = json.loads(self.run_cli(
            'baremetal', 'driver', 'property', 'list', 'fake-hardware',
            '-f', 'json'))
        self.assertIn('fake_fail_power',
                      [_get(p, 'property') for p in props])

    def test_validate_and_boot_device_commands(self):
        self.run_cli('baremetal', 'node', 'create', '--driver',
                     'fake-hardware', '--name', 'v-node')
        verdicts = json.loads(self.run_cli(
            'baremetal', 'node', 'validate', 'v-node', '-f', 'json'))
        self.assertEqual({'power': True, 'deploy': True, 'boot': True,
                          'management': True, 'bios': True,
                          'firmware': True},
                         {_get(v, 'interface'): _get(v, 'result')
                          for v in verdicts})
        self.run_cli('baremetal', 'node', 'boot', 'device', 'set',
                     'v-node', 'pxe', '--persistent')
        shown = json.loads(self.run_cli(
            'baremetal', 'node', 'boot', 'device', 'show', 'v-node',
            '-f', 'json'))
        self.assertEqual({'boot_device': 'pxe', 'persistent': True}, shown)
        shown = json.loads(self.run_cli(
            'baremetal', 'node', 'boot', 'device', 'show', 'v-node',
            '--supported', '-f', 'json'))
        self.assertIn('pxe', shown['supported_boot_devices'])
        result = self.openstack.run('baremetal', 'node', 'boot', 'device',
                                    'set', 'v-node', 'floppy')
        self.assertNotEqual(0, result.returncode)


class TestOpenStackSDK(ClientTestCase):

    def connection(self):
        import openstack
        return openstack.connection.Connection(
            auth_type='none', baremetal_endpoint_override=self.url)

    def test_nodes_and_allocations(self):
        from openstack import exceptions

        conn = self.connection()
        node = conn.baremetal.create_node(driver='fake-hardware',
                                          name='sdk-node',
                                          resource_class='baremetal')
        self.assertEqual('enroll', node.provision_state)
        conn.baremetal.set_node_provision_state(node, 'manage', wait=True,
                                                timeout=30)
        node = conn.baremetal.set_node_provision_state(
            node, 'provide', wait=True, timeout=30)
        self.assertEqual('available', node.provision_state)
        self.assertEqual(['sdk-node'],
                         [n.name for n in conn.baremetal.nodes()])
        allocation = conn.baremetal.create_allocation(
            resource_class='baremetal', name='sdk-alloc')
        allocation = conn.baremetal.wait_for_allocation(allocation,
                                                        timeout=30)
        self.assertEqual('active', allocation.state)
        self.assertEqual(node.id, allocation.node_id)
        self.assertEqual([allocation.id],
                         [a.id for a in conn.baremetal.allocations()])
        fetched = conn.baremetal.get_allocation('sdk-alloc')
        self.assertEqual(allocation.id, fetched.id)
        node = conn.baremetal.patch_node(
            node, [{'op': 'add', 'path': '/extra/a', 'value': 'b'}])
        self.assertEqual({'a': 'b'}, node.extra)
        detailed = list(conn.baremetal.nodes(details=True))
        self.assertEqual(allocation.id, detailed[0].allocation_id)
        self.assertEqual(allocation.id, detailed[0].instance_id)
        conn.baremetal.delete_allocation(allocation)
        self.assertRaises(exceptions.NotFoundException,
                          conn.baremetal.get_allocation, allocation.id)
        self.assertRaises(exceptions.BadRequestException,
                          conn.baremetal.create_allocation,
                          resource_class='baremetal', id='not-a-uuid')

    def test_shard_and_parent_node(self):
        conn = self.connection()
        parent = conn.baremetal.create_node(driver='fake-hardware',
                                            name='sdk-parent',
                                            shard='rack-9')
        self.assertEqual('rack-9', parent.shard)
        child = conn.baremetal.create_node(driver='fake-hardware',
                                           name='sdk-child',
                                           parent_node=parent.id)
        self.assertEqual(parent.id, child.parent_node)
        conn.baremetal.create_node(driver='fake-hardware', name='sdk-other',
                                   shard='rack-8')
        self.assertEqual(['sdk-other', 'sdk-parent'],
                         sorted(n.name for n in conn.baremetal.nodes()))
        self.assertEqual(['sdk-parent'],
                         [n.name for n in conn.baremetal.nodes(
                             shard='rack-9')])

    def test_conductors_drivers_validate_boot_device(self):
        from openstack import exceptions

        conn = self.connection()
        self.assertEqual(['test-host'],
                         [c.hostname for c in conn.baremetal.conductors()])
        conductor = conn.baremetal.get_conductor('test-host')
        self.assertTrue(conductor.alive)
        self.assertEqual(['fake-hardware'],
                         [d.name for d in conn.baremetal.drivers()])
        driver = conn.baremetal.get_driver('fake-hardware')
        self.assertEqual(['test-host'], driver.hosts)
        self.assertEqual('fake', driver.default_power_interface)
        node = conn.baremetal.create_node(driver='fake-hardware',
                                          name='sdk-v-node')
        verdicts = conn.baremetal.validate_node(node, required=())
        self.assertTrue(verdicts['power'].result)
        self.assertIsNone(verdicts['power'].reason)
        conn.baremetal.set_node_boot_device(node, 'disk')
        self.assertEqual('disk', conn.baremetal.get_node_boot_device(
            node)['boot_device'])
        self.assertIn('disk', conn.baremetal.get_node_supported_boot_devices(
            node)['supported_boot_devices'])
        conn.baremetal.set_node_boot_device(node, 'pxe', persistent=True)
        self.assertEqual({'boot_device': 'pxe', 'persistent': True},
                         conn.baremetal.get_node_boot_device(node))
        self.assertRaises(exceptions.BadRequestException,
                          conn.baremetal.set_node_boot_device, node,
                          'floppy')
        # The default check: boot, deploy and power must pass.
        self.assertTrue(conn.baremetal.validate_node(node)['deploy'].result)
        # openstacksdk's ``details=True`` sends no detail query for
        # conductors (its query name is ``detail``); the API's parameter
        # works when given by that name.
        detailed = list(conn.baremetal.conductors(detail=True))
        self.assertEqual([['fake-hardware']], [c.drivers for c in detailed])
        drivers = list(conn.baremetal.drivers(details=True))
        self.assertEqual([['fake']],
                         [d.enabled_deploy_interfaces for d in drivers])
        self.assertRaises(exceptions.NotFoundException,
                          conn.baremetal.get_conductor, 'nope')
