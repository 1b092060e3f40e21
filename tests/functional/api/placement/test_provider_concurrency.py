"""Concurrent writers of one resource provider over real HTTP.

Many threads read-modify-write the inventories and traits of the same
provider through a real server, retrying on 409
``placement.concurrent_update`` as the reference tells clients to. No
update may be lost, and no request may fail with anything but that 409.
"""

import threading

import requests

from alloc_framework.api.placement import deploy
from tests import base

THREADS = 8
ROUNDS = 5
HEADERS = {'x-auth-token': 'admin', 'accept': 'application/json',
           'openstack-api-version': 'placement latest'}


class ProviderConcurrencyTestCase(base.DBTestCase):

    def setUp(self):
        super().setUp()
        self.conf([], project='alloc_framework', default_config_files=[])
        self.config(auth_strategy='noauth', group='placement_api')
        server = self.useFixture(base.Server(deploy.loadapp(self.conf),
                                             workers=THREADS * 2))
        self.url = server.url
        self.unexpected = []
        resp = self.call('POST', '/resource_providers', {'name': 'cn'})
        self.assertEqual(200, resp.status_code, resp.text)
        self.rp = '/resource_providers/%s' % resp.json()['uuid']

    def call(self, method, path, body=None):
        return requests.request(method, self.url + path, json=body,
                                headers=HEADERS, timeout=60)

    def write_until_done(self, path, change):
        """GET ``path``, PUT ``change(document)``; retry on conflicts.

        Returns how many writes succeeded (1) so callers can count.
        """
        while True:
            doc = self.call('GET', path).json()
            resp = self.call('PUT', path, change(doc))
            if resp.status_code == 200:
                return 1
            if resp.status_code == 409 and resp.json()['errors'][0][
                    'code'] == 'placement.concurrent_update':
                continue
            self.unexpected.append((resp.status_code, resp.text))
            return 0

    def run_threads(self, target):
        base.run_threads(target, THREADS)
        self.assertEqual([], self.unexpected)

    def test_inventory_total_increments(self):
        resp = self.call('PUT', self.rp + '/inventories', {
            'resource_provider_generation': 0,
            'inventories': {'VCPU': {'total': 1}}})
        self.assertEqual(200, resp.status_code, resp.text)
        path = self.rp + '/inventories/VCPU'

        def bump(doc):
            return {'resource_provider_generation':
                    doc['resource_provider_generation'],
                    'total': doc['total'] + 1}

        def worker(i):
            for _ in range(ROUNDS):
                self.write_until_done(path, bump)

        self.run_threads(worker)
        doc = self.call('GET', path).json()
        self.assertEqual(1 + THREADS * ROUNDS, doc['total'])
        self.assertEqual(1 + THREADS * ROUNDS,
                         doc['resource_provider_generation'])

    def test_inventory_classes_added(self):
        for i in range(THREADS):
            resp = self.call('PUT', '/resource_classes/CUSTOM_RC%d' % i)
            self.assertEqual(201, resp.status_code, resp.text)
        path = self.rp + '/inventories'

        def worker(i):
            def add(doc):
                doc['inventories']['CUSTOM_RC%d' % i] = {'total': i + 1}
                return doc
            self.write_until_done(path, add)

        self.run_threads(worker)
        doc = self.call('GET', path).json()
        self.assertEqual(
            {'CUSTOM_RC%d' % i: i + 1 for i in range(THREADS)},
            {rc: inv['total'] for rc, inv in doc['inventories'].items()})
        self.assertEqual(THREADS, doc['resource_provider_generation'])

    def test_traits_added(self):
        for i in range(THREADS):
            resp = self.call('PUT', '/traits/CUSTOM_T%d' % i)
            self.assertEqual(201, resp.status_code, resp.text)
        path = self.rp + '/traits'

        def worker(i):
            for round_ in range(ROUNDS):
                def add(doc):
                    # Every round re-adds the thread's trait: only the
                    # generation proves that the write happened.
                    traits = set(doc['traits']) | {'CUSTOM_T%d' % i}
                    return {'traits': sorted(traits),
                            'resource_provider_generation':
                                doc['resource_provider_generation']}
                self.write_until_done(path, add)

        self.run_threads(worker)
        doc = self.call('GET', path).json()
        self.assertEqual(sorted('CUSTOM_T%d' % i for i in range(THREADS)),
                         doc['traits'])
        self.assertEqual(THREADS * ROUNDS,
                         doc['resource_provider_generation'])

    def test_mixed_writers(self):
        """Traits, aggregates and inventories of one provider at once."""
        for i in range(THREADS):
            self.call('PUT', '/traits/CUSTOM_M%d' % i)
        resp = self.call('PUT', self.rp + '/inventories', {
            'resource_provider_generation': 0,
            'inventories': {'DISK_GB': {'total': 1}}})
        self.assertEqual(200, resp.status_code, resp.text)
        counts = []

        def worker(i):
            done = 0
            for _ in range(ROUNDS):
                if i % 3 == 0:
                    done += self.write_until_done(
                        self.rp + '/traits', lambda doc: {
                            'traits': sorted(set(doc['traits'])
                                             | {'CUSTOM_M%d' % i}),
                            'resource_provider_generation':
                                doc['resource_provider_generation']})
                elif i % 3 == 1:
                    done += self.write_until_done(
                        self.rp + '/aggregates', lambda doc: {
                            'aggregates': doc['aggregates'],
                            'resource_provider_generation':
                                doc['resource_provider_generation']})
                else:
                    done += self.write_until_done(
                        self.rp + '/inventories/DISK_GB', lambda doc: {
                            'total': doc['total'] + 1,
                            'resource_provider_generation':
                                doc['resource_provider_generation']})
            counts.append(done)

        self.run_threads(worker)
        inv_writers = len([i for i in range(THREADS) if i % 3 == 2])
        doc = self.call('GET', self.rp + '/inventories/DISK_GB').json()
        self.assertEqual(1 + inv_writers * ROUNDS, doc['total'])
        self.assertEqual(1 + sum(counts),
                         doc['resource_provider_generation'])
        self.assertEqual(THREADS * ROUNDS, sum(counts))

    def test_crossed_moves_never_loop(self):
        """Moving A under B while B moves under A leaves a tree."""
        a = self.call('POST', '/resource_providers', {'name': 'a'}).json()
        b = self.call('POST', '/resource_providers', {'name': 'b'}).json()
        for _ in range(ROUNDS):
            for rp in (a, b):
                resp = self.call('PUT', '/resource_providers/%s' % rp['uuid'],
                                 {'name': rp['name'],
                                  'parent_provider_uuid': None})
                self.assertEqual(200, resp.status_code, resp.text)
            statuses = []

            def move(pair):
                child, parent = pair
                resp = self.call(
                    'PUT', '/resource_providers/%s' % child['uuid'],
                    {'name': child['name'],
                     'parent_provider_uuid': parent['uuid']})
                statuses.append(resp.status_code)

            threads = [threading.Thread(target=move, args=(pair,))
                       for pair in ((a, b), (b, a))]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            self.assertTrue(set(statuses) <= {200, 400, 409}, statuses)
            self.assertIn(200, statuses)
            got_a = self.call('GET', '/resource_providers/' + a['uuid'])
            got_b = self.call('GET', '/resource_providers/' + b['uuid'])
            parents = (got_a.json()['parent_provider_uuid'],
                       got_b.json()['parent_provider_uuid'])
            self.assertIn(None, parents)
            roots = {got_a.json()['root_provider_uuid'],
                     got_b.json()['root_provider_uuid']}
            self.assertEqual(1, len(roots))
