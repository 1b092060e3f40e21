"""Authentication strategies and policy (project-scoped owners)."""

import base64
import logging
import os

import bcrypt
import fixtures
from oslo_utils import uuidutils

from alloc_framework.api.baremetal import app as bm_app
from alloc_framework.objects.baremetal import allocation as allocation_obj
from tests.functional.api.baremetal import base


def basic(user, password):
    token = base64.b64encode(('%s:%s' % (user, password)).encode())
    return {'Authorization': 'Basic ' + token.decode()}


class TestHTTPBasic(base.BaremetalTestCase):
    # The htpasswd file, not the database: the node list behind it runs
    # on every database in other tests.
    dialect_neutral = True
    with_conductor = False

    def setUp(self):
        super().setUp()
        path = os.path.join(self.state_path, 'htpasswd')
        hashed = bcrypt.hashpw(b'secret', bcrypt.gensalt(rounds=4)).decode()
        # Apache's htpasswd -B writes the $2y$ prefix.
        apache = '$2y$' + hashed[4:]
        with open(path, 'w') as stream:
            stream.write('# users\nalice:%s\nbob:%s\n' % (hashed, apache))
        self.config(auth_strategy='http_basic',
                    http_basic_auth_user_file=path)
        self.app = bm_app.setup_app(self.conf)

    def test_no_credentials_is_401(self):
        resp = self.get('/v1/nodes')
        self.assertError(resp, 401, 'baremetal.auth_required')
        self.assertEqual('Basic realm="Baremetal API"',
                         resp.headers['WWW-Authenticate'])

    def test_wrong_password_is_401(self):
        resp = self.get('/v1/nodes', headers=basic('alice', 'nope'))
        self.assertError(resp, 401)
        resp = self.get('/v1/nodes', headers=basic('carol', 'secret'))
        self.assertError(resp, 401)
        resp = self.get('/v1/nodes', headers={'Authorization': 'Basic !!'})
        self.assertError(resp, 401)

    def test_good_credentials(self):
        self.get('/v1/nodes', headers=basic('alice', 'secret'), status=200)
        self.get('/v1/nodes', headers=basic('bob', 'secret'), status=200)

    def test_version_documents_are_public(self):
        self.get('/', status=200)
        self.get('/v1', status=200)

    def test_broken_or_removed_file_at_run_time(self):
        logger = self.useFixture(fixtures.FakeLogger(level=logging.INFO))
        path = self.conf.http_basic_auth_user_file
        with open(path, 'a') as stream:
            stream.write('carol:{SHA}abcdef\n')
        self.get('/v1/nodes', headers=basic('alice', 'secret'), status=200)
        os.unlink(path)
        self.get('/v1/nodes', headers=basic('bob', 'secret'), status=200)
        self.assertError(self.get('/v1/nodes', headers=basic('bob', 'no')),
                         401, 'baremetal.auth_required')
        self.assertIn('line 4: not a "user:bcrypt hash" entry',
                      logger.output)
        self.assertIn('Cannot read the htpasswd file', logger.output)

    def test_non_bcrypt_file_refused_at_start(self):
        path = os.path.join(self.state_path, 'plain')
        with open(path, 'w') as stream:
            stream.write('alice:{SHA}abcdef\n')
        self.config(http_basic_auth_user_file=path)
        self.assertRaises(ValueError, bm_app.setup_app, self.conf)


class TestNoAuth(base.BaremetalTestCase):
    with_conductor = False

    def test_noauth_is_logged_as_a_warning(self):
        logger = self.useFixture(fixtures.FakeLogger(level=logging.WARNING))
        bm_app.setup_app(self.conf)
        self.assertIn('The bare metal API authenticates nobody',
                      logger.output)


def identity(project, roles, system=False):
    headers = {'X-Roles': ','.join(roles), 'X-User-Id': 'user-' + project}
    if system:
        headers['OpenStack-System-Scope'] = 'all'
    else:
        headers['X-Project-Id'] = project
    return headers


ADMIN = identity('admin', ['admin', 'member', 'reader'], system=True)
P1 = identity('p1', ['member', 'reader'])
P2 = identity('p2', ['member', 'reader'])
P1_READER = identity('p1', ['reader'])


class TestKeystonePolicy(base.BaremetalTestCase):
    with_conductor = False
    auth_strategy = 'keystone'

    def _allocation(self, owner, **kw):
        allocation = allocation_obj.Allocation(
            self.context, resource_class='baremetal', owner=owner,
            uuid=uuidutils.generate_uuid(), state='error', **kw)
        allocation.create(self.context)
        return allocation

    def test_project_sees_only_its_allocations(self):
        mine = self._allocation('p1')
        self._allocation('p2')
        body = self.get('/v1/allocations', headers=P1, status=200).json_body
        self.assertEqual([mine.uuid],
                         [a['uuid'] for a in body['allocations']])
        body = self.get('/v1/allocations', headers=ADMIN,
                        status=200).json_body
        self.assertEqual(2, len(body['allocations']))

    def test_project_cannot_list_other_owner(self):
        self._allocation('p2')
        resp = self.get('/v1/allocations?owner=p2', headers=P1)
        self.assertError(resp, 403, 'baremetal.policy_forbidden')

    def test_project_cannot_see_or_delete_others(self):
        other = self._allocation('p2')
        self.assertError(self.get('/v1/allocations/%s' % other.uuid,
                                  headers=P1), 404)
        self.assertError(self.delete('/v1/allocations/%s' % other.uuid,
                                     headers=P1), 404)
        self.assertError(self.patch('/v1/allocations/%s' % other.uuid,
                                    [{'op': 'add', 'path': '/extra/a',
                                      'value': 1}], headers=P1), 404)
        self.get('/v1/allocations/%s' % other.uuid, headers=P2, status=200)

    def test_reader_cannot_update(self):
        mine = self._allocation('p1')
        self.get('/v1/allocations/%s' % mine.uuid, headers=P1_READER,
                 status=200)
        resp = self.patch('/v1/allocations/%s' % mine.uuid,
                          [{'op': 'add', 'path': '/name', 'value': 'x'}],
                          headers=P1_READER)
        self.assertError(resp, 403, 'baremetal.policy_forbidden')

    def test_project_member_updates_own(self):
        mine = self._allocation('p1')
        body = self.patch('/v1/allocations/%s' % mine.uuid,
                          [{'op': 'add', 'path': '/name', 'value': 'x'}],
                          headers=P1, status=200).json_body
        self.assertEqual('x', body['name'])

    def test_foreign_owner_on_create_is_403(self):
        resp = self.post('/v1/allocations',
                         {'resource_class': 'baremetal', 'owner': 'p2'},
                         headers=P1)
        self.assertError(resp, 403, 'baremetal.policy_forbidden')

    def test_reader_cannot_create(self):
        resp = self.post('/v1/allocations', {'resource_class': 'rc'},
                         headers=P1_READER)
        self.assertError(resp, 403)

    def test_project_cannot_create_nodes(self):
        resp = self.post('/v1/nodes', {'driver': 'fake-hardware'},
                         headers=P1)
        self.assertError(resp, 403, 'baremetal.policy_forbidden',
                         'baremetal:node:create')

    def test_project_sees_owned_and_leased_nodes(self):
        owned = self.make_node(owner='p1')
        leased = self.make_node(lessee='p1')
        self.make_node(owner='p2')
        body = self.get('/v1/nodes', headers=P1, status=200).json_body
        self.assertEqual(sorted([owned.uuid, leased.uuid]),
                         sorted(n['uuid'] for n in body['nodes']))
        body = self.get('/v1/nodes', headers=ADMIN, status=200).json_body
        self.assertEqual(3, len(body['nodes']))

    def test_other_projects_nodes_are_not_found(self):
        node = self.make_node(owner='p1')
        self.get('/v1/nodes/%s' % node.uuid, headers=P1, status=200)
        for method, path in (('GET', ''), ('PATCH', ''), ('DELETE', ''),
                             ('GET', '/states'), ('GET', '/traits')):
            resp = self.request(method, '/v1/nodes/%s%s' % (node.uuid, path),
                                body=[{'op': 'add', 'path': '/extra/a',
                                       'value': 1}]
                                if method == 'PATCH' else None,
                                headers=P2)
            self.assertError(resp, 404, 'baremetal.node_not_found')

    def test_reader_cannot_update_own_node(self):
        node = self.make_node(owner='p1')
        resp = self.patch('/v1/nodes/%s' % node.uuid,
                          [{'op': 'add', 'path': '/extra/a', 'value': 1}],
                          headers=P1_READER)
        self.assertError(resp, 403, 'baremetal.policy_forbidden')

    def test_no_roles_is_forbidden(self):
        resp = self.get('/v1/nodes', headers={'X-Project-Id': 'p1'})
        self.assertError(resp, 403)


P1_ADMIN = identity('p1', ['admin', 'member', 'reader'])


class TestKeystoneNodeCreation(base.BaremetalTestCase):
    auth_strategy = 'keystone'

    def test_project_admin_creates_self_owned_node(self):
        body = self.post('/v1/nodes', {'driver': 'fake-hardware'},
                         headers=P1_ADMIN, status=201).json_body
        self.assertEqual('p1', body['owner'])
        resp = self.post('/v1/nodes', {'driver': 'fake-hardware',
                                       'owner': 'p2'}, headers=P1_ADMIN)
        self.assertError(resp, 403, 'baremetal.policy_forbidden')

    def test_system_admin_creates_any_node(self):
        body = self.post('/v1/nodes', {'driver': 'fake-hardware',
                                       'owner': 'p2'}, headers=ADMIN,
                         status=201).json_body
        self.assertEqual('p2', body['owner'])
        self.assertEqual('test-host', body['conductor'])

    def test_project_allocation_owned_by_project(self):
        body = self.post('/v1/allocations', {'resource_class': 'rc'},
                         headers=P1, status=201).json_body
        self.assertEqual('p1', body['owner'])

    def test_candidate_of_another_project_is_unknown(self):
        other = self.make_node(owner='p2')
        mine = self.make_node(owner='p1', name='mine')
        resp = self.post('/v1/allocations',
                         {'resource_class': 'baremetal',
                          'candidate_nodes': [other.uuid]}, headers=P1)
        self.assertError(resp, 400, 'baremetal.invalid_field',
                         'candidate_nodes')
        body = self.post('/v1/allocations',
                         {'resource_class': 'baremetal',
                          'candidate_nodes': ['mine']}, headers=P1,
                         status=201).json_body
        self.assertEqual([mine.uuid], body['candidate_nodes'])


class TestKeystoneMiddleware(base.BaremetalTestCase):
    """The real keystonemiddleware: no token, no access."""

    with_conductor = False

    def setUp(self):
        super().setUp()
        from keystonemiddleware import auth_token
        for group, opts in auth_token.list_opts():
            self.conf.register_opts(opts, group=group)
        # No keystone here: only requests without a valid token are tried.
        self.config(www_authenticate_uri='http://keystone.invalid/v3',
                    group='keystone_authtoken')
        self.config(auth_strategy='keystone')
        self.app = bm_app.setup_app(self.conf)

    def test_token_required(self):
        self.assertEqual(401, self.get('/v1/nodes').status_int)

    def test_version_documents_are_public(self):
        self.get('/', status=200)
        self.get('/v1', status=200)

    def test_forged_identity_headers_are_not_trusted(self):
        resp = self.get('/v1/nodes', headers=ADMIN)
        self.assertEqual(401, resp.status_int)
