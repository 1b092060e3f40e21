"""Allocations over real HTTP: concurrency and take-over, end to end.

The bare metal API is served over HTTP on 127.0.0.1 by the project's WSGI
server; conductors run in the same process behind the ``local`` RPC
transport. Clients are plain HTTP clients in threads.
"""

import threading

import requests

from alloc_framework.objects import baremetal as objects
from tests import base
from tests.functional.api.baremetal import base as bm_base
from tests.functional.conductor import conductors

HEADERS = {'X-OpenStack-Ironic-API-Version': '1.60',
           'Content-Type': 'application/json'}


class HTTPTestCase(bm_base.BaremetalTestCase):

    def setUp(self):
        super().setUp()
        self.server = self.useFixture(base.Server(self.app, workers=32))

    def http(self, method, path, **kw):
        return requests.request(method, self.server.url + path,
                                headers=HEADERS, timeout=60, **kw)


class TestConcurrentHTTP(HTTPTestCase):

    #: Simultaneous clients, and the matching nodes they compete for (a
    #: subclass may run a smaller load that shows the same).
    clients = 50
    matching_nodes = 20

    def _start_conductor(self):
        self.config(workers_pool_size=64, group='conductor')
        return super()._start_conductor()

    def test_fifty_clients_twenty_nodes(self):
        clients, matching = self.clients, self.matching_nodes
        nodes = [self.make_node(traits=['CUSTOM_GPU'])
                 for _ in range(matching)]
        self.make_node(resource_class='other')
        barrier = threading.Barrier(clients)
        responses = []

        def client(i):
            barrier.wait()
            body = {'resource_class': 'baremetal', 'name': 'c-%d' % i}
            if i % 2:
                body['traits'] = ['CUSTOM_GPU']
            resp = self.http('POST', '/v1/allocations', json=body)
            responses.append((resp.status_code, resp.json()))

        base.run_threads(client, clients)
        self.assertEqual([201] * clients, [r[0] for r in responses])
        self.assertTrue({r[1]['state'] for r in responses}
                        <= {'allocating', 'active', 'error'})
        conductors.wait_processed(self.context, clients)

        listed = self.http('GET', '/v1/allocations?limit=100').json()
        items = listed['allocations']
        active = [a for a in items if a['state'] == 'active']
        error = [a for a in items if a['state'] == 'error']
        self.assertEqual(matching, len(active))
        self.assertEqual(clients - matching, len(error))
        self.assertEqual(sorted(n.uuid for n in nodes),
                         sorted(a['node_uuid'] for a in active))
        for a in error:
            self.assertIsNone(a['node_uuid'])
            self.assertIn('of resource class baremetal'
                          if 'traits' in a['last_error']
                          else 'match the resource class baremetal',
                          a['last_error'])
        for a in active:
            node = self.http('GET', '/v1/nodes/%s' % a['node_uuid']).json()
            self.assertEqual(a['uuid'], node['instance_uuid'])
            self.assertEqual(a['uuid'], node['allocation_uuid'])
            self.assertIsNone(node['reservation'])


class TestTakeOverHTTP(HTTPTestCase):
    """A conductor dies between accepting an allocation and processing it.

    The API's conductor ("test-host") stays alive; the allocation was
    recorded by "doomed", which then stopped without unregistering and
    without a heartbeat. test-host's take-over periodic must finish it.
    """

    def _start_conductor(self):
        self.config(check_allocations_interval=1, heartbeat_interval=1,
                    heartbeat_timeout=3, group='conductor')
        return super()._start_conductor()

    def test_periodic_takes_over(self):
        node = self.make_node()
        doomed = conductors.start(self, 'doomed')
        # The doomed conductor accepts the request but never processes it:
        # its pool is gone (as when the process is killed right after the
        # INSERT).
        doomed_id = doomed.conductor.id
        conductors.stop(doomed, unregister=False)
        allocation = objects.Allocation(self.context,
                                        resource_class='baremetal',
                                        conductor_affinity=doomed_id)
        allocation.create()
        conductors.kill_heartbeat(doomed_id)

        def finished():
            body = self.http('GET', '/v1/allocations/%s'
                             % allocation.uuid).json()
            return body if body['state'] != 'allocating' else None

        body = base.wait_for(finished, 'the take-over', timeout=60)
        self.assertEqual('active', body['state'])
        self.assertEqual(node.uuid, body['node_uuid'])
        self.assertEqual(self.manager.conductor.id,
                         objects.Allocation.get_by_uuid(
                             self.context, allocation.uuid)
                         .conductor_affinity)
