"""Concurrent creators of resource classes and traits over real HTTP.

Many clients creating the same custom class or trait must all succeed
(one 201, the others 204), and clients creating different custom classes
at the same time must each get their own id. Run on PostgreSQL and
MariaDB too: there the creators really run in parallel.
"""

import threading

import requests
import sqlalchemy as sa

from alloc_framework.api.placement import deploy
from alloc_framework.db.sqlalchemy import models
from tests import base
from tests.functional.api.placement import base as pbase

THREADS = 8
HEADERS = {'x-auth-token': 'admin', 'accept': 'application/json',
           'openstack-api-version': 'placement latest'}


class CreateConcurrencyTestCase(pbase.PlacementAppTestCase):

    def setUp(self):
        super().setUp()
        server = self.useFixture(base.Server(deploy.loadapp(self.conf),
                                             workers=THREADS * 2))
        self.url = server.url

    def _parallel(self, paths):
        results = [None] * len(paths)
        barrier = threading.Barrier(len(paths))

        def put(i):
            barrier.wait(timeout=30)
            resp = requests.put(self.url + paths[i], headers=HEADERS,
                                timeout=60)
            results[i] = (resp.status_code, resp.text)

        threads = [threading.Thread(target=put, args=(i,))
                   for i in range(len(paths))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        return results

    def test_same_resource_class(self):
        results = self._parallel(['/resource_classes/CUSTOM_SAME'] * THREADS)
        codes = sorted(code for code, _text in results)
        self.assertEqual([201] + [204] * (THREADS - 1), codes, results)

    def test_same_trait(self):
        results = self._parallel(['/traits/CUSTOM_SAME'] * THREADS)
        codes = sorted(code for code, _text in results)
        self.assertEqual([201] + [204] * (THREADS - 1), codes, results)

    def test_different_resource_classes(self):
        names = ['CUSTOM_C%d' % i for i in range(THREADS)]
        results = self._parallel(['/resource_classes/%s' % n
                                  for n in names])
        self.assertEqual([201] * THREADS,
                         [code for code, _text in results], results)
        table = models.ResourceClass.__table__
        with self.db.engine.connect() as conn:
            ids = conn.execute(sa.select(table.c.id).where(
                table.c.name.in_(names))).scalars().all()
        self.assertEqual(THREADS, len(set(ids)))
        self.assertTrue(all(i >= 10000 for i in ids), ids)
