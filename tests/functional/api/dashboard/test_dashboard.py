"""The dashboard through the Placement WSGI application.

Status codes, authentication and policy, the security headers, escaping
of everything shown, paging and hostile query strings, on providers,
allocations and bare metal rows made through the API and the objects.
"""

import base64
import datetime
import re
import urllib.parse

from oslo_utils import timeutils
from oslo_utils import uuidutils
import requests

from alloc_framework.api.dashboard import app as dashboard_app
from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import deferred_action
from tests import base as tests_base
from tests.functional.api.placement import base
from tests.functional.drivers.allocation import placement_fixtures
from tests.functional.objects.baremetal import factories

XSS = '<script>alert(1)</script>'


def basic(user, password):
    token = base64.b64encode(('%s:%s' % (user, password)).encode())
    return {'Authorization': 'Basic ' + token.decode()}


class DashboardTestCase(base.PlacementAppTestCase):

    def page(self, path, token=None, status=200, **headers):
        resp = self.request('GET', path, token=token, version=None,
                            headers=headers)
        self.assertEqual(status, resp.status_int, resp.text[:2000])
        return resp

    def allocate(self, consumer, allocations, project='proj-a',
                 user='user-a'):
        resp = self.request('PUT', '/allocations/%s' % consumer, json={
            'allocations': {rp: {'resources': res}
                            for rp, res in allocations.items()},
            'project_id': project, 'user_id': user,
            'consumer_generation': None, 'consumer_type': 'INSTANCE'})
        self.assertEqual(204, resp.status_int, resp.text)

    def assertSecure(self, resp):
        self.assertEqual(dashboard_app.CSP,
                         resp.headers['Content-Security-Policy'])
        self.assertIn("default-src 'none'",
                      resp.headers['Content-Security-Policy'])
        self.assertNotIn('unsafe-inline',
                         resp.headers['Content-Security-Policy'])
        self.assertEqual('nosniff', resp.headers['X-Content-Type-Options'])
        self.assertEqual('DENY', resp.headers['X-Frame-Options'])
        self.assertNotIn('<script', resp.text)


class TestAccess(DashboardTestCase):
    dialect_neutral = True

    def test_noauth_serves_without_credentials(self):
        resp = self.page('/dashboard/')
        self.assertEqual('text/html; charset=utf-8',
                         resp.headers['Content-Type'])
        self.assertSecure(resp)
        self.assertIn('<h1>Overview</h1>', resp.text)
        self.assertIn('<title>Overview · alloc_framework dashboard</title>',
                      resp.text)
        # The API itself still wants its token.
        self.assertEqual(401, self.request(
            'GET', '/resource_providers', token=None).status_int)

    def test_non_admin_is_refused(self):
        resp = self.page('/dashboard/', token='someone', status=403)
        self.assertSecure(resp)
        self.assertIn('<title>Error 403 ·', resp.text)
        self.assertIn('administrators', resp.text)
        self.page('/dashboard/providers', token='admin')

    def test_stylesheet_and_redirect(self):
        resp = self.page('/dashboard/static/dashboard.css')
        self.assertEqual('text/css; charset=utf-8',
                         resp.headers['Content-Type'])
        self.assertIn('.bar-used', resp.text)
        resp = self.page('/dashboard', status=301)
        self.assertTrue(resp.headers['Location'].endswith('/dashboard/'))

    def test_only_get(self):
        resp = self.request('POST', '/dashboard/providers', token='admin',
                            json={})
        self.assertEqual(405, resp.status_int)
        self.assertEqual('GET, HEAD', resp.headers['Allow'])
        resp = self.request('HEAD', '/dashboard/', token=None)
        self.assertEqual(200, resp.status_int)
        self.assertEqual(b'', resp.body)

    def test_unknown_page(self):
        resp = self.page('/dashboard/nothing', status=404)
        self.assertSecure(resp)
        self.page('/dashboard/trouble/nothing', status=404)

    def test_disabled(self):
        self.config(enabled=False, group='dashboard')
        resp = self.page('/dashboard/', token='admin', status=404)
        self.assertEqual('application/json', resp.content_type)


class TestHTTPBasic(DashboardTestCase):
    dialect_neutral = True

    def setUp(self):
        super().setUp()
        self.use_http_basic()

    def test_browser_prompt(self):
        resp = self.page('/dashboard/', status=401)
        self.assertEqual('Basic realm="Placement API"',
                         resp.headers['WWW-Authenticate'])
        self.page('/dashboard/', status=401, **basic('alice', 'wrong'))
        resp = self.page('/dashboard/', **basic('alice', 'secret'))
        self.assertSecure(resp)
        self.page('/dashboard/static/dashboard.css', status=401)


class TestKeystone(DashboardTestCase):
    """``auth_strategy = keystone``: a browser alone has no token."""
    dialect_neutral = True

    def test_token_and_admin_role_required(self):
        keystone = self.useFixture(placement_fixtures.CatalogKeystone(
            'http://placement.invalid',
            roles={'admin-token': ['admin', 'member', 'reader'],
                   'member-token': ['member', 'reader']}))
        placement_fixtures.configure_authtoken(self, keystone.url)
        url = self.useFixture(tests_base.Server(
            self.load(auth_strategy='keystone'), 'placement')).url
        url += '/dashboard/'
        resp = requests.get(url, timeout=30)
        self.assertEqual(401, resp.status_code, resp.text)
        self.assertIn('WWW-Authenticate', resp.headers)
        for token, status in (('forged', 401), ('member-token', 403),
                              ('admin-token', 200)):
            resp = requests.get(url, headers={'X-Auth-Token': token},
                                timeout=30)
            self.assertEqual(status, resp.status_code, token)
        self.assertIn('<h1>Overview</h1>', resp.text)
        self.assertSecure(resp)


class TestPlacementPages(DashboardTestCase):

    def setUp(self):
        super().setUp()
        self.agg = uuidutils.generate_uuid()
        self.host = self.create_provider(
            'host1', {'VCPU': {'total': 8, 'reserved': 2,
                               'allocation_ratio': 2.0},
                      'MEMORY_MB': {'total': 4096}},
            traits=['HW_CPU_X86_AVX2'], aggs=[self.agg])
        self.numa = self.create_provider(
            'numa0', {'VCPU': {'total': 4}}, parent=self.host)
        self.shared = self.create_provider(
            'disk-pool', {'DISK_GB': {'total': 1000}},
            traits=['MISC_SHARES_VIA_AGGREGATE'], aggs=[self.agg])
        self.other = self.create_provider('other', {'VCPU': {'total': 2}})
        self.consumer = uuidutils.generate_uuid()
        self.allocate(self.consumer, {self.host: {'VCPU': 3,
                                                  'MEMORY_MB': 1024},
                                      self.shared: {'DISK_GB': 100}})

    def test_overview_agrees_with_the_api(self):
        resp = self.page('/dashboard/')
        # Capacity: (8 - 2) * 2 + 4 + 2 = 18 VCPU.
        row = re.search(r'resource_class=VCPU">VCPU</a></td>\s*'
                        r'<td class="num">(\d+)</td><td class="num">(\d+)'
                        r'</td>\s*<td class="num used">(\d+)</td>'
                        r'<td class="num">(-?\d+)</td>'
                        r'<td class="num">(\d+)</td>', resp.text)
        self.assertIsNotNone(row, resp.text)
        self.assertEqual(('14', '2', '3', '15', '18'), row.groups())
        usages = self.request('GET', '/usages?project_id=proj-a',
                              version='1.9').json
        self.assertEqual(usages['usages']['VCPU'], int(row.group(3)))
        self.assertIn('id="trouble-over-capacity">0<', resp.text)

    def test_search(self):
        resp = self.page('/dashboard/providers')
        for name in ('host1', 'numa0', 'disk-pool', 'other'):
            self.assertIn('>%s</a>' % name, resp.text)
        for query, found, missing in (
                ('name=numa', ['numa0'], ['host1', 'other']),
                ('uuid=%s' % self.other, ['other'], ['host1']),
                ('trait=HW_CPU_X86_AVX2', ['host1'], ['numa0']),
                ('aggregate=%s' % self.agg, ['host1', 'disk-pool'],
                 ['numa0', 'other']),
                ('resource_class=DISK_GB', ['disk-pool'], ['host1'])):
            resp = self.page('/dashboard/providers?' + query)
            for name in found:
                self.assertIn('>%s</a>' % name, resp.text, query)
            for name in missing:
                self.assertNotIn('>%s</a>' % name, resp.text, query)

    def test_name_search_is_literal(self):
        self.create_provider('a_b%c')
        resp = self.page('/dashboard/providers?name=_b%25')
        self.assertIn('>a_b%c</a>', resp.text)
        self.assertNotIn('>host1</a>', resp.text)

    def test_paging(self):
        self.config(page_size=3, group='dashboard')
        for number in range(4):
            self.create_provider('extra%d' % number)
        seen = []
        url = '/dashboard/providers'
        while url:
            resp = self.page(url)
            names = re.findall(r'class="provider" href="[^"]+">([^<]+)<',
                               resp.text)
            self.assertLessEqual(len(names), 3)
            seen += names
            found = re.search(r'rel="next" href="([^"]+)"', resp.text)
            url = found and found.group(1).replace('&amp;', '&')
        self.assertEqual(['host1', 'numa0', 'disk-pool', 'other',
                          'extra0', 'extra1', 'extra2', 'extra3'], seen)

    def test_tree(self):
        resp = self.page('/dashboard/providers/%s' % self.numa)
        text = resp.text
        # The whole tree from its root, the sharing provider it reaches.
        self.assertIn('id="rp-%s"' % self.host, text)
        self.assertIn('id="rp-%s"' % self.numa, text)
        self.assertIn('provider-box current" id="rp-%s"' % self.numa, text)
        sharing = text.index('Sharing providers reached')
        self.assertGreater(text.index('id="rp-%s"' % self.shared), sharing)
        self.assertNotIn('id="rp-%s"' % self.other, text)
        # The picture: one link per provider, the sharing one on the
        # right and dashed, the page's own provider marked, and a title
        # naming each with its amounts.
        svg = text[text.index('<svg class="tree-svg"'):]
        svg = svg[:svg.index('</svg>')]
        links = re.findall(r'<a class="node ([a-z ]+)" id="svg-([0-9a-f-]+)"'
                           r' href="/dashboard/providers/([0-9a-f-]+)"',
                           svg)
        self.assertEqual([('root', self.host, self.host),
                          ('child current', self.numa, self.numa),
                          ('sharing', self.shared, self.shared)], links)
        self.assertIn('<title>host1 (%s): MEMORY_MB 1024 of 4096, VCPU 3 '
                      'of 12</title>' % self.host, svg)
        self.assertIn('>DISK_GB 100 of 1000</text>', svg)
        self.assertEqual(1, svg.count('<polyline class="edge"'))
        self.assertEqual(1, svg.count('<polyline class="shares"'))
        self.assertIn('HW_CPU_X86_AVX2', text)
        self.assertIn(self.agg, text)
        # VCPU of host1: used 3 of a capacity of 12.
        self.assertRegex(text, r'<td>VCPU</td><td class="num">8</td>'
                               r'<td class="num">2</td><td class="num">2.0'
                               r'</td><td class="num used">3</td>'
                               r'<td class="num capacity">12</td>')
        self.assertIn('aria-label="3 of 12 used"', text)
        # Its consumer, with project, user and amounts.
        self.assertIn(self.consumer, text)
        self.assertIn('<td>proj-a</td><td>user-a</td>', text)
        self.assertIn('MEMORY_MB 1024', text)
        # With what it uses of the sharing provider the tree reaches.
        self.assertIn('DISK_GB 100 on <a href="#rp-%s">' % self.shared,
                      text)
        # Not what it uses elsewhere, nor other consumers of the pool.
        stranger, wide = (uuidutils.generate_uuid() for _ in range(2))
        self.allocate(stranger, {self.shared: {'DISK_GB': 7}})
        self.allocate(wide, {self.numa: {'VCPU': 1},
                             self.shared: {'DISK_GB': 5},
                             self.other: {'VCPU': 1}})
        text = self.page('/dashboard/providers/%s' % self.numa).text
        self.assertIn('DISK_GB 5 on <a href="#rp-%s">' % self.shared, text)
        self.assertNotIn(stranger, text)
        self.assertNotIn('#rp-%s' % self.other, text)
        self.page('/dashboard/providers/%s' % uuidutils.generate_uuid(),
                  status=404)

    def test_consumers_paged(self):
        self.config(page_size=1, group='dashboard')
        second = uuidutils.generate_uuid()
        self.allocate(second, {self.numa: {'VCPU': 1}})
        first, last = sorted([self.consumer, second])
        resp = self.page('/dashboard/providers/%s' % self.host)
        self.assertIn(first, resp.text)
        self.assertNotIn(last, resp.text)
        url = re.search(r'rel="next" href="([^"]+)"', resp.text).group(1)
        resp = self.page(url.replace('&amp;', '&'))
        self.assertIn(last, resp.text)
        self.assertNotIn('rel="next"', resp.text)

    def test_fits(self):
        resp = self.page('/dashboard/fits')
        self.assertIn('name="resources"', resp.text)
        self.assertNotIn('id="result"', resp.text)
        resp = self.page('/dashboard/fits?resources=VCPU:2,DISK_GB:10'
                         '&required=HW_CPU_X86_AVX2&member_of=' + self.agg)
        self.assertSecure(resp)
        self.assertIn('1 candidate<', resp.text)
        self.assertIn('>host1</a>', resp.text)
        self.assertIn('>disk-pool</a>', resp.text)
        self.assertIn('DISK_GB 10 (used 100 of 1000)', resp.text)
        self.assertIn(
            'alloc allocation candidate list --resource VCPU=2 '
            '--resource DISK_GB=10 --required HW_CPU_X86_AVX2 '
            '--member-of %s --limit 20' % self.agg, resp.text)
        api = re.search(r'GET (/allocation_candidates\?[^<]+)<',
                        resp.text).group(1).replace('&amp;', '&')
        answer = self.request('GET', api).json
        self.assertEqual(1, len(answer['allocation_requests']))

    def test_nothing_fits_explained(self):
        resp = self.page('/dashboard/fits?resources=VCPU:4,MEMORY_MB:64'
                         '&forbidden=HW_CPU_X86_AVX2&resources1=VCPU:1'
                         '&group_policy=isolate')
        self.assertIn('Nothing fits', resp.text)
        self.assertIn('class="explanation"', resp.text)
        self.assertIn('id="summary"', resp.text)
        self.assertIn('alloc allocation candidate explain', resp.text)
        self.assertIn('--forbidden HW_CPU_X86_AVX2 --group 1', resp.text)
        self.assertIn('required=%21HW_CPU_X86_AVX2', resp.text)

    def test_over_capacity(self):
        # Shrinking an inventory under its usage is allowed.
        path = '/resource_providers/%s/inventories' % self.shared
        generation = self.request('GET', path).json[
            'resource_provider_generation']
        resp = self.request(
            'PUT', path,
            json={'resource_provider_generation': generation,
                  'inventories': {'DISK_GB': {'total': 50}}})
        self.assertEqual(200, resp.status_int, resp.text)
        resp = self.page('/dashboard/')
        self.assertIn('id="trouble-over-capacity">1<', resp.text)
        resp = self.page('/dashboard/trouble/over-capacity')
        self.assertIn('>disk-pool</a></td><td>DISK_GB</td>'
                      '<td class="num">100</td><td class="num">50</td>',
                      resp.text)


class TestHostileInput(DashboardTestCase):
    dialect_neutral = True

    def test_markup_is_escaped(self):
        self.create_provider(XSS)
        resp = self.page('/dashboard/providers')
        self.assertNotIn(XSS, resp.text)
        self.assertIn('&lt;script&gt;alert(1)&lt;/script&gt;', resp.text)
        hostile = '"><script>x</script>\' &'
        parent = self.create_provider(hostile)
        self.create_provider(XSS + 'child', parent=parent)
        resp = self.page('/dashboard/providers/%s' % parent)
        self.assertSecure(resp)
        svg = resp.text[resp.text.index('<svg'):resp.text.index('</svg>')]
        self.assertIn('>&#34;&gt;&lt;script&gt;x&lt;/script&gt;&#39; '
                      '&amp;</text>', svg)
        self.assertIn('<title>&#34;&gt;&lt;script&gt;', svg)
        self.assertIn('aria-label="&#34;&gt;&lt;script&gt;', svg)
        self.assertIn('>&lt;script&gt;alert(1)&lt;/script', svg)
        self.assertNotIn('<script', resp.text)
        resp = self.page('/dashboard/providers?name=' +
                         urllib.parse.quote('"><script>x</script>'))
        self.assertSecure(resp)
        self.assertIn('value="&#34;&gt;&lt;script&gt;', resp.text)

    def assertBad(self, path, field):
        resp = self.page(path, status=400)
        self.assertIn('Content-Security-Policy', resp.headers, path)
        self.assertSecure(resp)
        self.assertIn('<code class="field">%s</code>' % field, resp.text)
        return resp

    def test_bad_query_strings(self):
        for path, field in (
                ('/dashboard/?x=1', 'x'),
                ('/dashboard/providers?%3Cb%3E=1', '&lt;b&gt;'),
                ('/dashboard/providers?uuid=nope', 'uuid'),
                ('/dashboard/providers?aggregate=%3Cscript%3E',
                 'aggregate'),
                ('/dashboard/providers?trait=lower', 'trait'),
                ('/dashboard/providers?trait=CUSTOM_NONE', 'trait'),
                ('/dashboard/providers?resource_class=CUSTOM_NONE',
                 'resource_class'),
                ('/dashboard/providers?after=-1', 'after'),
                ('/dashboard/providers?after=99999999999999999999999',
                 'after'),
                ('/dashboard/providers?name=a&name=b', 'name'),
                ('/dashboard/providers?name=' + 'x' * 2000, 'name'),
                ('/dashboard/providers?name=a%01b', 'name'),
                ('/dashboard/providers/%s?after=1' % uuidutils.
                 generate_uuid(), 'after'),
                ('/dashboard/fits?resources=VCPU', 'resources'),
                ('/dashboard/fits?resources=VCPU:1&limit=0', 'limit'),
                ('/dashboard/fits?resources=VCPU:1&group_policy=all',
                 'group_policy'),
                ('/dashboard/fits?resources=VCPU:1&in_tree=x', 'in_tree'),
                ('/dashboard/fits?resources1=VCPU:1&member_of1=1,2',
                 'member_of1'),
                ('/dashboard/fits?resources=CUSTOM_NONE:1', 'request'),
                ('/dashboard/baremetal?allocation_state=%3Cx%3E',
                 'allocation_state'),
                ('/dashboard/trouble/stuck?after=x', 'after'),
                ('/dashboard/trouble/drift?after=1', 'after')):
            self.assertBad(path, field)
        self.page('/dashboard/providers/%3Cscript%3E', status=400)
        # What the API's request limits refuse for every path (NUL, URLs
        # that are not UTF-8) is refused before the dashboard, as JSON.
        for query in ('name=a%00b', 'name=%ff'):
            resp = self.page('/dashboard/providers?' + query, status=400)
            self.assertEqual('application/json', resp.content_type)

    def test_api_errors_shown_escaped(self):
        resp = self.assertBad('/dashboard/fits?resources=CUSTOM_X:1&'
                              'resources1=VCPU:1&resources2=VCPU:1',
                              'request')
        self.assertIn('group_policy', resp.text)


class TestBareMetal(DashboardTestCase):

    def test_not_configured(self):
        resp = self.page('/dashboard/baremetal')
        self.assertIn('id="not-configured"', resp.text)
        self.assertIn('<code>database</code>', resp.text)
        resp = self.page('/dashboard/')
        self.assertIn('holds no node and no conductor', resp.text)

    def test_nodes_allocations_actions_conductors(self):
        ctx = factories.admin_context()
        objects.Conductor.register(ctx, 'cond-1')
        node = factories.make_node(ctx, name='n1')
        factories.make_node(ctx, name='n2', maintenance=True,
                            maintenance_reason=XSS)
        factories.make_node(ctx, provision_state='active',
                            resource_class='gpu')
        factories.make_allocation(ctx, name='a1', state='allocating')
        failed = factories.make_allocation(ctx, name='a2')
        failed.fail('no node: ' + XSS)
        action = deferred_action.DeferredAction.new(
            ctx, node.id, 'task.driver.firmware.update')
        deferred_action.create_actions(ctx, [action])
        resp = self.page('/dashboard/baremetal')
        self.assertSecure(resp)
        text = resp.text
        self.assertIn('id="allocations-allocating">1<', text)
        self.assertIn('id="allocations-error">1<', text)
        self.assertIn('id="actions-CREATED">1<', text)
        self.assertIn('<code>task.driver.firmware.update</code>', text)
        self.assertIn(node.uuid, text)
        self.assertIn('<td>cond-1</td>', text)
        self.assertIn('>alive<', text)
        self.assertIn('no node: &lt;script&gt;', text)
        # available/baremetal: 2 nodes; active/gpu: 1.
        self.assertRegex(text, r'<tr><td>available</td><td class="num">2'
                               r'</td><td class="num">0</td></tr>')
        resp = self.page('/dashboard/baremetal?allocation_state=error')
        self.assertIn('a2', resp.text)
        self.assertNotIn('>a1<', resp.text)
        resp = self.page('/dashboard/')
        self.assertIn('id="trouble-error">1<', resp.text)
        self.assertIn('id="trouble-maintenance">1<', resp.text)
        resp = self.page('/dashboard/trouble/maintenance')
        self.assertIn('&lt;script&gt;', resp.text)
        resp = self.page('/dashboard/trouble/error')
        self.assertIn(failed.uuid, resp.text)

    def test_stuck_and_drift(self):
        # Well above a second: MariaDB keeps created_at to the second,
        # so a fresh allocation may already look a second old.
        self.config(stuck_after=60, group='dashboard')
        ctx = factories.admin_context()
        node = factories.make_node(ctx, name='n1')
        allocation = factories.make_allocation(ctx, state='allocating')
        resp = self.page('/dashboard/trouble/stuck')
        self.assertIn('Nothing here', resp.text)
        timeutils.set_time_override(
            timeutils.utcnow() + datetime.timedelta(hours=1))
        self.addCleanup(timeutils.clear_time_override)
        resp = self.page('/dashboard/trouble/stuck')
        self.assertIn(allocation.uuid, resp.text)
        # The node has no provider: drift, by the rule of ``alloc-manage
        # placement drift`` (the same findings: test_placement_drift).
        resp = self.page('/dashboard/trouble/drift')
        self.assertIn('<td>missing provider</td><td>node %s (n1) has no '
                      'provider</td>' % node.uuid, resp.text)
        self.assertIn('id="checked">1 nodes checked', resp.text)
        resp = self.page('/dashboard/')
        self.assertIn('id="trouble-drift">checked a page', resp.text)
        self.assertIn('id="trouble-stuck">1<', resp.text)
        self.page('/dashboard/trouble/drift?after=' + allocation.uuid,
                  status=400)

    def test_drift_with_a_hardware_type_that_cannot_load(self):
        node = factories.make_node(factories.admin_context(), name='n1')
        # A node with a provider: its tree is described by its type.
        self.assertEqual(200, self.request(
            'POST', '/resource_providers',
            json={'name': 'n1', 'uuid': node.uuid}).status_int)
        self.request('PUT', '/traits/CUSTOM_ALLOC_FRAMEWORK_NODE')
        self.assertEqual(200, self.request(
            'PUT', '/resource_providers/%s/traits' % node.uuid,
            json={'resource_provider_generation': 0,
                  'traits': ['CUSTOM_ALLOC_FRAMEWORK_NODE']}).status_int)
        self.config(enabled_hardware_types=['fake-hardware', 'nosuch'])
        resp = self.page('/dashboard/trouble/drift', status=503)
        self.assertIn('The nodes cannot be compared with their providers: '
                      'Plugin &#34;nosuch&#34;', resp.text)

    def test_foreign_claims(self):
        ctx = factories.admin_context()
        node = factories.make_node(ctx, name='n1')
        self.request('PUT', '/traits/CUSTOM_ALLOC_FRAMEWORK_NODE')
        self.request('PUT', '/resource_classes/CUSTOM_BAREMETAL')
        marked = {'CUSTOM_BAREMETAL': {'total': 1}}
        trait = ['CUSTOM_ALLOC_FRAMEWORK_NODE']
        self.assertEqual(200, self.request('POST', '/resource_providers',
                                           json={'name': 'n1',
                                                 'uuid': node.uuid}
                                           ).status_int)
        for what, value in (('inventories', marked), ('traits', trait)):
            self.request('PUT', '/resource_providers/%s/%s' % (
                node.uuid, what), json={
                    'resource_provider_generation': 0 if what[0] == 'i'
                    else 1, what: value})
        gone = self.create_provider('gone', marked, traits=trait)
        unmarked = self.create_provider('vm-host', marked)
        stranger, orphan, fine = (uuidutils.generate_uuid()
                                  for _ in range(3))
        self.allocate(stranger, {node.uuid: {'CUSTOM_BAREMETAL': 1}})
        self.allocate(orphan, {gone: {'CUSTOM_BAREMETAL': 1}})
        self.allocate(fine, {unmarked: {'CUSTOM_BAREMETAL': 1}})
        resp = self.page('/dashboard/trouble/claims')
        text = resp.text
        self.assertIn(stranger, text)
        self.assertIn('no node allocation of ours', text)
        self.assertIn(orphan, text)
        self.assertIn('the node is gone', text)
        self.assertNotIn(fine, text)
        self.assertIn('is not <code>placement</code>', text)
        resp = self.page('/dashboard/')
        self.assertIn('id="trouble-claims">2<', resp.text)
