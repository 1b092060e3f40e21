"""Base of the bare metal API functional tests.

Each test gets a fresh database (the backend of ``ALLOC_TEST_DB_BACKEND``),
the real WSGI application and, for tests that write, a real conductor
manager in the same process reached through the ``local`` RPC transport.
Requests go through the whole middleware stack with webob.
"""

import json

from oslo_utils import uuidutils
import webob

from alloc_framework.api.baremetal import app as bm_app
from alloc_framework.common import context as af_context
from alloc_framework.common import states
from alloc_framework.objects.baremetal import node as node_obj
from tests import base

LATEST = 'latest'


def keystone_headers(app, conf):
    """Stand-in for keystonemiddleware: trust the identity headers.

    The tests send what keystonemiddleware would set after validating a
    token (``X-Roles``, ``X-Project-Id``, ``OpenStack-System-Scope``).
    """
    return app


class BaremetalTestCase(base.DBTestCase):
    """HTTP-level tests of the bare metal API."""

    # Start a conductor in-process (tests that only read can skip it).
    with_conductor = True
    auth_strategy = 'noauth'

    def setUp(self):
        super().setUp()
        # oslo.policy looks its file up through the parsed configuration.
        self.conf([], project='alloc_framework', default_config_files=[],
                  default_config_dirs=[])
        self.config(auth_strategy=self.auth_strategy)
        self.config(rpc_transport='local')
        self.context = af_context.get_admin_context()
        if self.with_conductor:
            self.manager = self._start_conductor()
        middleware = (keystone_headers
                      if self.auth_strategy == 'keystone' else None)
        self.app = bm_app.setup_app(self.conf, auth_middleware=middleware)

    def _start_conductor(self):
        from alloc_framework.conductor import manager as manager_mod
        manager = manager_mod.ConductorManager('test-host', self.conf)
        manager.init_host()
        self.addCleanup(manager.del_host)
        return manager

    # --- HTTP ----------------------------------------------------------------

    def request(self, method, path, body=None, version=LATEST,
                headers=None, status=None, raw=None):
        hdrs = {}
        if version is not None:
            hdrs['X-OpenStack-Ironic-API-Version'] = version
        hdrs.update(headers or {})
        req = webob.Request.blank(path, method=method, headers=hdrs)
        if raw is not None:
            req.body = raw
            req.content_type = 'application/json'
        elif body is not None:
            req.body = json.dumps(body).encode('utf-8')
            req.content_type = 'application/json'
        resp = req.get_response(self.app)
        if status is not None:
            self.assertEqual(status, resp.status_int,
                             '%s %s: %s' % (method, path, resp.text))
        return resp

    def get(self, path, **kw):
        return self.request('GET', path, **kw)

    def post(self, path, body, **kw):
        return self.request('POST', path, body=body, **kw)

    def patch(self, path, body, **kw):
        return self.request('PATCH', path, body=body, **kw)

    def put(self, path, body=None, **kw):
        return self.request('PUT', path, body=body, **kw)

    def delete(self, path, **kw):
        return self.request('DELETE', path, **kw)

    def assertError(self, resp, status, code=None, contains=None):
        """The response is an error in the bare metal API's format."""
        self.assertEqual(status, resp.status_int, resp.text)
        body = resp.json_body
        self.assertEqual(['error_message'], list(body))
        fault = json.loads(body['error_message'])
        self.assertEqual('Client' if status < 500 else 'Server',
                         fault['faultcode'])
        self.assertIsNone(fault['debuginfo'])
        if code is not None:
            self.assertEqual(code, fault['code'])
        if contains is not None:
            self.assertIn(contains, fault['faultstring'])
        return fault

    # --- data ----------------------------------------------------------------

    def make_node(self, **kw):
        """A node written straight to the database (no conductor)."""
        values = {'uuid': uuidutils.generate_uuid(),
                  'driver': 'fake-hardware',
                  'provision_state': states.AVAILABLE,
                  'power_state': states.POWER_OFF,
                  'resource_class': 'baremetal'}
        values.update(kw)
        traits = values.pop('traits', None)
        node = node_obj.Node(self.context, **values)
        node.create(self.context)
        if traits:
            from alloc_framework.objects.baremetal import trait as trait_obj
            trait_obj.set_traits(self.context, node.id, traits)
            node = node_obj.Node.get_by_id(self.context, node.id)
        return node
