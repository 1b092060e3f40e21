"""Report clients against each kind of Placement, and a raw one to check.

:class:`ReportClientTestCase` gives a test ``self.client`` (a
``ReportClient`` whose adapter records every request it sends) and
``self.api`` (plain requests at microversion 1.36 to the same Placement,
to set up and to check what Placement holds), for one of the modes of
``tests.functional.drivers.allocation.placement_fixtures``:

* ``in-process``: ``direct.InProcessPlacement`` on the test database;
* ``http``: our Placement application served on 127.0.0.1;
* ``upstream``: upstream openstack-placement served on 127.0.0.1, over
  its own SQLite database (no database of ours: dialect neutral).
"""

from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import session as ks_session
from oslo_utils import uuidutils

from alloc_framework.api.placement import direct
from alloc_framework.placement_client import report
from tests import base
from tests.functional.drivers.allocation import \
    placement_fixtures as pb_fixtures

MICROVERSION = {'OpenStack-API-Version': 'placement 1.36'}
PROJECT = 'c4b0ffee-0000-4000-8000-00000000000a'
USER = 'c4b0ffee-0000-4000-8000-00000000000b'


class RecordingAdapter:
    """An adapter that records ``(method, url)`` of every request."""

    def __init__(self, adapter):
        self.adapter = adapter
        self.calls = []

    def request(self, url, method, **kwargs):
        self.calls.append((method, url))
        return self.adapter.request(url, method, **kwargs)


def http_adapter(url):
    """A keystoneauth1 Adapter to the Placement at ``url`` (noauth).

    As a service reaches Placement: admin and service roles (the
    reshaper needs the latter).
    """
    sess = ks_session.Session()
    return ks_adapter.Adapter(
        sess, endpoint_override=url, raise_exc=False,
        additional_headers={'X-Auth-Token': 'admin',
                            'X-Roles': 'admin,service'})


class PlacementAPI:
    """Requests to Placement for the tests' set-up and checks.

    Every method asserts the status it expects.
    """

    def __init__(self, test, adapter):
        self.test = test
        self.adapter = adapter

    def call(self, method, url, body=None, expect=(200,), params=None):
        kwargs = {'headers': dict(MICROVERSION)}
        if body is not None:
            kwargs['json'] = body
        if params:
            kwargs['params'] = params
        resp = self.adapter.request(url, method, **kwargs)
        self.test.assertIn(resp.status_code, expect,
                           '%s %s: %s' % (method, url, resp.text))
        return resp.json() if resp.content else None

    def provider(self, uuid):
        """The provider as GET /resource_providers/{uuid} answers."""
        return self.call('GET', '/resource_providers/%s' % uuid)

    def exists(self, uuid):
        return 'uuid' in self.call('GET', '/resource_providers/%s' % uuid,
                                   expect=(200, 404))

    def create(self, name, parent=None, inventories=None, traits=(),
               aggregates=(), uuid=None):
        """Create a provider with its data; its uuid."""
        uuid = uuid or uuidutils.generate_uuid()
        body = {'uuid': uuid, 'name': name}
        if parent:
            body['parent_provider_uuid'] = parent
        self.call('POST', '/resource_providers', body)
        for trait in traits:
            if trait.startswith('CUSTOM_'):
                self.call('PUT', '/traits/%s' % trait, expect=(201, 204))
        path = '/resource_providers/%s' % uuid
        for what, value in (('inventories', inventories),
                            ('traits', sorted(traits)),
                            ('aggregates', sorted(aggregates))):
            if value:
                generation = self.provider(uuid)['generation']
                self.call('PUT', '%s/%s' % (path, what), {
                    'resource_provider_generation': generation, what: value})
        return uuid

    def inventories(self, uuid):
        """{resource class: total} of the provider."""
        body = self.call('GET', '/resource_providers/%s/inventories' % uuid)
        return {rc: record['total']
                for rc, record in body['inventories'].items()}

    def traits(self, uuid):
        return set(self.call(
            'GET', '/resource_providers/%s/traits' % uuid)['traits'])

    def aggregates(self, uuid):
        return set(self.call(
            'GET', '/resource_providers/%s/aggregates' % uuid)['aggregates'])

    def usages(self, uuid):
        """{resource class: used} of the provider, without zeros."""
        body = self.call('GET', '/resource_providers/%s/usages' % uuid)
        return {rc: n for rc, n in body['usages'].items() if n}

    def allocate(self, consumer, allocations):
        """Allocate ``{rp uuid: {rc: amount}}`` to a new consumer."""
        self.call('PUT', '/allocations/%s' % consumer, {
            'allocations': {rp: {'resources': resources}
                            for rp, resources in allocations.items()},
            'project_id': PROJECT, 'user_id': USER,
            'consumer_generation': None}, expect=(204,))

    def allocations(self, consumer):
        """{rp uuid: {rc: amount}} of the consumer."""
        body = self.call('GET', '/allocations/%s' % consumer)
        return {rp: value['resources']
                for rp, value in body['allocations'].items()}

    def children(self, uuid):
        """The uuids of the provider's children, sorted."""
        listed = self.call('GET', '/resource_providers',
                           params={'in_tree': uuid})['resource_providers']
        return sorted(rp['uuid'] for rp in listed
                      if rp['parent_provider_uuid'] == uuid)

    def empty(self):
        """Delete every allocation and provider, children first."""
        providers = self.call('GET', '/resource_providers')[
            'resource_providers']
        consumers = set()
        for rp in providers:
            consumers.update(self.call(
                'GET', '/resource_providers/%s/allocations' % rp['uuid'])[
                    'allocations'])
        for consumer in consumers:
            self.call('DELETE', '/allocations/%s' % consumer,
                      expect=(204, 404))
        parents = {rp['uuid']: rp['parent_provider_uuid']
                   for rp in providers}

        def depth(uuid):
            count = 0
            while parents.get(uuid):
                uuid, count = parents[uuid], count + 1
            return count
        for uuid in sorted(parents, key=depth, reverse=True):
            self.call('DELETE', '/resource_providers/%s' % uuid,
                      expect=(204, 404))


class ReportClientTestCase(base.TestCase):
    """A report client (``self.client``) of the Placement of ``mode``.

    ``self.adapter.calls`` lists the requests the client sent.
    """

    mode = 'in-process'

    def setUp(self):
        super().setUp()
        if self.mode == 'upstream':
            url = self.useFixture(pb_fixtures.UpstreamPlacement()).url
            raw = http_adapter(url)
        else:
            self.db = self.useFixture(base.Database())
            # oslo.policy (our Placement's) looks its file up through the
            # parsed configuration.
            self.conf([], project='alloc_framework', default_config_files=[],
                      default_config_dirs=[])
            self.placement = direct.InProcessPlacement(self.conf)
            if self.mode == 'http':
                from alloc_framework.api.placement import deploy
                app = deploy.loadapp(self.conf, auth_strategy='noauth')
                url = self.useFixture(base.Server(app, 'placement')).url
                raw = http_adapter(url)
            elif self.mode == 'in-process':
                raw = self.placement()
            else:
                raise ValueError(self.mode)
        self.api = PlacementAPI(self, raw)
        if self.mode == 'upstream':
            # Trees the fixture's emptying (parents in any order) leaves.
            self.api.empty()
            self.addCleanup(self.api.empty)
        self.addCleanup(raw.session.session.close)
        self.adapter = RecordingAdapter(raw)
        self.client = report.ReportClient(self.adapter)

    def calls(self):
        """The requests the client sent since the last call; reset."""
        calls, self.adapter.calls = self.adapter.calls, []
        return calls
