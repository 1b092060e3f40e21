"""Which noauth tokens carry the admin role."""

import webob

from alloc_framework.api.placement import deploy
from tests import base


class NoAuthAdminTokensTestCase(base.DBTestCase):

    def setUp(self):
        super().setUp()
        self.conf([], project='alloc_framework', default_config_files=[])
        self.config(auth_strategy='noauth', group='placement_api')

    def _get(self, token):
        app = deploy.loadapp(self.conf)
        req = webob.Request.blank('/resource_providers')
        req.headers['x-auth-token'] = token
        req.headers['openstack-api-version'] = 'placement 1.39'
        return req.get_response(app)

    def test_keystoneauth_none_plugin_token_is_admin(self):
        self.assertEqual(200, self._get('notused').status_int)
        self.assertEqual(200, self._get('admin').status_int)

    def test_other_users_have_no_role(self):
        resp = self._get('alice:project-a')
        self.assertEqual(403, resp.status_int)
        self.assertEqual('placement.undefined_code',
                         resp.json['errors'][0]['code'])

    def test_strict_upstream_behaviour(self):
        self.config(noauth_admin_tokens=['admin'], group='placement_api')
        self.assertEqual(403, self._get('notused').status_int)
        self.assertEqual(200, self._get('admin').status_int)

    def test_token_required(self):
        app = deploy.loadapp(self.conf)
        resp = webob.Request.blank('/resource_providers').get_response(app)
        self.assertEqual(401, resp.status_int)
        resp = webob.Request.blank('/').get_response(app)
        self.assertEqual(200, resp.status_int)
