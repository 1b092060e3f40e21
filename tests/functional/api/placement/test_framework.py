"""The Placement framework beyond what YAML can reach.

Unexpected exceptions, domain errors escaping handlers, request ids in
the context, authentication strategies, resource classes and traits in
use (set up with SQL, independently of the provider endpoints), the
policy entry points, CORS and the request log.
"""

from importlib import metadata
import logging
import os
from unittest import mock
import uuid

import fixtures
from keystonemiddleware import auth_token
from oslo_middleware import cors
from oslo_policy import opts as policy_opts
from oslo_utils import timeutils
import sqlalchemy as sa
import webob

from alloc_framework.api.placement import deploy
from alloc_framework.api.placement import handler
from alloc_framework.api.placement import policies
from alloc_framework.api.placement import policy
from alloc_framework.api.placement import response
from alloc_framework.api.placement import wsgi_wrapper
from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects.placement import exception
from tests.functional.api.placement import base


@wsgi_wrapper.PlacementWsgify
def _boom(req):
    raise RuntimeError('secret internal detail')


@wsgi_wrapper.PlacementWsgify
def _missing(req):
    raise exception.ResourceProviderNotFound()


@wsgi_wrapper.PlacementWsgify
def _whoami(req):
    ctx = req.environ['placement.context']
    return response.send_json(req, {
        'request_id': ctx.request_id,
        'global_request_id': ctx.global_request_id,
        'user_id': ctx.user_id,
        'project_id': ctx.project_id,
        'roles': ctx.roles,
        'system_scope': ctx.system_scope,
        'has_config': ctx.config is not None,
    })


class ExtraRoutesTestCase(base.PlacementAppTestCase):

    def setUp(self):
        super().setUp()
        patcher = mock.patch.dict(handler.ROUTE_DECLARATIONS, {
            '/boom': {'GET': _boom},
            '/missing': {'GET': _missing},
            '/whoami': {'GET': _whoami},
        })
        patcher.start()
        self.addCleanup(patcher.stop)

    def test_unexpected_exception_is_a_json_500(self):
        resp = self.request('GET', '/boom')
        self.assertEqual(500, resp.status_int)
        self.assertEqual('application/json', resp.content_type)
        error = resp.json['errors'][0]
        self.assertEqual(500, error['status'])
        self.assertTrue(error['request_id'].startswith('req-'))
        self.assertNotIn('secret internal detail', resp.text)
        self.assertNotIn('Traceback', resp.text)
        self.assertEqual(error['request_id'],
                         resp.headers['X-Openstack-Request-Id'])

    def test_domain_not_found_is_a_404(self):
        resp = self.request('GET', '/missing', version='1.23')
        self.assertEqual(404, resp.status_int)
        self.assertEqual('placement.undefined_code',
                         resp.json['errors'][0]['code'])

    def test_valid_global_request_id_is_kept(self):
        global_id = 'req-%s' % uuid.uuid4()
        resp = self.request('GET', '/whoami',
                            headers={'X-Openstack-Request-Id': global_id})
        self.assertEqual(200, resp.status_int)
        self.assertEqual(global_id, resp.json['global_request_id'])
        self.assertNotEqual(global_id, resp.json['request_id'])
        self.assertEqual(resp.json['request_id'],
                         resp.headers['X-Openstack-Request-Id'])

    def test_invalid_global_request_id_is_ignored(self):
        resp = self.request('GET', '/whoami',
                            headers={'X-Openstack-Request-Id': 'req-nope'})
        self.assertIsNone(resp.json['global_request_id'])

    def test_noauth_token_user_and_project(self):
        resp = self.request('GET', '/whoami', token='alice:proj-1',
                            headers={'X-Roles': 'reader, member'})
        self.assertEqual('alice', resp.json['user_id'])
        self.assertEqual('proj-1', resp.json['project_id'])
        self.assertEqual(['reader', 'member'], resp.json['roles'])
        self.assertTrue(resp.json['has_config'])

    def test_noauth_project_header_wins(self):
        resp = self.request('GET', '/whoami', token='alice:proj-1',
                            headers={'X-Project-Id': 'proj-2'})
        self.assertEqual('proj-2', resp.json['project_id'])

    def test_noauth_roles_header_is_the_role_list(self):
        resp = self.request('GET', '/whoami', token='admin',
                            headers={'X-Roles': 'reader'})
        self.assertEqual(['reader'], resp.json['roles'])

    def test_noauth_system_scope_has_no_project(self):
        resp = self.request('GET', '/whoami', token='admin:p',
                            headers={'OpenStack-System-Scope': 'all'})
        self.assertIsNone(resp.json['project_id'])

    def test_noauth_token_without_project(self):
        resp = self.request('GET', '/whoami', token='admin')
        self.assertEqual('admin', resp.json['user_id'])
        self.assertEqual('admin', resp.json['project_id'])
        self.assertEqual(['admin'], resp.json['roles'])

    def test_noauth_system_scope(self):
        resp = self.request('GET', '/whoami', token='admin',
                            headers={'OpenStack-System-Scope': 'all'})
        self.assertEqual('all', resp.json['system_scope'])

    def test_content_length_without_content_type(self):
        req = webob.Request.blank('/whoami', method='GET')
        req.headers['X-Auth-Token'] = 'admin'
        req.body = b'{}'
        req.environ.pop('CONTENT_TYPE', None)
        resp = req.get_response(self.load())
        self.assertEqual(400, resp.status_int)
        self.assertIn('content-type header required',
                      resp.json['errors'][0]['detail'])


class AuthStrategyTestCase(base.PlacementAppTestCase):

    def setUp(self):
        super().setUp()
        for group, opts in auth_token.list_opts():
            self.conf.register_opts(opts, group=group)
        # Where clients are sent for a token; never contacted here.
        self.config(www_authenticate_uri='http://keystone.invalid/identity',
                    group='keystone_authtoken')

    def test_keystone_requires_a_token(self):
        self.config(auth_strategy='keystone', group='placement_api')
        self.load()
        resp = self.request('GET', '/resource_classes', token=None)
        self.assertEqual(401, resp.status_int)
        self.assertIn('keystone.invalid',
                      resp.headers['WWW-Authenticate'])
        # The version document stays public.
        resp = self.request('GET', '/', token=None)
        self.assertEqual(200, resp.status_int)

    def test_default_strategy_applies_when_unset(self):
        self.config(auth_strategy='keystone')
        self.load()
        resp = self.request('GET', '/traits', token=None)
        self.assertEqual(401, resp.status_int)

    def test_http_basic_applies_too(self):
        # Not noauth in disguise: a noauth admin token opens nothing.
        path = os.path.join(self.state_path, 'htpasswd')
        with open(path, 'w') as stream:
            stream.write('# nobody yet\n')
        self.config(auth_strategy='http_basic',
                    http_basic_auth_user_file=path)
        self.load()
        self.assertEqual(
            401, self.request('GET', '/traits', token=None).status_int)
        self.assertEqual(401, self.request('GET', '/traits').status_int)

    def test_placement_strategy_wins(self):
        self.config(auth_strategy='keystone')
        self.config(auth_strategy='noauth', group='placement_api')
        self.load()
        self.assertEqual(200, self.request('GET', '/traits').status_int)


class InUseTestCase(base.PlacementAppTestCase):
    """Resource classes and traits referenced by providers."""

    def _provider(self):
        rp = models.ResourceProvider.__table__
        with self.db.engine.begin() as conn:
            result = conn.execute(rp.insert().values(
                uuid=str(uuid.uuid4()), name='rp-%s' % uuid.uuid4().hex,
                generation=0, created_at=timeutils.utcnow()))
            rp_id = result.inserted_primary_key[0]
            conn.execute(rp.update().where(rp.c.id == rp_id).values(
                root_provider_id=rp_id))
        return rp_id

    def _id_of(self, table, name):
        with self.db.engine.connect() as conn:
            return conn.execute(sa.select(table.c.id).where(
                table.c.name == name)).scalar()

    def test_resource_class_with_inventory_cannot_be_deleted(self):
        self.assertEqual(201, self.request(
            'PUT', '/resource_classes/CUSTOM_GPU').status_int)
        rc_id = self._id_of(models.ResourceClass.__table__, 'CUSTOM_GPU')
        self.assertGreaterEqual(rc_id, 10000)
        rp_id = self._provider()
        with self.db.engine.begin() as conn:
            conn.execute(models.Inventory.__table__.insert().values(
                resource_provider_id=rp_id, resource_class_id=rc_id,
                total=4, reserved=0, min_unit=1, max_unit=4, step_size=1,
                allocation_ratio=1.0))
        resp = self.request('DELETE', '/resource_classes/CUSTOM_GPU')
        self.assertEqual(409, resp.status_int)
        self.assertIn('CUSTOM_GPU', resp.json['errors'][0]['detail'])
        self.assertEqual(200, self.request(
            'GET', '/resource_classes/CUSTOM_GPU').status_int)

    def test_standard_class_ids_are_stable(self):
        self.load()
        self.assertEqual(0, self._id_of(models.ResourceClass.__table__,
                                        'VCPU'))
        self.assertEqual(2, self._id_of(models.ResourceClass.__table__,
                                        'DISK_GB'))

    def test_custom_class_ids_increase(self):
        self.request('PUT', '/resource_classes/CUSTOM_A')
        self.request('PUT', '/resource_classes/CUSTOM_B')
        table = models.ResourceClass.__table__
        self.assertEqual(self._id_of(table, 'CUSTOM_A') + 1,
                         self._id_of(table, 'CUSTOM_B'))

    def test_trait_of_a_provider(self):
        self.assertEqual(201, self.request(
            'PUT', '/traits/CUSTOM_USED').status_int)
        self.assertEqual(201, self.request(
            'PUT', '/traits/CUSTOM_FREE').status_int)
        trait_id = self._id_of(models.Trait.__table__, 'CUSTOM_USED')
        rp_id = self._provider()
        with self.db.engine.begin() as conn:
            conn.execute(models.ResourceProviderTrait.__table__.insert(
            ).values(resource_provider_id=rp_id, trait_id=trait_id))
        resp = self.request('GET', '/traits?associated=true')
        self.assertEqual(['CUSTOM_USED'], resp.json['traits'])
        resp = self.request(
            'GET', '/traits?associated=false&name=startswith:CUSTOM_')
        self.assertEqual(['CUSTOM_FREE'], resp.json['traits'])
        resp = self.request('DELETE', '/traits/CUSTOM_USED')
        self.assertEqual(409, resp.status_int)
        self.assertEqual(204, self.request(
            'GET', '/traits/CUSTOM_USED').status_int)
        self.assertEqual(204, self.request(
            'DELETE', '/traits/CUSTOM_FREE').status_int)

    def test_a_delete_in_another_application_is_seen(self):
        # Each application has its own cache; a delete through one must
        # not leave the other answering with the deleted class.
        other = deploy.loadapp(self.conf)
        self.assertEqual(201, self.request(
            'PUT', '/resource_classes/CUSTOM_GONE').status_int)
        path = '/resource_providers?resources=CUSTOM_GONE:1'
        req = webob.Request.blank(path, headers={
            'X-Auth-Token': 'admin',
            'OpenStack-API-Version': 'placement latest'})
        self.assertEqual(200, req.get_response(other).status_int)
        self.assertEqual(204, self.request(
            'DELETE', '/resource_classes/CUSTOM_GONE').status_int)
        resp = req.get_response(other)
        self.assertEqual(400, resp.status_int)
        self.assertIn('CUSTOM_GONE', resp.json['errors'][0]['detail'])

    def test_loading_twice_keeps_standard_data(self):
        self.load()
        self.load()
        resp = self.request('GET', '/resource_classes')
        names = [rc['name'] for rc in resp.json['resource_classes']]
        self.assertEqual(len(set(names)), len(names))
        self.assertIn('VCPU', names)


class PolicyEntryPointsTestCase(base.PlacementAppTestCase):

    UPSTREAM_RULES = {
        'admin_api', 'service_api', 'admin_or_service_api',
        'project_reader_api', 'admin_or_project_reader_or_service_api',
        'placement:resource_providers:list',
        'placement:resource_providers:create',
        'placement:resource_providers:show',
        'placement:resource_providers:update',
        'placement:resource_providers:delete',
        'placement:resource_classes:list',
        'placement:resource_classes:create',
        'placement:resource_classes:show',
        'placement:resource_classes:update',
        'placement:resource_classes:delete',
        'placement:resource_providers:inventories:list',
        'placement:resource_providers:inventories:create',
        'placement:resource_providers:inventories:show',
        'placement:resource_providers:inventories:update',
        'placement:resource_providers:inventories:delete',
        'placement:resource_providers:aggregates:list',
        'placement:resource_providers:aggregates:update',
        'placement:resource_providers:usages',
        'placement:usages',
        'placement:traits:list', 'placement:traits:show',
        'placement:traits:update', 'placement:traits:delete',
        'placement:resource_providers:traits:list',
        'placement:resource_providers:traits:update',
        'placement:resource_providers:traits:delete',
        'placement:allocations:manage', 'placement:allocations:list',
        'placement:allocations:update', 'placement:allocations:delete',
        'placement:resource_providers:allocations:list',
        'placement:allocation_candidates:list',
        'placement:reshaper:reshape',
    }
    # Ours alone, for what upstream does not have.
    OWN_RULES = {'placement:metrics', 'placement:dashboard'}

    def test_all_upstream_rules(self):
        names = [r.name for r in policies.list_rules()]
        self.assertEqual(len(names), len(set(names)))
        self.assertEqual(self.UPSTREAM_RULES | self.OWN_RULES, set(names))

    def test_entry_points(self):
        eps = metadata.entry_points()
        rules = [ep for ep in eps.select(group='oslo.policy.policies')
                 if ep.name == 'alloc_framework.placement']
        self.assertEqual(1, len(rules))
        self.assertEqual(len(self.UPSTREAM_RULES | self.OWN_RULES),
                         len(rules[0].load()()))
        enforcers = [ep for ep in eps.select(group='oslo.policy.enforcer')
                     if ep.name == 'alloc_framework.placement']
        self.assertEqual(1, len(enforcers))
        enforcer = enforcers[0].load()()
        self.assertIn('placement:reshaper:reshape', enforcer.registered_rules)

    def test_policy_file_override(self):
        path = self.useFixture(fixtures.TempDir()).path
        policy_file = '%s/policy.yaml' % path
        with open(policy_file, 'w') as f:
            f.write('"placement:traits:list": "@"\n')
        policy_opts.set_defaults(self.conf)
        self.config(policy_file=policy_file, group='oslo_policy')
        self.load()
        resp = self.request('GET', '/traits', token='nobody')
        self.assertEqual(200, resp.status_int)
        resp = self.request('GET', '/resource_classes', token='nobody')
        self.assertEqual(403, resp.status_int)

    def test_authorize_without_raise(self):
        enforcer = policy.get_enforcer(self.conf)
        from alloc_framework.api.placement import context
        ctx = context.RequestContext(user_id='u', project_id='p',
                                     roles=['reader'], enforcer=enforcer)
        self.assertFalse(ctx.can(policies.resource_class.LIST, fatal=False))
        self.assertRaises(exception.PolicyNotAuthorized, ctx.can,
                          policies.resource_class.LIST)


class PolicyDecisionCacheTestCase(base.PlacementAppTestCase):
    """Policy decisions kept for [placement_api]policy_cache_seconds."""

    def setUp(self):
        super().setUp()
        self.now = 1000.0
        self.useFixture(fixtures.MockPatch(
            'alloc_framework.api.placement.policy.time.monotonic',
            side_effect=lambda: self.now))
        self.policy_file = os.path.join(
            self.useFixture(fixtures.TempDir()).path, 'policy.yaml')
        self.write_policy('"placement:traits:list": "@"\n')
        # [oslo_policy] is registered by the first enforcer built.
        policy_opts.set_defaults(self.conf)
        self.config(policy_file=self.policy_file, group='oslo_policy')

    def write_policy(self, text):
        with open(self.policy_file, 'w') as f:
            f.write(text)
        # oslo.policy sees a change by the file's mtime: make it differ.
        self.mtime = getattr(self, 'mtime', 1000000) + 10
        os.utime(self.policy_file, (self.mtime, self.mtime))

    def test_changed_file_applies_when_decisions_expire(self):
        self.config(policy_cache_seconds=5, group='placement_api')
        self.assertEqual(200, self.request('GET', '/traits',
                                           token='nobody').status_int)
        self.write_policy('"placement:traits:list": "!"\n')
        self.now += 4.9
        # Kept: the same credentials on the same rule and target.
        self.assertEqual(200, self.request('GET', '/traits',
                                           token='nobody').status_int)
        # Not kept: another user is a new decision, taken on the new file.
        self.assertEqual(403, self.request('GET', '/traits',
                                           token='other').status_int)
        self.now += 0.2
        self.assertEqual(403, self.request('GET', '/traits',
                                           token='nobody').status_int)

    def test_refusal_kept_too(self):
        self.config(policy_cache_seconds=5, group='placement_api')
        resp = self.request('GET', '/resource_classes', token='nobody')
        self.assertEqual(403, resp.status_int)
        self.assertIn('placement:resource_classes:list', resp.text)
        self.write_policy('"placement:resource_classes:list": "@"\n')
        self.assertEqual(403, self.request('GET', '/resource_classes',
                                           token='nobody').status_int)
        self.now += 5
        self.assertEqual(200, self.request('GET', '/resource_classes',
                                           token='nobody').status_int)

    def test_zero_consults_the_file_on_every_request(self):
        self.config(policy_cache_seconds=0, group='placement_api')
        self.assertEqual(200, self.request('GET', '/traits',
                                           token='nobody').status_int)
        self.write_policy('"placement:traits:list": "!"\n')
        self.assertEqual(403, self.request('GET', '/traits',
                                           token='nobody').status_int)

    def _cache(self, seconds=5):
        enforcer = policy.get_enforcer(self.conf)
        calls = []
        real = enforcer.authorize

        def counted(*args, **kwargs):
            calls.append(args[0])
            return real(*args, **kwargs)

        enforcer.authorize = counted
        return policy.DecisionCache(enforcer, seconds), calls

    def test_keyed_by_credentials_and_target(self):
        from alloc_framework.api.placement import context
        cache, calls = self._cache()
        admin = context.RequestContext(user_id='u', project_id='p',
                                       roles=['admin'], enforcer=cache)
        reader = context.RequestContext(user_id='u', project_id='p',
                                        roles=['reader'], enforcer=cache)
        rule = policies.resource_class.LIST
        for _ in range(3):
            self.assertTrue(admin.can(rule))
            self.assertFalse(reader.can(rule, fatal=False))
            self.assertRaises(exception.PolicyNotAuthorized, reader.can,
                              rule)
        self.assertEqual([rule, rule], calls)
        # Another target is another decision.
        self.assertTrue(admin.can(rule, {'project_id': 'q'}))
        self.assertEqual(3, len(calls))
        self.now += 5
        self.assertTrue(admin.can(rule))
        self.assertEqual(4, len(calls))

    def test_unregistered_rule_is_not_kept(self):
        from alloc_framework.api.placement import context
        cache, calls = self._cache()
        ctx = context.RequestContext(user_id='u', project_id='p',
                                     roles=['admin'], enforcer=cache)
        for _ in range(2):
            self.assertRaises(policy.oslo_policy.PolicyNotRegistered,
                              ctx.can, 'placement:nothing:here')
        self.assertEqual(2, len(calls))

    def test_unhashable_credentials_go_to_the_enforcer(self):
        cache, calls = self._cache()
        creds = {'roles': ['admin'], 'project_id': 'p',
                 'odd': [bytearray(b'x')]}
        target = {'project_id': 'p'}
        for _ in range(2):
            self.assertTrue(cache.authorize(
                policies.resource_class.LIST, target, creds))
        self.assertEqual(2, len(calls))


class MiddlewareTestCase(base.PlacementAppTestCase):

    def test_no_cors_without_origins(self):
        resp = self.request('OPTIONS', '/traits', headers={
            'Origin': 'https://dashboard.example',
            'Access-Control-Request-Method': 'PUT'})
        self.assertEqual(405, resp.status_int)
        self.assertNotIn('Access-Control-Allow-Origin', resp.headers)

    def test_cors_preflight(self):
        self.conf.register_opts(cors.CORS_OPTS, 'cors')
        self.config(allowed_origin=['https://dashboard.example'],
                    group='cors')
        resp = self.request('OPTIONS', '/traits', token=None, headers={
            'Origin': 'https://dashboard.example',
            'Access-Control-Request-Method': 'PUT',
            'Access-Control-Request-Headers': 'openstack-api-version'})
        self.assertEqual(200, resp.status_int)
        self.assertEqual('https://dashboard.example',
                         resp.headers['Access-Control-Allow-Origin'])
        resp = self.request('GET', '/', token=None,
                            headers={'Origin': 'https://dashboard.example'})
        exposed = resp.headers['Access-Control-Expose-Headers'].lower()
        self.assertIn('openstack-api-version', exposed)
        self.assertIn('x-openstack-request-id', exposed)

    def test_request_log_line(self):
        logger = self.useFixture(fixtures.FakeLogger(
            name='alloc_framework.api.placement.requestlog',
            level=logging.INFO))
        self.request('GET', '/traits?name=startswith:CUSTOM',
                     version='1.6')
        self.assertRegex(
            logger.output,
            r'"GET /traits\?name=startswith:CUSTOM" status: 200 len: \d+ '
            r'microversion: 1.6')
