"""``GET /healthcheck`` on both APIs: unauthenticated, drained by a file."""

import os

import bcrypt
import webob

from alloc_framework.api.baremetal import app as bm_app
from alloc_framework.api import middleware
from alloc_framework.api.placement import deploy
from alloc_framework.common import exception
from tests import base


class HealthcheckTestCase(base.TestCase):
    """Both applications as built for a server, under http_basic."""

    def setUp(self):
        super().setUp()
        # oslo.policy needs a parsed configuration to look for files.
        self.conf([], project='alloc_framework', default_config_files=[])
        users = os.path.join(self.state_path, 'htpasswd')
        with open(users, 'w') as stream:
            stream.write('alice:%s\n' % bcrypt.hashpw(
                b'secret', bcrypt.gensalt(rounds=4)).decode())
        self.config(auth_strategy='http_basic',
                    http_basic_auth_user_file=users)
        self.disable_file = os.path.join(self.state_path, 'drain')

    def apps(self):
        """``{name: (application, a path that needs credentials)}``."""
        return {'baremetal': (bm_app.setup_app(self.conf), '/v1/nodes'),
                'placement': (deploy.deploy(self.conf),
                              '/resource_providers')}

    def get(self, app, path, method='GET', **headers):
        return webob.Request.blank(path, method=method,
                                   headers=headers).get_response(app)

    def test_answers_without_credentials(self):
        for name, (app, protected) in self.apps().items():
            self.assertEqual(401, self.get(app, protected).status_int, name)
            resp = self.get(app, '/healthcheck')
            self.assertEqual(200, resp.status_int, name)
            self.assertIn('X-OpenStack-Request-Id', resp.headers)
            self.assertEqual(204, self.get(app, '/healthcheck',
                                           method='HEAD').status_int)

    def test_no_details_unless_configured(self):
        app = self.apps()['placement'][0]
        resp = self.get(app, '/healthcheck', Accept='application/json')
        self.assertEqual({'detailed': False, 'reasons': []}, resp.json)
        self.config(detailed=True, group='healthcheck')
        app = self.apps()['placement'][0]
        resp = self.get(app, '/healthcheck', Accept='application/json')
        self.assertTrue(resp.json['detailed'])
        self.assertIn('python_version', resp.json)

    def test_disabled_by_file(self):
        self.config(backends=['disable_by_file'],
                    disable_by_file_path=self.disable_file,
                    group='healthcheck')
        apps = self.apps()
        for name, (app, _protected) in apps.items():
            self.assertEqual(200, self.get(app, '/healthcheck').status_int)
        open(self.disable_file, 'w').close()
        for name, (app, _protected) in apps.items():
            resp = self.get(app, '/healthcheck')
            self.assertEqual(503, resp.status_int, name)
            self.assertEqual('DISABLED BY FILE', resp.text, name)
        os.unlink(self.disable_file)
        for name, (app, _protected) in apps.items():
            self.assertEqual(200, self.get(app, '/healthcheck').status_int)

    def test_disabled(self):
        self.config(enabled=False, group='healthcheck')
        for name, (app, _protected) in self.apps().items():
            # An ordinary path of the API again: it needs credentials.
            self.assertEqual(401, self.get(app, '/healthcheck').status_int,
                             name)

    def test_outside_allowed_sources_goes_to_the_api(self):
        self.config(allowed_source_ranges=['192.0.2.0/24'],
                    group='healthcheck')
        app = self.apps()['baremetal'][0]
        resp = webob.Request.blank(
            '/healthcheck', remote_addr='198.51.100.7').get_response(app)
        self.assertEqual(401, resp.status_int)
        resp = webob.Request.blank(
            '/healthcheck', remote_addr='192.0.2.7').get_response(app)
        self.assertEqual(200, resp.status_int)

    def test_unknown_backend_stops_start(self):
        self.config(backends=['disable_by_flie'], group='healthcheck')
        exc = self.assertRaises(exception.DriverLoadError,
                                middleware.wrap_healthcheck, None, self.conf)
        self.assertIn('"disable_by_flie"', str(exc))
        self.assertIn('[healthcheck]backends', str(exc))
        self.config(backends=['disable_by_file', 'enable_by_files'],
                    group='healthcheck')
        exc = self.assertRaises(exception.DriverLoadError,
                                middleware.wrap_healthcheck, None, self.conf)
        self.assertIn('cannot be enabled together', str(exc))
