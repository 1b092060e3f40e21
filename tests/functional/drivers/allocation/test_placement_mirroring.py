"""Nodes changed through the bare metal API are mirrored in Placement."""

import logging

import fixtures

from alloc_framework.drivers.allocation import placement
from alloc_framework.drivers.allocation import placement_drift
from tests import base as tests_base
from tests.functional.api.baremetal import base
from tests.functional.drivers.allocation import \
    placement_fixtures as pb_fixtures

RC = 'CUSTOM_BAREMETAL'


class MirroringTestCase(base.BaremetalTestCase):

    mode = 'in-process'

    def _start_conductor(self):
        self.placement = self.useFixture(
            pb_fixtures.PlacementBackendFixture(self, self.mode))
        self.client = self.placement.client
        return super()._start_conductor()

    def create_node(self, **kw):
        body = {'driver': 'fake-hardware', 'resource_class': 'baremetal'}
        body.update(kw)
        return self.post('/v1/nodes', body, status=201).json_body

    def reserved(self, node_uuid):
        return self.client.get_inventories(node_uuid)[0][RC]['reserved']


class MirroringTests:

    def test_node_life_cycle(self):
        node = self.create_node(name='n-1')
        uuid = node['uuid']
        provider = self.client.get_provider(uuid)
        self.assertEqual('n-1', provider['name'])
        # Enrolled: not available, so reserved.
        self.assertEqual(1, self.reserved(uuid))
        self.put('/v1/nodes/%s/traits/CUSTOM_GPU' % uuid, status=204)
        self.assertEqual({'CUSTOM_GPU', placement.NODE_TRAIT},
                         set(self.client.get_traits(uuid)[0]))
        for verb in ('manage', 'provide'):
            self.put('/v1/nodes/%s/states/provision' % uuid,
                     {'target': verb}, status=202)
            tests_base.wait_for(
                lambda: self.get('/v1/nodes/%s' % uuid).json_body[
                    'target_provision_state'] is None
                and self.get('/v1/nodes/%s' % uuid).json_body[
                    'reservation'] is None, 'node %s to %s' % (uuid, verb))
        self.assertEqual('available',
                         self.get('/v1/nodes/%s' % uuid).json_body[
                             'provision_state'])
        tests_base.wait_for(lambda: self.reserved(uuid) == 0,
                            'the provider to be free')
        self.patch('/v1/nodes/%s' % uuid,
                   [{'op': 'replace', 'path': '/maintenance',
                     'value': True},
                    {'op': 'replace', 'path': '/name', 'value': 'n-2'}],
                   status=200)
        self.assertEqual(1, self.reserved(uuid))
        self.assertEqual('n-2', self.client.get_provider(uuid)['name'])
        self.delete('/v1/nodes/%s' % uuid, status=204)
        self.assertIsNone(self.client.get_provider(uuid))

    def allocated_node(self):
        """A mirrored node and the body of an active allocation on it."""
        node = self.make_node()
        self.placement.sync(node.uuid)
        body = self.post('/v1/allocations', {'resource_class': 'baremetal'},
                         status=201).json_body
        tests_base.wait_for(
            lambda: self.get('/v1/allocations/%s' % body['uuid']).json_body[
                'state'] == 'active', 'the allocation')
        return node, body

    def test_allocation_ended_by_a_node_update_loses_its_claim(self):
        node, body = self.allocated_node()
        self.assertEqual({body['uuid']: node.uuid}, self.placement.claims())
        self.patch('/v1/nodes/%s' % node.uuid,
                   [{'op': 'remove', 'path': '/instance_uuid'}], status=200)
        self.get('/v1/allocations/%s' % body['uuid'], status=404)
        self.assertEqual({}, self.placement.claims())

    def traits(self, node_uuid):
        return set(self.client.get_traits(node_uuid)[0]) - {
            placement.NODE_TRAIT}

    def test_traits_replaced_and_removed(self):
        uuid = self.create_node()['uuid']
        self.put('/v1/nodes/%s/traits' % uuid,
                 {'traits': ['CUSTOM_A', 'CUSTOM_B']}, status=204)
        self.assertEqual({'CUSTOM_A', 'CUSTOM_B'}, self.traits(uuid))
        self.delete('/v1/nodes/%s/traits/CUSTOM_A' % uuid, status=204)
        self.assertEqual({'CUSTOM_B'}, self.traits(uuid))
        self.delete('/v1/nodes/%s/traits' % uuid, status=204)
        self.assertEqual(set(), self.traits(uuid))
        self.assertIn(placement.NODE_TRAIT,
                      self.client.get_traits(uuid)[0])

    def test_resource_class_and_projects(self):
        uuid = self.create_node()['uuid']
        self.patch('/v1/nodes/%s' % uuid,
                   [{'op': 'replace', 'path': '/resource_class',
                     'value': 'large'},
                    {'op': 'replace', 'path': '/owner', 'value': 'p-1'},
                    {'op': 'replace', 'path': '/lessee', 'value': 'p-2'}],
                   status=200)
        self.assertEqual({'CUSTOM_LARGE'},
                         set(self.client.get_inventories(uuid)[0]))
        self.assertEqual({placement.project_aggregate('p-1'),
                          placement.project_aggregate('p-2')},
                         set(self.client.get_aggregates(uuid)[0]))
        self.patch('/v1/nodes/%s' % uuid,
                   [{'op': 'remove', 'path': '/lessee'}], status=200)
        self.assertEqual([placement.project_aggregate('p-1')],
                         self.client.get_aggregates(uuid)[0])

    def test_allocation_deleted_in_maintenance_reserves_the_node(self):
        node, body = self.allocated_node()
        self.put('/v1/nodes/%s/maintenance' % node.uuid,
                 {'reason': 'broken'}, status=202)
        # In use: the claim holds the unit, nothing is reserved.
        self.assertEqual(0, self.reserved(node.uuid))
        self.delete('/v1/allocations/%s' % body['uuid'], status=204)
        self.assertEqual({}, self.placement.claims())
        # Free of its allocation but in maintenance: reserved.
        self.assertEqual(1, self.reserved(node.uuid))
        self.assertEqual([], placement_drift.find(
            self.context, self.placement.backend))


class TestInProcess(MirroringTests, MirroringTestCase):
    mode = 'in-process'


class TestUpstream(MirroringTests, MirroringTestCase):
    # The same SQL as TestInProcess; upstream keeps its own SQLite.
    dialect_neutral = True
    mode = 'upstream'


class TestPlacementDown(MirroringTestCase):
    """A Placement outage never fails a node's change."""
    dialect_neutral = True

    def _start_conductor(self):
        self.config(backend='placement', group='allocation')
        pb_fixtures.configure_http(
            self, 'http://127.0.0.1:%d' % tests_base.free_port())
        return base.BaremetalTestCase._start_conductor(self)

    def test_node_changes_succeed(self):
        logger = self.useFixture(fixtures.FakeLogger(level=logging.WARNING))
        uuid = self.create_node()['uuid']
        self.patch('/v1/nodes/%s' % uuid,
                   [{'op': 'replace', 'path': '/maintenance',
                     'value': True}], status=200)
        self.delete('/v1/nodes/%s' % uuid, status=204)
        self.assertIn('Could not update the resource provider of node %s'
                      % uuid, logger.output)

    def test_allocation_fails_with_a_clear_error(self):
        self.make_node()
        body = self.post('/v1/allocations', {'resource_class': 'baremetal'},
                         status=201).json_body
        done = tests_base.wait_for(
            lambda: (self.get('/v1/allocations/%s' % body['uuid'])
                     .json_body if self.get('/v1/allocations/%s'
                                            % body['uuid']).json_body[
                         'state'] != 'allocating' else None),
            'the allocation to fail')
        self.assertEqual('error', done['state'])
        self.assertIn('the Placement service failed', done['last_error'])
