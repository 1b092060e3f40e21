"""A test case with the Placement application over a fresh database."""

from oslo_utils import uuidutils
import webob

from alloc_framework.api.placement import deploy
from tests import base


class PlacementAppTestCase(base.DBTestCase):
    """``self.app`` is ``deploy.loadapp(self.conf)``; ``request`` calls it."""

    def setUp(self):
        super().setUp()
        # oslo.policy needs a parsed configuration to look for files.
        self.conf([], project='alloc_framework', default_config_files=[])
        self.app = None

    def load(self, **kw):
        self.app = deploy.loadapp(self.conf, **kw)
        return self.app

    def request(self, method, path, token='admin', version='latest',
                headers=None, json=None):
        if self.app is None:
            self.load()
        req = webob.Request.blank(path, method=method)
        req.headers['Accept'] = 'application/json'
        if token is not None:
            req.headers['X-Auth-Token'] = token
        if version is not None:
            req.headers['OpenStack-API-Version'] = 'placement %s' % version
        if json is not None:
            req.json = json
            req.content_type = 'application/json'
        req.headers.update(headers or {})
        return req.get_response(self.app)

    def create_provider(self, name, inventories=None, traits=(), aggs=(),
                        parent=None):
        """Create a provider through the API; its UUID.

        :param inventories: the ``inventories`` of ``PUT .../inventories``.
        """
        uuid = uuidutils.generate_uuid()
        body = {'name': name, 'uuid': uuid}
        if parent:
            body['parent_provider_uuid'] = parent
        resp = self.request('POST', '/resource_providers', json=body)
        self.assertEqual(200, resp.status_code, resp.text)
        generation = 0
        path = '/resource_providers/%s' % uuid
        for what, value in (('inventories', inventories),
                            ('traits', list(traits)),
                            ('aggregates', list(aggs))):
            if not value:
                continue
            resp = self.request('PUT', '%s/%s' % (path, what), json={
                'resource_provider_generation': generation, what: value})
            self.assertEqual(200, resp.status_code, resp.text)
            generation += 1
        return uuid
