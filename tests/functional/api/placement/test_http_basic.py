"""The Placement API under ``auth_strategy = http_basic``."""

import base64
import logging
import os

import fixtures

from alloc_framework.api import http_basic
from tests.functional.api.placement import base


def basic(user, password):
    token = base64.b64encode(('%s:%s' % (user, password)).encode())
    return {'Authorization': 'Basic ' + token.decode()}


class HTTPBasicTestCase(base.PlacementAppTestCase):
    dialect_neutral = True

    def setUp(self):
        super().setUp()
        self.path = self.use_http_basic()

    def get(self, path, token=None, **headers):
        return self.request('GET', path, token=token, headers=headers)

    def test_credentials_required(self):
        resp = self.get('/resource_providers')
        self.assertEqual(401, resp.status_int)
        self.assertEqual('Basic realm="Placement API"',
                         resp.headers['WWW-Authenticate'])
        self.assertIn('Authorization required',
                      resp.json['errors'][0]['detail'])
        # The noauth conventions open nothing.
        for token in ('admin', 'notused'):
            self.assertEqual(401, self.get('/resource_providers',
                                           token=token).status_int)
        self.assertEqual(401, self.get('/resource_providers',
                                       **basic('alice', 'nope')).status_int)
        self.assertEqual(401, self.get('/resource_providers',
                                       **basic('bob', 'secret')).status_int)
        self.assertEqual(401, self.get('/resource_providers',
                                       Authorization='Basic !!').status_int)

    def test_user_is_an_operator(self):
        alice = basic('alice', 'secret')
        self.assertEqual(200, self.get('/resource_providers',
                                       **alice).status_int)
        resp = self.request('POST', '/resource_providers', token=None,
                            json={'name': 'rp1'}, headers=alice)
        self.assertEqual(200, resp.status_int, resp.text)
        # With the new policy defaults too (admin role, in a project).
        self.config(enforce_new_defaults=True, group='oslo_policy')
        self.load()
        self.assertEqual(200, self.get('/usages?project_id=p1',
                                       **alice).status_int)

    def test_forged_identity_is_ignored(self):
        alice = basic('alice', 'secret')
        resp = self.get('/resource_providers', **{'X-Roles': 'admin',
                                                  'X-User-Id': 'admin'})
        self.assertEqual(401, resp.status_int)
        # An authenticated user's roles come from the server, not the
        # client: reader only would be refused here.
        resp = self.get('/resource_providers',
                        **dict(alice, **{'X-Roles': 'reader'}))
        self.assertEqual(200, resp.status_int)

    def test_version_document_is_public(self):
        self.assertEqual(200, self.get('/').status_int)

    def test_placement_strategy_wins(self):
        self.config(auth_strategy='noauth', group='placement_api')
        self.assertEqual(200, self.get('/resource_providers',
                                       token='admin').status_int)

    def test_bad_file_refused_at_start(self):
        with open(self.path, 'w') as stream:
            stream.write('alice:{SHA}abcdef\n')
        self.assertRaises(http_basic.HtpasswdError, self.load)

    def test_removed_file_keeps_serving(self):
        logger = self.useFixture(fixtures.FakeLogger(level=logging.INFO))
        alice = basic('alice', 'secret')
        self.load()
        os.unlink(self.path)
        self.assertEqual(200, self.get('/resource_providers',
                                       **alice).status_int)
        self.assertIn('Cannot read the htpasswd file', logger.output)


class NoAuthWarningTestCase(base.PlacementAppTestCase):
    dialect_neutral = True

    def test_noauth_is_logged_as_a_warning(self):
        logger = self.useFixture(fixtures.FakeLogger(level=logging.WARNING))
        self.load()
        self.assertIn('The Placement API authenticates nobody',
                      logger.output)
