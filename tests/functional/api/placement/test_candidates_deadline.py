"""``[placement] candidates_deadline`` and clients that go away, served
by a real ``alloc-placement-api`` process on the database of the run.

The search is made slow by its data: many providers that all fit a
request without a limit. The server has one application worker, so a
request answered right after a stopped one shows that the worker was
freed.
"""

import socket
import time
import uuid

from oslo_utils import timeutils
import requests

from alloc_framework.db.sqlalchemy import models
from tests import base
from tests.functional.conductor import test_server

# Enough providers for the slow search below to take seconds on every
# database (about 2 s on SQLite on an idle machine, 3 to 5 s on MariaDB
# and PostgreSQL, several times that under load), far more than the
# deadline of the tests.
PROVIDERS = 50000
SLOW = '/allocation_candidates?resources=VCPU:1'
QUICK = SLOW + '&limit=1'
# Slow in the search itself, before the first byte of the answer: each
# provider serves the four groups, so every tree takes the general path that
# combines the groups' options (a flat tree asked for one group is served
# without it, and an unlimited search of one group then spends most of
# its time writing the answer).
SLOW_SEARCH = ('/allocation_candidates?resources1=VCPU:1&resources2=VCPU:1'
               '&resources3=VCPU:1&resources4=VCPU:1&group_policy=none')
HEADERS = {'X-Auth-Token': 'admin',
           'OpenStack-API-Version': 'placement latest'}
# What a loaded test machine may add to a deadline before the answer.
SLACK = 5.0
DEADLINE = 0.5


def _populate(engine, count):
    """``count`` root providers with 8 VCPU each, inserted in bulk."""
    now = timeutils.utcnow()
    rps = [{'id': i, 'uuid': str(uuid.uuid4()), 'name': 'rp-%d' % i,
            'generation': 1, 'root_provider_id': i, 'created_at': now}
           for i in range(1, count + 1)]
    inventories = [{'resource_provider_id': i, 'resource_class_id': 0,
                    'total': 8, 'reserved': 0, 'min_unit': 1,
                    'max_unit': 8, 'step_size': 1, 'allocation_ratio': 1.0}
                   for i in range(1, count + 1)]
    with engine.begin() as conn:
        for start in range(0, count, 5000):
            conn.execute(models.ResourceProvider.__table__.insert(),
                         rps[start:start + 5000])
            conn.execute(models.Inventory.__table__.insert(),
                         inventories[start:start + 5000])


class CandidatesDeadlineTestCase(test_server._ProcessTestCase):
    # The statement limits and cancellations differ by database.
    dialect_neutral = False

    def setUp(self):
        super().setUp()
        self.db = self.useFixture(base.Database())
        _populate(self.db.engine, PROVIDERS)

    def start_placement(self, deadline):
        url = self.db.engine.url.render_as_string(hide_password=False)
        self.start('placement_api',
                   extra_config='[database]\nconnection = %s\n'
                                '[placement]\ncandidates_deadline = %s\n'
                                % (url, deadline),
                   placement_config='auth_strategy = noauth\n'
                                    'api_workers = 1\n')
        self._until(self._answers(self.pl + '/'), 'the Placement API')

    def get(self, path, timeout=60):
        start = time.monotonic()
        resp = requests.get(self.pl + path, headers=HEADERS,
                            timeout=timeout)
        return resp, time.monotonic() - start

    def warm_up(self):
        """Let a new server's first search build what it keeps.

        The first request of a process builds and caches its statements
        and fills its connection pool: under a short deadline on a
        loaded machine it may be the one stopped. Its answer is the
        deadline's, or the candidate; anything else fails the test.
        """
        resp, _ = self.get(QUICK)
        if resp.status_code != 200:
            self.assertEqual(503, resp.status_code, resp.text[:500])
            self.assertEqual('placement.query.deadline',
                             resp.json()['errors'][0]['code'])

    def assert_quick_answer(self):
        resp, elapsed = self.get(QUICK)
        self.assertEqual(200, resp.status_code, resp.text[:500])
        self.assertEqual(1, len(resp.json()['allocation_requests']))
        self.assertLess(elapsed, SLACK)

    def test_deadline_answers_503_and_frees_the_worker(self):
        # Well above what a search with limit=1 takes on a loaded machine
        # (0.02-0.15 s), well below the slow search's (about 2 s on an
        # idle machine on SQLite, more on the others). The search of one
        # group without a limit is no longer slow enough on SQLite (0.6 s
        # for its 50,000 candidates): most of its time is the answer.
        self.start_placement(DEADLINE)
        self.warm_up()
        self.assert_quick_answer()
        for _ in range(2):
            resp, elapsed = self.get(SLOW_SEARCH)
            # Not the whole text of an answer of tens of MB, if one came.
            self.assertEqual(503, resp.status_code, resp.text[:500])
            error = resp.json()['errors'][0]
            self.assertEqual('placement.query.deadline', error['code'])
            self.assertIn('after %g seconds' % DEADLINE, error['detail'])
            self.assertIn('[placement] candidates_deadline',
                          error['detail'])
            self.assertLess(elapsed, DEADLINE + SLACK)
            # The one worker serves the next request at once, on a
            # pooled connection left without limit nor handler.
            self.assert_quick_answer()
        output = self.stop()
        self.assertIn('candidates_deadline', output)

    def test_no_deadline_lets_the_search_finish(self):
        self.start_placement(0)
        resp, elapsed = self.get(SLOW, timeout=300)
        self.assertEqual(200, resp.status_code, resp.text[:500])
        self.assertEqual(PROVIDERS, len(resp.json()['allocation_requests']))
        self.addDetail('unlimited search (s)',
                       test_server.content.text_content('%.2f' % elapsed))
        self.assert_quick_answer()
        self.stop()

    def test_client_gone_stops_the_search(self):
        # The deadline is far: only the client's departure stops it.
        self.start_placement(600)
        with socket.create_connection(('127.0.0.1', self.pl_port)) as sock:
            sock.sendall(('GET %s HTTP/1.1\r\nHost: test\r\n%s\r\n' % (
                SLOW_SEARCH,
                ''.join('%s: %s\r\n' % h for h in HEADERS.items()))
            ).encode())
            # Long enough for the search to have started, well before it
            # ends (about 1.5 s on SQLite on an idle machine, more on the
            # others).
            time.sleep(0.5)
        start = time.monotonic()
        self.assert_quick_answer()
        self.assertLess(time.monotonic() - start, SLACK)
        output = self.stop()
        self.assertIn('the client went away; the allocation candidates '
                      'search was stopped', output)
        # Stopped, not finished for nobody.
        self.assertNotIn('"GET %s" status: 200' % SLOW_SEARCH, output)
