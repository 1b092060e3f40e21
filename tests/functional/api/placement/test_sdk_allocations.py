"""openstacksdk's placement proxy against a real server: allocations and
usages as far as the SDK supports them."""

import uuid

import openstack.connection
from openstack import exceptions as sdk_exc
import requests

from alloc_framework.api.placement import deploy
from tests import base

HEADERS = {'x-auth-token': 'admin', 'accept': 'application/json',
           'openstack-api-version': 'placement latest'}


class SDKAllocationsTestCase(base.DBTestCase):
    # A real client over HTTP: its SQL is the API's, tested elsewhere.
    dialect_neutral = True

    def setUp(self):
        super().setUp()
        self.conf([], project='alloc_framework', default_config_files=[])
        self.config(auth_strategy='noauth', group='placement_api')
        server = self.useFixture(base.Server(deploy.loadapp(self.conf)))
        self.url = server.url
        # The noauth server takes the token as "user[:project]".
        self.conn = openstack.connection.Connection(
            auth_type='admin_token',
            auth={'endpoint': self.url, 'token': 'admin'},
            placement_endpoint_override=self.url)
        self.addCleanup(self.conn.close)
        self.project = str(uuid.uuid4())
        self.user = str(uuid.uuid4())
        self.rp = self._provider('cn1', {'VCPU': {'total': 4},
                                         'MEMORY_MB': {'total': 1024}})

    def _provider(self, name, inventories):
        rp = self.conn.placement.create_resource_provider(name=name)
        resp = requests.put(
            '%s/resource_providers/%s/inventories' % (self.url, rp.id),
            json={'resource_provider_generation': rp.generation,
                  'inventories': inventories},
            headers=HEADERS, timeout=60)
        self.assertEqual(200, resp.status_code, resp.text)
        return rp.id

    def test_allocation_lifecycle(self):
        placement = self.conn.placement
        consumer = str(uuid.uuid4())
        placement.update_allocation(
            consumer,
            allocations={self.rp: {'resources': {'VCPU': 2,
                                                 'MEMORY_MB': 256}}},
            project_id=self.project, user_id=self.user,
            consumer_generation=None, consumer_type='INSTANCE')
        alloc = placement.get_allocation(consumer)
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 256},
                         alloc.allocations[self.rp]['resources'])
        self.assertEqual(1, alloc.consumer_generation)
        self.assertEqual('INSTANCE', alloc.consumer_type)
        self.assertEqual(self.project, alloc.project_id)

        usage = placement.fetch_resource_provider_usages(self.rp)
        self.assertEqual({'VCPU': 2, 'MEMORY_MB': 256}, usage.usages)

        by_rp = list(placement.resource_provider_allocations(self.rp))
        self.assertEqual(1, len(by_rp))

        usages = list(placement.usages(self.project))
        self.assertEqual(1, len(usages))

        # Stale consumer generation: a conflict, nothing written.
        self.assertRaises(
            sdk_exc.ConflictException, placement.update_allocation,
            consumer, allocations={self.rp: {'resources': {'VCPU': 1}}},
            project_id=self.project, user_id=self.user,
            consumer_generation=0, consumer_type='INSTANCE')
        # Over capacity: a conflict too.
        self.assertRaises(
            sdk_exc.ConflictException, placement.update_allocation,
            consumer, allocations={self.rp: {'resources': {'VCPU': 5}}},
            project_id=self.project, user_id=self.user,
            consumer_generation=1, consumer_type='INSTANCE')

        placement.delete_allocation(consumer)
        self.assertEqual(
            {'VCPU': 0, 'MEMORY_MB': 0},
            placement.fetch_resource_provider_usages(self.rp).usages)
        self.assertRaises(sdk_exc.NotFoundException,
                          placement.delete_allocation, consumer,
                          ignore_missing=False)

    def test_create_allocations_for_many_consumers(self):
        placement = self.conn.placement
        first, second = str(uuid.uuid4()), str(uuid.uuid4())
        owner = {'project_id': self.project, 'user_id': self.user,
                 'consumer_generation': None, 'consumer_type': 'MIGRATION'}
        placement.create_allocations({
            first: dict(owner, allocations={
                self.rp: {'resources': {'VCPU': 1}}}),
            second: dict(owner, allocations={
                self.rp: {'resources': {'VCPU': 3}}}),
        })
        self.assertEqual(
            4, placement.fetch_resource_provider_usages(self.rp)
            .usages['VCPU'])
        # A third consumer does not fit: the whole request is refused.
        third = str(uuid.uuid4())
        self.assertRaises(sdk_exc.ConflictException,
                          placement.create_allocations, {
                              first: dict(owner, consumer_generation=1,
                                          allocations={}),
                              third: dict(owner, allocations={
                                  self.rp: {'resources': {'VCPU': 2}}})})
        self.assertEqual(
            {self.rp: {'generation': self.rp_generation(),
                       'resources': {'VCPU': 1}}},
            placement.get_allocation(first).allocations)

    def rp_generation(self):
        return self.conn.placement.get_resource_provider(self.rp).generation
