"""``GET /metrics`` of both APIs, over real HTTP on loopback.

The numbers are checked against the APIs' own answers (usages,
inventories, node and allocation listings), the exposition is read with
Prometheus's parser (prometheus-client's), and the cost of a scrape is
counted in statements.
"""

import base64

from oslo_utils import uuidutils
from prometheus_client import parser
import requests
import sqlalchemy as sa

from alloc_framework.api.baremetal import app as bm_app
from alloc_framework.api.placement import deploy
from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects import baremetal as objects
from tests import base
from tests.functional.objects.baremetal import factories as f

PL_HEADERS = {'X-Auth-Token': 'admin',
              'OpenStack-API-Version': 'placement latest'}
BM_HEADERS = {'X-OpenStack-Ironic-API-Version': 'latest'}
PROJECT = 'c0ffee00-0000-4000-8000-0000000000aa'
USER = 'c0ffee00-0000-4000-8000-0000000000bb'


def basic(user, password):
    token = base64.b64encode(('%s:%s' % (user, password)).encode())
    return {'Authorization': 'Basic ' + token.decode()}


def parse(text):
    """``{metric name: {frozenset(labels): value}}`` of an exposition."""
    samples = {}
    for family in parser.text_string_to_metric_families(text):
        # A gauge family without samples (nothing to count) is named.
        samples.setdefault(family.name, {})
        for sample in family.samples:
            samples.setdefault(sample.name, {})[
                frozenset(sample.labels.items())] = sample.value
    return samples


def by(samples, name, label):
    """``{value of label: sample value}`` of a metric with one label."""
    return {dict(labels)[label]: value
            for labels, value in samples.get(name, {}).items()}


class _MetricsTestCase(base.DBTestCase):

    def setUp(self):
        super().setUp()
        self.conf([], project='alloc_framework', default_config_files=[],
                  default_config_dirs=[])
        self.config(auth_strategy='noauth', rpc_transport='local')

    def serve(self):
        """Both APIs on loopback: ``self.bm`` and ``self.pl``."""
        self.bm = self.useFixture(base.Server(
            bm_app.setup_app(self.conf), workers=4)).url
        self.pl = self.useFixture(base.Server(
            deploy.loadapp(self.conf), workers=4)).url

    def scrape(self, url, headers=None, status=200):
        resp = requests.get(url + '/metrics', headers=headers, timeout=30)
        self.assertEqual(status, resp.status_code, resp.text)
        if status == 200:
            self.assertTrue(resp.headers['Content-Type'].startswith(
                'text/plain; version=0.0.4'))
            return parse(resp.text)
        return resp


class PlacementMetricsTestCase(_MetricsTestCase):

    def setUp(self):
        super().setUp()
        self.serve()

    def call(self, method, path, body=None, status=200):
        resp = requests.request(method, self.pl + path, json=body,
                                headers=PL_HEADERS, timeout=30)
        self.assertEqual(status, resp.status_code, resp.text)
        return resp.json() if resp.content else None

    def provider(self, name, inventories):
        uuid = uuidutils.generate_uuid()
        self.call('POST', '/resource_providers',
                  {'name': name, 'uuid': uuid})
        self.call('PUT', '/resource_providers/%s/inventories' % uuid,
                  {'resource_provider_generation': 0,
                   'inventories': inventories})
        return uuid

    def allocate(self, rp, resources):
        self.call('PUT', '/allocations/%s' % uuidutils.generate_uuid(),
                  {'allocations': {rp: {'resources': resources}},
                   'project_id': PROJECT, 'user_id': USER,
                   'consumer_generation': None,
                   'consumer_type': 'INSTANCE'}, status=204)

    def test_gauges_agree_with_the_api(self):
        self.call('PUT', '/resource_classes/CUSTOM_GOLD', status=201)
        cn1 = self.provider('cn1', {
            'VCPU': {'total': 8, 'reserved': 2, 'allocation_ratio': 4.0},
            'MEMORY_MB': {'total': 2048, 'reserved': 512}})
        cn2 = self.provider('cn2', {
            'VCPU': {'total': 5, 'allocation_ratio': 1.5},
            'CUSTOM_GOLD': {'total': 3}})
        self.allocate(cn1, {'VCPU': 10, 'MEMORY_MB': 1024})
        self.allocate(cn2, {'VCPU': 3, 'CUSTOM_GOLD': 1})
        self.allocate(cn1, {'VCPU': 4})

        samples = self.scrape(self.pl, PL_HEADERS)
        self.assertEqual({(): 1.0}, {tuple(k): v for k, v in
                                     samples['alloc_database_up'].items()})
        # Used: the sum of every provider's usages, and (all consumers
        # being in one project) GET /usages of that project.
        used = {}
        total, reserved, capacity = {}, {}, {}
        for rp in (cn1, cn2):
            usages = self.call('GET', '/resource_providers/%s/usages'
                               % rp)['usages']
            for rc, amount in usages.items():
                used[rc] = used.get(rc, 0) + amount
            inventories = self.call('GET', '/resource_providers/%s/'
                                    'inventories' % rp)['inventories']
            for rc, inv in inventories.items():
                total[rc] = total.get(rc, 0) + inv['total']
                reserved[rc] = reserved.get(rc, 0) + inv['reserved']
                capacity[rc] = capacity.get(rc, 0) + int(
                    (inv['total'] - inv['reserved'])
                    * inv['allocation_ratio'])
        self.assertEqual(used, by(samples, 'alloc_placement_used',
                                  'resource_class'))
        resp = requests.get(
            self.pl + '/usages?project_id=%s' % PROJECT, timeout=30,
            headers=dict(PL_HEADERS,
                         **{'OpenStack-API-Version': 'placement 1.9'}))
        self.assertEqual(used, resp.json()['usages'])
        self.assertEqual(total, by(samples, 'alloc_placement_total',
                                   'resource_class'))
        self.assertEqual(reserved, by(samples, 'alloc_placement_reserved',
                                      'resource_class'))
        self.assertEqual(capacity, by(samples, 'alloc_placement_capacity',
                                      'resource_class'))
        # (8 - 2) * 4.0 + int(5 * 1.5)
        self.assertEqual(31, capacity['VCPU'])
        self.assertEqual(
            0, samples['alloc_placement_providers_over_capacity'][
                frozenset()])
        # The bare metal gauges are the other port's.
        self.assertNotIn('alloc_nodes', samples)

        # Shrinking an inventory below its usage puts cn1 over capacity.
        self.call('PUT', '/resource_providers/%s/inventories/VCPU' % cn1,
                  {'resource_provider_generation': 3, 'total': 8,
                   'reserved': 2, 'allocation_ratio': 2.0})
        samples = self.scrape(self.pl, PL_HEADERS)
        self.assertEqual(
            1, samples['alloc_placement_providers_over_capacity'][
                frozenset()])
        self.assertEqual(19, by(samples, 'alloc_placement_capacity',
                                'resource_class')['VCPU'])

    def test_latency_by_route_template(self):
        rp = self.provider('cn1', {'VCPU': {'total': 4}})
        for _ in range(3):
            self.call('GET', '/resource_providers/%s' % rp)
        self.call('GET', '/resource_providers/%s/nope' % rp, status=404)
        samples = self.scrape(self.pl, PL_HEADERS)
        counts = {(dict(k)['method'], dict(k)['route']): v for k, v in
                  samples['alloc_http_request_duration_seconds_count']
                  .items()}
        self.assertEqual(3, counts[('GET', '/resource_providers/{uuid}')])
        self.assertEqual(1, counts[('PUT',
                                    '/resource_providers/{uuid}/'
                                    'inventories')])
        self.assertEqual(1, counts[('GET', 'unmatched')])
        for labels in samples['alloc_http_request_duration_seconds_count']:
            self.assertEqual('placement', dict(labels)['api'])
            self.assertNotIn(rp, dict(labels)['route'])
        buckets = {dict(k)['le']: v for k, v in
                   samples['alloc_http_request_duration_seconds_bucket']
                   .items()
                   if dict(k)['route'] == '/resource_providers/{uuid}'}
        self.assertEqual(3, buckets['+Inf'])

    def test_statements_do_not_grow_with_providers(self):
        statements = []

        def count(conn, cursor, statement, *args):
            statements.append(statement)

        def scrape_cost():
            del statements[:]
            sa.event.listen(self.db.engine, 'before_cursor_execute', count)
            try:
                self.scrape(self.pl, PL_HEADERS)
            finally:
                sa.event.remove(self.db.engine, 'before_cursor_execute',
                                count)
            return len(statements)

        for i in range(2):
            self.allocate(self.provider('cn%d' % i, {'VCPU': {'total': 4}}),
                          {'VCPU': 1})
        few = scrape_cost()
        for i in range(2, 22):
            self.allocate(self.provider('cn%d' % i, {'VCPU': {'total': 4}}),
                          {'VCPU': 1})
        many = scrape_cost()
        self.assertEqual(few, many)
        self.assertLessEqual(many, 6)

    def test_database_down_is_said_not_failed(self):
        self.call('GET', '/resource_providers')
        # The database fails every statement, as one that went away.
        error = self.db.engine.dialect.loaded_dbapi.OperationalError

        def gone(*args):
            raise error('the database went away')

        sa.event.listen(self.db.engine, 'before_cursor_execute', gone)
        self.addCleanup(sa.event.remove, self.db.engine,
                        'before_cursor_execute', gone)
        samples = self.scrape(self.pl, PL_HEADERS)
        self.assertEqual(0, samples['alloc_database_up'][frozenset()])
        self.assertNotIn('alloc_placement_capacity', samples)
        # The latency histograms are still there.
        self.assertIn('alloc_http_request_duration_seconds_count', samples)


class BaremetalMetricsTestCase(_MetricsTestCase):

    def setUp(self):
        super().setUp()
        self.serve()

    def api_list(self, path, key):
        resp = requests.get(self.bm + path, headers=BM_HEADERS, timeout=30)
        self.assertEqual(200, resp.status_code, resp.text)
        return resp.json()[key]

    def test_gauges_agree_with_the_api(self):
        ctx = f.admin_context()
        node = f.make_node(ctx)
        f.make_node(ctx)
        f.make_node(ctx, resource_class='gpu')
        f.make_node(ctx, provision_state='active')
        f.make_node(ctx, provision_state='enroll', resource_class=None)
        f.make_allocation(ctx)
        f.make_allocation(ctx, state='error')
        f.make_allocation(ctx, state='error')
        for _ in range(2):
            objects.DeferredAction.new(ctx, node.id, 'task.driver.x').create()
        tbl = models.DeferredAction.__table__
        with self.db.engine.begin() as conn:
            conn.execute(tbl.update().where(tbl.c.id == sa.select(
                sa.func.min(tbl.c.id)).scalar_subquery()).values(
                state='FAILED'))

        samples = self.scrape(self.bm)
        nodes = {}
        for n in self.api_list('/v1/nodes?fields=provision_state,'
                               'resource_class', 'nodes'):
            key = (n['provision_state'] or '', n['resource_class'] or '')
            nodes[key] = nodes.get(key, 0) + 1
        self.assertEqual(
            nodes, {(dict(k)['provision_state'], dict(k)['resource_class']):
                    v for k, v in samples['alloc_nodes'].items()})
        self.assertEqual(4, len(nodes))
        allocations = {}
        for a in self.api_list('/v1/allocations', 'allocations'):
            allocations[a['state']] = allocations.get(a['state'], 0) + 1
        self.assertEqual({'allocating': 1, 'error': 2}, allocations)
        self.assertEqual(allocations,
                         by(samples, 'alloc_allocations', 'state'))
        actions = {}
        for a in self.api_list('/v1/deferred_actions', 'deferred_actions'):
            actions[a['state']] = actions.get(a['state'], 0) + 1
        self.assertEqual(actions,
                         by(samples, 'alloc_deferred_actions', 'state'))
        self.assertEqual({'CREATED': 1, 'FAILED': 1}, actions)
        self.assertNotIn('alloc_placement_capacity', samples)

        # The requests above, by route template.
        samples = self.scrape(self.bm)
        counts = {(dict(k)['api'], dict(k)['route']): v for k, v in
                  samples['alloc_http_request_duration_seconds_count']
                  .items()}
        self.assertEqual(1, counts[('baremetal', '/v1/nodes')])
        self.assertEqual(1, counts[('baremetal', '/metrics')])

    def test_node_routes_are_templates(self):
        node = f.make_node(f.admin_context())
        for ident in (node.uuid, uuidutils.generate_uuid()):
            requests.get(self.bm + '/v1/nodes/' + ident, headers=BM_HEADERS,
                         timeout=30)
        samples = self.scrape(self.bm)
        counts = {dict(k)['route']: v for k, v in
                  samples['alloc_http_request_duration_seconds_count']
                  .items()}
        self.assertEqual(2, counts['/v1/nodes/{node_ident}'])
        self.assertFalse([r for r in counts if node.uuid in r])


class MetricsAuthTestCase(_MetricsTestCase):
    dialect_neutral = True

    def http_basic(self):
        self.use_http_basic()

    def test_http_basic_needs_credentials(self):
        self.http_basic()
        self.serve()
        for url in (self.bm, self.pl):
            resp = self.scrape(url, status=401)
            self.assertIn('Basic realm', resp.headers['WWW-Authenticate'])
            self.scrape(url, basic('alice', 'nope'), status=401)
            samples = self.scrape(url, basic('alice', 'secret'))
            self.assertIn('alloc_database_up', samples)

    def test_open_with_the_option(self):
        self.http_basic()
        self.config(prometheus_allow_unauthenticated=True, group='metrics')
        self.serve()
        for url, gauge in ((self.bm, 'alloc_nodes'),
                           (self.pl, 'alloc_placement_providers_over_'
                                     'capacity')):
            self.assertIn(gauge, self.scrape(url))
            # Only /metrics: the rest still asks for credentials.
            self.assertEqual(401, requests.get(
                url + '/v1/nodes' if url == self.bm else
                url + '/resource_providers', timeout=30).status_code)

    def test_admin_only(self):
        self.serve()
        # Placement's noauth: a token of a user who is not an admin.
        resp = self.scrape(self.pl, {'X-Auth-Token': 'someone'},
                           status=403)
        self.assertIn('placement:metrics', resp.text)
        self.scrape(self.pl, status=401)
        # Keystone's identity headers of a project member.
        self.config(auth_strategy='keystone')
        app = bm_app.setup_app(self.conf,
                               auth_middleware=lambda app, conf: app)
        url = self.useFixture(base.Server(app, workers=2)).url
        resp = self.scrape(url, {'X-Roles': 'member,reader',
                                 'X-Project-Id': PROJECT}, status=403)
        self.assertIn('baremetal:metrics:get', resp.text)
        self.scrape(url, {'X-Roles': 'admin,member,reader',
                          'OpenStack-System-Scope': 'all'})

    def test_disabled(self):
        self.config(prometheus_enabled=False, group='metrics')
        self.serve()
        self.scrape(self.bm, status=404)
        self.scrape(self.pl, PL_HEADERS, status=404)
