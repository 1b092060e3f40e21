"""POST /reshaper against concurrent claims, and its failures, over HTTP.

A compute node ``cn`` holds ``VCPU`` and ``MEMORY_MB``; a reshape moves
its ``VCPU`` inventory, and the ``VCPU`` allocations of its consumers,
to two NUMA children. Clients claim ``VCPU`` meanwhile, on the node (the
old shape) or on the children (the new shape), from real threads
against the application served over HTTP.

What must hold, at any moment, is read by one SQL statement (one
snapshot on every database) of every inventory and allocation:

* the tree is in the old shape (``VCPU`` inventory on the node only) or
  in the new one (on the children only), never in a mix;
* every allocation sits on an inventory of its class, and no provider
  is ever above its capacity;
* the consumers the reshape moves are either all where they were or all
  where the reshape put them.

At the end, every unit allocated is accounted for: the units moved by
the reshape plus those claimed on the children afterwards are what the
children hold, and the node holds no ``VCPU``.

Failed reshapes (bad input, a stale generation, allocations that do not
fit) must leave everything as it was: every inventory, allocation and
generation is compared before and after.
"""

import logging
import threading
import uuid

import fixtures
import requests
import sqlalchemy as sa

from alloc_framework.api.placement import deploy
from alloc_framework.db.sqlalchemy import models
from tests import base

THREADS = 4
# Claims per client: until ATTEMPTS_AFTER were made after the reshape,
# MAX_ATTEMPTS at most.
ATTEMPTS_AFTER = 4
MAX_ATTEMPTS = 40
CLIENT_RETRIES = 50
HEADERS = {'x-auth-token': 'admin', 'accept': 'application/json',
           'openstack-api-version': 'placement latest'}
# The reshaper needs the service role under the default policy.
RESHAPE_HEADERS = dict(HEADERS, **{'x-roles': 'service'})
PROJECT = str(uuid.uuid4())
USER = str(uuid.uuid4())
# Consumers of the node before any claim: (VCPU, MEMORY_MB).
EXISTING = {str(uuid.uuid4()): (4, 512), str(uuid.uuid4()): (2, 0)}
NODE_VCPU = 16
CHILD_VCPU = 12

INV = models.Inventory.__table__
ALLOC = models.Allocation.__table__
RP = models.ResourceProvider.__table__
CONSUMER = models.Consumer.__table__


class ReshaperTestBase(base.DBTestCase):

    def setUp(self):
        super().setUp()
        self.conf([], project='alloc_framework', default_config_files=[])
        self.config(auth_strategy='noauth', group='placement_api')
        server = self.useFixture(base.Server(deploy.loadapp(self.conf),
                                             workers=THREADS + 4))
        self.url = server.url
        self.session = requests.Session()
        self.addCleanup(self.session.close)
        self.cn = self.create('cn')
        self.numa = [self.create('cn_numa%d' % i, self.cn) for i in (0, 1)]
        self.put_inventories(self.cn, {'VCPU': {'total': NODE_VCPU},
                                       'MEMORY_MB': {'total': 4096}})
        for consumer, (vcpu, memory) in EXISTING.items():
            resources = {'VCPU': vcpu}
            if memory:
                resources['MEMORY_MB'] = memory
            self.assertEqual(204, self.claim(
                self.session, consumer, {self.cn: resources}).status_code)
        with self.db.engine.connect() as conn:
            self.rp_uuid = dict(conn.execute(sa.select(
                RP.c.id, RP.c.uuid)).all())
            self.rc_name = dict(conn.execute(sa.select(
                models.ResourceClass.__table__.c.id,
                models.ResourceClass.__table__.c.name)).all())

    # -- HTTP -----------------------------------------------------------

    def call(self, session, method, path, body=None, headers=HEADERS):
        return session.request(method, self.url + path, json=body,
                               headers=headers, timeout=120)

    def create(self, name, parent=None):
        resp = self.call(self.session, 'POST', '/resource_providers',
                         {'name': name, 'parent_provider_uuid': parent})
        self.assertEqual(200, resp.status_code, resp.text)
        return resp.json()['uuid']

    def generation(self, session, rp):
        return self.call(session, 'GET',
                         '/resource_providers/%s' % rp).json()['generation']

    def put_inventories(self, rp, inventories):
        resp = self.call(
            self.session, 'PUT', '/resource_providers/%s/inventories' % rp,
            {'resource_provider_generation': self.generation(self.session,
                                                             rp),
             'inventories': inventories})
        self.assertEqual(200, resp.status_code, resp.text)

    def claim(self, session, consumer, allocations):
        """PUT /allocations of a new consumer."""
        return self.call(session, 'PUT', '/allocations/' + consumer, {
            'allocations': {rp: {'resources': resources}
                            for rp, resources in allocations.items()},
            'project_id': PROJECT, 'user_id': USER,
            'consumer_generation': None, 'consumer_type': 'INSTANCE'})

    def reshape_body(self, session):
        """The reshape as a client computes it from what it reads now.

        The node keeps its MEMORY_MB; each child gets CHILD_VCPU of VCPU;
        each consumer's VCPU goes to the child with most room left,
        largest first (they always fit: the children hold what the node
        held). Returns ``(body, VCPU moved)``.
        """
        node = self.call(session, 'GET',
                         '/resource_providers/%s/allocations' % self.cn)
        node = node.json()
        gens = {rp: self.generation(session, rp) for rp in self.numa}
        room = {rp: CHILD_VCPU for rp in self.numa}
        allocations = {}
        moved = 0
        for consumer, alloc in sorted(
                node['allocations'].items(),
                key=lambda item: -item[1]['resources'].get('VCPU', 0)):
            resources = dict(alloc['resources'])
            new = {}
            vcpu = resources.pop('VCPU', 0)
            if resources:
                new[self.cn] = {'resources': resources}
            if vcpu:
                child = max(self.numa, key=lambda rp: room[rp])
                room[child] -= vcpu
                moved += vcpu
                new[child] = {'resources': {'VCPU': vcpu}}
            allocations[consumer] = {
                'allocations': new, 'project_id': PROJECT, 'user_id': USER,
                'consumer_generation': alloc['consumer_generation'],
                'consumer_type': 'INSTANCE'}
        inventories = {self.cn: {
            'resource_provider_generation':
                node['resource_provider_generation'],
            'inventories': {'MEMORY_MB': {'total': 4096}}}}
        for rp in self.numa:
            inventories[rp] = {'resource_provider_generation': gens[rp],
                               'inventories': {'VCPU': {
                                   'total': CHILD_VCPU}}}
        return {'inventories': inventories,
                'allocations': allocations}, moved

    def reshape(self, session, body):
        return self.call(session, 'POST', '/reshaper', body,
                         headers=RESHAPE_HEADERS)

    # -- the database, one statement --------------------------------------

    def snapshot(self):
        """Every inventory and allocation, read by one statement.

        :returns: ``(inventories, allocations)``:
            ``{(rp uuid, class): (total, reserved, ratio)}`` and
            ``{(consumer, rp uuid, class): used}``.
        """
        query = sa.union_all(
            sa.select(sa.literal('i').label('kind'),
                      INV.c.resource_provider_id.label('rp'),
                      INV.c.resource_class_id.label('rc'),
                      INV.c.total.label('amount'),
                      INV.c.reserved.label('reserved'),
                      INV.c.allocation_ratio.label('ratio'),
                      sa.literal('', sa.String(36)).label('consumer')),
            sa.select(sa.literal('a'), ALLOC.c.resource_provider_id,
                      ALLOC.c.resource_class_id, ALLOC.c.used,
                      sa.literal(0), sa.literal(1.0, sa.Float),
                      ALLOC.c.consumer_id))
        inventories, allocations = {}, {}
        with self.db.engine.connect() as conn:
            for kind, rp_id, rc_id, amount, reserved, ratio, consumer in (
                    conn.execute(query)):
                rp, rc = self.rp_uuid[rp_id], self.rc_name[rc_id]
                if kind == 'i':
                    inventories[rp, rc] = (amount, reserved, ratio)
                else:
                    allocations[consumer, rp, rc] = amount
        return inventories, allocations

    def state(self):
        """The snapshot, with every provider and consumer generation."""
        with self.db.engine.connect() as conn:
            providers = dict(conn.execute(sa.select(
                RP.c.uuid, RP.c.generation)).all())
            consumers = dict(conn.execute(sa.select(
                CONSUMER.c.uuid, CONSUMER.c.generation)).all())
        return self.snapshot(), providers, consumers


class ReshapeRacingClaimsTestCase(ReshaperTestBase):
    """Claims on the old shape and on the new one while it moves."""

    def setUp(self):
        super().setUp()
        self.lock = threading.Lock()
        self.problems = []
        self.statuses = []
        self.done = threading.Event()
        self.snapshots = 0

    def check(self, inventories, allocations):
        """The invariants of the module docstring on one snapshot."""
        problems = []
        vcpu_on = {rp for rp, rc in inventories if rc == 'VCPU'}
        old, new = {self.cn}, set(self.numa)
        if vcpu_on not in (old, new):
            problems.append(('mixed shape', sorted(vcpu_on)))
        used = {}
        for (consumer, rp, rc), amount in allocations.items():
            used[rp, rc] = used.get((rp, rc), 0) + amount
        for (rp, rc), amount in used.items():
            if (rp, rc) not in inventories:
                problems.append(('no inventory', rp, rc, amount))
                continue
            total, reserved, ratio = inventories[rp, rc]
            if amount > int((total - reserved) * ratio):
                problems.append(('overcommitted', rp, rc, amount))
        side = old if vcpu_on == old else new
        for consumer, (vcpu, _memory) in EXISTING.items():
            mine = {rp: amount for (c, rp, rc), amount in allocations.items()
                    if c == consumer and rc == 'VCPU'}
            if sum(mine.values()) != vcpu or not set(mine) <= side:
                problems.append(('consumer half-moved', consumer, mine))
        return problems

    def watch(self):
        try:
            while not self.done.is_set():
                problems = self.check(*self.snapshot())
                with self.lock:
                    self.snapshots += 1
                    self.problems.extend(problems)
        except Exception as exc:
            with self.lock:
                self.problems.append(('watcher failed', repr(exc)))

    def test_claims_see_one_shape_and_nothing_is_lost(self):
        successes = {'node': 0, 'child': 0}
        reshaped = []
        reshape_statuses = []
        claims_running = threading.Event()
        reshape_over = threading.Event()

        def claimer(index):
            with requests.Session() as session:
                claims_running.set()
                after = 0
                for attempt in range(MAX_ATTEMPTS):
                    # Claims go on until a few were made after the move.
                    if reshape_over.is_set():
                        after += 1
                        if after > ATTEMPTS_AFTER:
                            return
                    # Half the clients still see the old shape, half
                    # already the new one.
                    if (index + attempt) % 2:
                        target, where = self.cn, 'node'
                    else:
                        target, where = self.numa[index % 2], 'child'
                    for _retry in range(CLIENT_RETRIES):
                        resp = self.claim(session, str(uuid.uuid4()),
                                          {target: {'VCPU': 1}})
                        with self.lock:
                            self.statuses.append(resp.status_code)
                        if resp.status_code == 204:
                            with self.lock:
                                successes[where] += 1
                            break
                        if resp.status_code != 409 or resp.json()[
                                'errors'][0]['code'] != \
                                'placement.concurrent_update':
                            # No inventory or no room there: give up.
                            break

        def reshaper():
            claims_running.wait(30)
            try:
                reshape_until_done()
            finally:
                reshape_over.set()

        def reshape_until_done():
            with requests.Session() as session:
                for _attempt in range(CLIENT_RETRIES):
                    body, moved = self.reshape_body(session)
                    resp = self.reshape(session, body)
                    reshape_statuses.append(resp.status_code)
                    if resp.status_code == 204:
                        reshaped.append(moved)
                        return
                    if resp.status_code != 409 or resp.json()['errors'][0][
                            'code'] != 'placement.concurrent_update':
                        with self.lock:
                            self.problems.append(('reshape', resp.text))
                        return

        watcher = threading.Thread(target=self.watch)
        watcher.start()
        threads = [threading.Thread(target=claimer, args=(i,))
                   for i in range(THREADS)]
        threads.append(threading.Thread(target=reshaper))
        try:
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        finally:
            self.done.set()
            watcher.join()

        self.assertEqual([], self.problems)
        self.assertGreater(self.snapshots, 0)
        self.assertEqual(set(), set(self.statuses) - {204, 409})
        self.assertEqual(set(), set(reshape_statuses) - {204, 409})
        # The reshaper retries until it wins once the claims are over.
        self.assertEqual(1, len(reshaped), reshape_statuses)
        inventories, allocations = self.snapshot()
        self.assertEqual([], self.check(inventories, allocations))
        on = {}
        for (consumer, rp, rc), amount in allocations.items():
            on[rp, rc] = on.get((rp, rc), 0) + amount
        existing_vcpu = sum(v for v, _ in EXISTING.values())
        # The node kept its memory and lost all its VCPU ...
        self.assertEqual({(self.cn, 'MEMORY_MB'): 512},
                         {k: v for k, v in on.items() if k[0] == self.cn})
        # ... which the reshape moved whole: what was there before plus
        # every claim that landed on the node before the move.
        self.assertEqual(existing_vcpu + successes['node'], reshaped[0])
        # The children hold what was moved plus the claims made on them
        # after the move, within their capacity.
        children = sum(on.get((rp, 'VCPU'), 0) for rp in self.numa)
        self.assertEqual(reshaped[0] + successes['child'], children)
        for rp in self.numa:
            self.assertLessEqual(on.get((rp, 'VCPU'), 0), CHILD_VCPU)
        for consumer, (vcpu, memory) in EXISTING.items():
            self.assertEqual(vcpu, sum(
                amount for (c, rp, rc), amount in allocations.items()
                if c == consumer and rc == 'VCPU' and rp in self.numa))


class ReshapeFailuresTestCase(ReshaperTestBase):
    """A reshape that fails changes nothing, whatever made it fail."""

    def assertRefused(self, body, status, code=None, text=None):
        before = self.state()
        resp = self.reshape(self.session, body)
        self.assertEqual(status, resp.status_code, resp.text)
        error = resp.json()['errors'][0]
        if code is not None:
            self.assertEqual(code, error['code'])
        if text is not None:
            self.assertIn(text, error['detail'])
        self.assertEqual(before, self.state())

    def body(self):
        body, moved = self.reshape_body(self.session)
        self.assertEqual(6, moved)
        return body

    def test_bad_input_changes_nothing(self):
        missing = str(uuid.uuid4())
        some_consumer = sorted(EXISTING)[0]

        body = self.body()
        body['inventories'][missing] = {
            'resource_provider_generation': 0,
            'inventories': {'VCPU': {'total': 1}}}
        self.assertRefused(body, 400,
                           'placement.resource_provider.not_found', missing)

        body = self.body()
        body['allocations'][some_consumer]['allocations'][missing] = {
            'resources': {'VCPU': 1}}
        self.assertRefused(body, 400,
                           'placement.resource_provider.not_found', missing)

        body = self.body()
        body['inventories'][self.numa[1]]['inventories'] = {
            'CUSTOM_NOPE': {'total': 8}}
        self.assertRefused(body, 400, text='CUSTOM_NOPE')

        body = self.body()
        body['allocations'][some_consumer]['allocations'][self.numa[0]] = {
            'resources': {'CUSTOM_NOPE': 1}}
        self.assertRefused(body, 400, text='CUSTOM_NOPE')

        body = self.body()
        body['inventories'][self.numa[1]]['inventories']['VCPU'][
            'reserved'] = CHILD_VCPU + 1
        self.assertRefused(body, 400, text='reserved')

    def test_stale_generations_change_nothing(self):
        body = self.body()
        consumer = sorted(EXISTING)[1]
        body['allocations'][consumer]['consumer_generation'] += 1
        self.assertRefused(body, 409, 'placement.concurrent_update')

        body = self.body()
        body['inventories'][self.numa[0]][
            'resource_provider_generation'] += 1
        self.assertRefused(body, 409, 'placement.concurrent_update')

    def test_losing_a_race_with_a_claim_is_a_conflict(self):
        # The reshape was computed before a claim bumped the node's
        # generation: it must be recomputed, not applied.
        body = self.body()
        self.assertEqual(204, self.claim(
            self.session, str(uuid.uuid4()),
            {self.cn: {'VCPU': 1}}).status_code)
        self.assertRefused(body, 409, 'placement.concurrent_update')
        # Recomputed, it moves the new claim too.
        body, moved = self.reshape_body(self.session)
        self.assertEqual(7, moved)
        self.assertEqual(204, self.reshape(self.session, body).status_code)

    def test_allocations_that_do_not_fit_change_nothing(self):
        body = self.body()
        for rp in self.numa:
            body['inventories'][rp]['inventories']['VCPU']['total'] = 3
        self.assertRefused(body, 409, text='VCPU')

    def test_leaving_allocations_behind_changes_nothing(self):
        # VCPU leaves the node but one consumer's VCPU is not moved.
        body = self.body()
        consumer = [c for c, (v, m) in EXISTING.items() if not m][0]
        del body['allocations'][consumer]
        self.assertRefused(body, 409, 'placement.inventory.inuse', 'VCPU')

    def test_the_same_reshape_succeeds_after_the_failures(self):
        self.test_bad_input_changes_nothing()
        body = self.body()
        self.assertEqual(204, self.reshape(self.session, body).status_code)
        inventories, allocations = self.snapshot()
        self.assertEqual(
            {(self.cn, 'MEMORY_MB'), (self.numa[0], 'VCPU'),
             (self.numa[1], 'VCPU')}, set(inventories))
        self.assertEqual(6, sum(
            amount for (c, rp, rc), amount in allocations.items()
            if rc == 'VCPU' and rp in self.numa))


class BelowUsageTestCase(ReshaperTestBase):
    """Upstream's rule: an inventory may drop below its usage."""

    def setUp(self):
        super().setUp()
        self.logger = self.useFixture(fixtures.FakeLogger(
            name='alloc_framework.objects.placement.inventory',
            level=logging.WARNING))

    def test_inventory_put_below_usage(self):
        # The node's VCPU usage is 6.
        self.put_inventories(self.cn, {'VCPU': {'total': 5},
                                       'MEMORY_MB': {'total': 4096}})
        self.assertIn('Resource provider %s is now over capacity for VCPU: '
                      '6 used, new capacity 5' % self.cn, self.logger.output)
        resp = self.call(
            self.session, 'PUT',
            '/resource_providers/%s/inventories/MEMORY_MB' % self.cn,
            {'resource_provider_generation': self.generation(self.session,
                                                             self.cn),
             'total': 1024, 'reserved': 768})
        self.assertEqual(200, resp.status_code, resp.text)
        self.assertIn('over capacity for MEMORY_MB: 512 used, new capacity '
                      '256', self.logger.output)
        inventories, allocations = self.snapshot()
        self.assertEqual((5, 0, 1.0), inventories[self.cn, 'VCPU'])
        self.assertEqual(6, sum(a for (c, rp, rc), a in allocations.items()
                                if rc == 'VCPU'))

    def test_reshape_may_leave_a_class_below_usage(self):
        # Only a consumer the reshape leaves alone may stay above the new
        # capacity: the allocations a reshape writes must fit, as
        # upstream checks them. The only memory is a memory-only
        # consumer's, which the reshape does not name.
        memory_user = str(uuid.uuid4())
        self.assertEqual(204, self.claim(self.session, memory_user, {
            self.cn: {'MEMORY_MB': 1024}}).status_code)
        for consumer, (vcpu, memory) in EXISTING.items():
            if memory:
                self.assertEqual(204, self.call(
                    self.session, 'DELETE',
                    '/allocations/' + consumer).status_code)
        body, moved = self.reshape_body(self.session)
        del body['allocations'][memory_user]
        body['inventories'][self.cn]['inventories']['MEMORY_MB'] = {
            'total': 256}
        self.assertEqual(204, self.reshape(self.session, body).status_code)
        self.assertIn('Resource provider %s is now over capacity for '
                      'MEMORY_MB: 1024 used, new capacity 256' % self.cn,
                      self.logger.output)
        # The interim inventory of the reshape is not reported.
        self.assertNotIn('for VCPU', self.logger.output)
        inventories, _ = self.snapshot()
        self.assertEqual((256, 0, 1.0), inventories[self.cn, 'MEMORY_MB'])

    def test_a_failed_reshape_warns_about_nothing(self):
        body, moved = self.reshape_body(self.session)
        body['inventories'][self.cn]['inventories']['MEMORY_MB'] = {
            'total': 256}
        body['inventories'][self.numa[0]][
            'resource_provider_generation'] += 1
        self.assertEqual(409, self.reshape(self.session, body).status_code)
        self.assertEqual('', self.logger.output)
