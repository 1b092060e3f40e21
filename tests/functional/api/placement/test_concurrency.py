"""Concurrent allocation writers over real HTTP never overcommit.

The Placement application is served by a real server; many threads with
their own ``requests`` sessions write allocations against the same small
providers, as schedulers racing for the last resources do. Every response
must be 204 or 409 (a client retries a 409 ``placement.concurrent_update``
as the reference says, and stops at any other 409: no capacity left), the
usage seen by a concurrent reader must never exceed the capacity, and the
number of successful writes must be exactly what the capacity allows.
"""

import threading
import uuid

import requests

from alloc_framework.api.placement import deploy
from tests import base

THREADS = 12
# Attempts per thread: together well above every capacity below.
ATTEMPTS = 4
# Bound of a client's retries on placement.concurrent_update.
CLIENT_RETRIES = 50
HEADERS = {'x-auth-token': 'admin', 'accept': 'application/json',
           'openstack-api-version': 'placement latest'}
PROJECT = str(uuid.uuid4())
USER = str(uuid.uuid4())


class AllocationConcurrencyTestCase(base.DBTestCase):

    def setUp(self):
        super().setUp()
        self.conf([], project='alloc_framework', default_config_files=[])
        self.config(auth_strategy='noauth', group='placement_api')
        server = self.useFixture(base.Server(deploy.loadapp(self.conf),
                                             workers=THREADS + 4))
        self.url = server.url
        self.lock = threading.Lock()
        self.statuses = []
        self.unexpected = []
        self.overcommits = []
        self.done = threading.Event()

    def call(self, session, method, path, body=None):
        return session.request(method, self.url + path, json=body,
                               headers=HEADERS, timeout=120)

    def make_provider(self, name, inventories):
        with requests.Session() as session:
            resp = self.call(session, 'POST', '/resource_providers',
                             {'name': name})
            self.assertEqual(200, resp.status_code, resp.text)
            rp_uuid = resp.json()['uuid']
            resp = self.call(
                session, 'PUT', '/resource_providers/%s/inventories' % rp_uuid,
                {'resource_provider_generation': 0,
                 'inventories': inventories})
            self.assertEqual(200, resp.status_code, resp.text)
        return rp_uuid

    def usages(self, session, rp_uuid):
        resp = self.call(session, 'GET',
                         '/resource_providers/%s/usages' % rp_uuid)
        self.assertEqual(200, resp.status_code, resp.text)
        return resp.json()['usages']

    def write(self, session, method, path, body):
        """Send one write as a client would; True if it succeeded."""
        for _attempt in range(CLIENT_RETRIES):
            resp = self.call(session, method, path, body)
            with self.lock:
                self.statuses.append(resp.status_code)
            if resp.status_code == 204:
                return True
            if resp.status_code != 409:
                with self.lock:
                    self.unexpected.append((resp.status_code, resp.text))
                return False
            code = resp.json()['errors'][0]['code']
            if code != 'placement.concurrent_update':
                # No capacity left: a real client gives up here.
                return False
        with self.lock:
            self.unexpected.append(('gave up', path))
        return False

    def watch(self, limits, check=None):
        """Read usages until the writers finish; record any overcommit."""
        with requests.Session() as session:
            while not self.done.is_set():
                for rp_uuid, (rc, capacity) in limits.items():
                    used = self.usages(session, rp_uuid).get(rc, 0)
                    if used > capacity:
                        self.overcommits.append((rp_uuid, rc, used))
                if check is not None:
                    check(session)

    def run_writers(self, worker, limits, check=None):
        successes = []
        watcher = threading.Thread(target=self.watch, args=(limits, check))
        watcher.start()

        def run():
            with requests.Session() as session:
                count = sum(1 for _ in range(ATTEMPTS)
                            if worker(session))
            with self.lock:
                successes.append(count)

        threads = [threading.Thread(target=run) for _ in range(THREADS)]
        try:
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        finally:
            self.done.set()
            watcher.join()
        self.assertEqual([], self.unexpected)
        self.assertEqual([], self.overcommits)
        self.assertEqual(set(), set(self.statuses) - {204, 409})
        return sum(successes)

    def test_put_allocations_fill_capacity_exactly(self):
        # capacity (12 - 2) * 1.0 = 10
        rp_uuid = self.make_provider('cn1', {'VCPU': {'total': 12,
                                                      'reserved': 2}})

        def worker(session):
            consumer = str(uuid.uuid4())
            return self.write(session, 'PUT', '/allocations/' + consumer, {
                'allocations': {rp_uuid: {'resources': {'VCPU': 1}}},
                'project_id': PROJECT, 'user_id': USER,
                'consumer_generation': None, 'consumer_type': 'INSTANCE'})

        successes = self.run_writers(worker, {rp_uuid: ('VCPU', 10)})
        self.assertEqual(10, successes)
        with requests.Session() as session:
            self.assertEqual({'VCPU': 10}, self.usages(session, rp_uuid))
            resp = self.call(session, 'GET',
                             '/usages?project_id=%s' % PROJECT)
            self.assertEqual(
                {'INSTANCE': {'VCPU': 10, 'consumer_count': 10}},
                resp.json()['usages'])

    def test_post_allocations_are_atomic_across_providers(self):
        # Each POST writes two consumers, each taking 1 VCPU from cn and
        # 1 DISK_GB from the shared provider: 3 POSTs fit (disk 6 of 7).
        cn = self.make_provider('cn', {'VCPU': {'total': 10}})
        disk = self.make_provider('disk', {'DISK_GB': {'total': 7}})

        def worker(session):
            body = {}
            for _ in range(2):
                body[str(uuid.uuid4())] = {
                    'allocations': {cn: {'resources': {'VCPU': 1}},
                                    disk: {'resources': {'DISK_GB': 1}}},
                    'project_id': PROJECT, 'user_id': USER,
                    'consumer_generation': None,
                    'consumer_type': 'INSTANCE'}
            return self.write(session, 'POST', '/allocations', body)

        def both_or_nothing(session):
            # A half-written POST would leave an odd usage somewhere.
            vcpu = self.usages(session, cn).get('VCPU', 0)
            if vcpu % 2:
                self.overcommits.append(('half-written', cn, vcpu))

        successes = self.run_writers(
            worker, {cn: ('VCPU', 10), disk: ('DISK_GB', 7)},
            check=both_or_nothing)
        self.assertEqual(3, successes)
        with requests.Session() as session:
            self.assertEqual({'VCPU': 6}, self.usages(session, cn))
            self.assertEqual({'DISK_GB': 6}, self.usages(session, disk))

    def test_replacing_and_deleting_never_overcommit(self):
        # Consumers grow, shrink and go away concurrently; the provider is
        # never above its capacity and ends with exactly what is left.
        rp_uuid = self.make_provider('cn', {'MEMORY_MB': {'total': 64}})
        path = '/allocations/%s'

        def worker(session):
            consumer = str(uuid.uuid4())
            body = {'allocations': {rp_uuid: {'resources': {
                'MEMORY_MB': 4}}},
                'project_id': PROJECT, 'user_id': USER,
                'consumer_generation': None, 'consumer_type': 'INSTANCE'}
            if not self.write(session, 'PUT', path % consumer, body):
                return False
            # Grow to 8 (may not fit), then delete half of the time.
            body['consumer_generation'] = 1
            body['allocations'][rp_uuid]['resources']['MEMORY_MB'] = 8
            self.write(session, 'PUT', path % consumer, body)
            if int(consumer[0], 16) % 2:
                resp = self.call(session, 'DELETE', path % consumer)
                with self.lock:
                    self.statuses.append(resp.status_code)
            return True

        self.run_writers(worker, {rp_uuid: ('MEMORY_MB', 64)})
        with requests.Session() as session:
            resp = self.call(session, 'GET',
                             '/resource_providers/%s/allocations' % rp_uuid)
            left = sum(a['resources']['MEMORY_MB']
                       for a in resp.json()['allocations'].values())
            self.assertEqual({'MEMORY_MB': left},
                             self.usages(session, rp_uuid))
            self.assertLessEqual(left, 64)

    def test_inventory_shrinking_while_allocating(self):
        # An operator halves the total while schedulers allocate. As in
        # upstream Placement the shrink lands even below the usage; from
        # then on an allocation lands only where it fits the new capacity,
        # so the usage ends at 12, or where it stood when the shrink
        # landed if that was more, and never grows past that.
        rp_uuid = self.make_provider('cn', {'VCPU': {'total': 24}})
        inv_path = '/resource_providers/%s/inventories/VCPU' % rp_uuid
        shrink_statuses = []
        shrunk = threading.Event()
        after_shrink = []

        def shrink():
            with requests.Session() as session:
                for _attempt in range(CLIENT_RETRIES):
                    gen = self.call(session, 'GET', inv_path).json()[
                        'resource_provider_generation']
                    resp = self.call(session, 'PUT', inv_path, {
                        'resource_provider_generation': gen, 'total': 12})
                    shrink_statuses.append(resp.status_code)
                    if resp.status_code == 200:
                        shrunk.set()
                    if resp.status_code != 409 or resp.json()['errors'][0][
                            'code'] != 'placement.concurrent_update':
                        return

        def no_growth_past_the_new_capacity(session):
            if not shrunk.is_set():
                return
            used = self.usages(session, rp_uuid).get('VCPU', 0)
            if after_shrink and used > max(12, after_shrink[0]):
                self.overcommits.append(('grew after shrink', used))
            after_shrink.append(used)

        def worker(session):
            consumer = str(uuid.uuid4())
            return self.write(session, 'PUT', '/allocations/' + consumer, {
                'allocations': {rp_uuid: {'resources': {'VCPU': 1}}},
                'project_id': PROJECT, 'user_id': USER,
                'consumer_generation': None, 'consumer_type': 'INSTANCE'})

        shrinker = threading.Thread(target=shrink)
        shrinker.start()
        try:
            successes = self.run_writers(
                worker, {rp_uuid: ('VCPU', 24)},
                check=no_growth_past_the_new_capacity)
        finally:
            shrinker.join()
        self.assertEqual(200, shrink_statuses[-1], shrink_statuses)
        self.assertEqual(set(), set(shrink_statuses) - {200, 409})
        with requests.Session() as session:
            total = self.call(session, 'GET', inv_path).json()['total']
            used = self.usages(session, rp_uuid)['VCPU']
        self.assertEqual(12, total)
        # Every successful write is counted, and the writers exhausted
        # whatever the smaller inventory left.
        self.assertEqual(successes, used)
        self.assertGreaterEqual(used, 12)
        self.assertLessEqual(used, 24)
        if after_shrink:
            self.assertEqual(max(12, after_shrink[0]), used)

    def test_one_new_consumer_created_once(self):
        # Many clients claim the same new consumer (consumer_generation
        # null): exactly one wins, the others learn it exists.
        rp_uuid = self.make_provider('cn', {'VCPU': {'total': 100}})
        consumer = str(uuid.uuid4())
        results = []

        def claim(i):
            with requests.Session() as session:
                resp = self.call(session, 'PUT', '/allocations/' + consumer,
                                 {'allocations': {rp_uuid: {'resources': {
                                     'VCPU': i + 1}}},
                                  'project_id': PROJECT, 'user_id': USER,
                                  'consumer_generation': None,
                                  'consumer_type': 'INSTANCE'})
                code = None
                if resp.status_code == 409:
                    code = resp.json()['errors'][0]['code']
                with self.lock:
                    results.append((resp.status_code, code))

        base.run_threads(claim, THREADS)
        self.assertEqual(1, results.count((204, None)), results)
        self.assertEqual(THREADS - 1,
                         results.count((409, 'placement.concurrent_update')),
                         results)
        with requests.Session() as session:
            resp = self.call(session, 'GET', '/allocations/' + consumer)
            self.assertEqual(1, resp.json()['consumer_generation'])
            used = resp.json()['allocations'][rp_uuid]['resources']['VCPU']
            self.assertEqual({'VCPU': used}, self.usages(session, rp_uuid))

    def test_reshape_racing_allocation_writers(self):
        # VCPU moves from a compute node to its child while schedulers keep
        # allocating on the node. A reshape computed from a stale view is
        # refused (409) and recomputed; in the end every allocation sits
        # on inventory that exists and fits.
        parent = self.make_provider('cn', {'VCPU': {'total': 40}})
        with requests.Session() as session:
            resp = self.call(session, 'POST', '/resource_providers', {
                'name': 'numa0', 'parent_provider_uuid': parent})
            self.assertEqual(200, resp.status_code, resp.text)
            child = resp.json()['uuid']
        reshape_statuses = []
        reshaped = []

        def reshape():
            headers = dict(HEADERS, **{'x-roles': 'service'})
            with requests.Session() as session:
                for _attempt in range(CLIENT_RETRIES):
                    allocs = self.call(
                        session, 'GET',
                        '/resource_providers/%s/allocations' % parent).json()
                    child_gen = self.call(
                        session, 'GET',
                        '/resource_providers/%s' % child).json()['generation']
                    inventories = {
                        parent: {'resource_provider_generation':
                                 allocs['resource_provider_generation'],
                                 'inventories': {}},
                        child: {'resource_provider_generation': child_gen,
                                'inventories': {'VCPU': {'total': 40}}}}
                    body = {'inventories': inventories, 'allocations': {}}
                    for consumer, alloc in allocs['allocations'].items():
                        body['allocations'][consumer] = {
                            'allocations': {child: {
                                'resources': alloc['resources']}},
                            'project_id': PROJECT, 'user_id': USER,
                            'consumer_generation':
                                alloc['consumer_generation'],
                            'consumer_type': 'INSTANCE'}
                    resp = session.post(self.url + '/reshaper', json=body,
                                        headers=headers, timeout=120)
                    reshape_statuses.append(resp.status_code)
                    if resp.status_code == 204:
                        reshaped.append(len(body['allocations']))
                        return
                    if resp.status_code != 409:
                        self.unexpected.append(('reshape', resp.text))
                        return

        def worker(session):
            consumer = str(uuid.uuid4())
            return self.write(session, 'PUT', '/allocations/' + consumer, {
                'allocations': {parent: {'resources': {'VCPU': 1}}},
                'project_id': PROJECT, 'user_id': USER,
                'consumer_generation': None, 'consumer_type': 'INSTANCE'})

        reshaper = threading.Thread(target=reshape)
        reshaper.start()
        try:
            successes = self.run_writers(worker, {parent: ('VCPU', 40),
                                                  child: ('VCPU', 40)})
        finally:
            reshaper.join()
        self.assertEqual(set(), set(reshape_statuses) - {204, 409})
        with requests.Session() as session:
            on_parent = self.usages(session, parent)
            on_child = self.usages(session, child)
        # Nothing is lost: every successful write is somewhere.
        self.assertEqual(successes, on_parent.get('VCPU', 0) +
                         on_child.get('VCPU', 0))
        if reshaped:
            # Inventory and allocations left the parent together.
            self.assertEqual({}, on_parent)
            self.assertLessEqual(reshaped[0], on_child['VCPU'])
        else:
            self.assertEqual({'VCPU': successes}, on_parent)
