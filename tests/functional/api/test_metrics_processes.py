"""``GET /metrics`` of a service of several processes, as real processes.

With ``[metrics]prometheus_multiproc_dir`` every scrape reports the
requests of all the serving processes, whichever of them answers it.
"""

import os
import re

from prometheus_client import parser

from tests import base
from tests.functional.conductor import test_server

HEADERS = {'X-Auth-Token': 'admin'}
ROUTE = '/resource_providers'


class MultiProcessMetricsTestCase(test_server._ProcessTestCase):

    REQUEST_LOG = re.compile(
        r'^\S+ \S+ (\d+) INFO alloc_framework\.api\.placement\.requestlog '
        r'.*"GET /resource_providers\?name=probe-\d+" status: 200',
        re.MULTILINE)

    def count(self, url, route):
        """The latency histogram's count of ``route`` in one scrape."""
        status, text = base.http_request(url + '/metrics', headers=HEADERS)
        self.assertEqual(200, status, text)
        for family in parser.text_string_to_metric_families(text):
            for sample in family.samples:
                if (sample.name.endswith('_count')
                        and sample.labels.get('route') == route):
                    return sample.value
        return 0

    def test_every_scrape_counts_every_process(self):
        directory = os.path.join(self.state_path, 'prometheus')
        os.makedirs(directory)
        # Left by an earlier run: emptied at start.
        with open(os.path.join(directory, 'histogram_1.db'), 'wb') as f:
            f.write(b'\0' * 16)
        self.start('placement_api', extra_config=(
            '[metrics]\nprometheus_multiproc_dir = %s' % directory),
            placement_config='processes = 2')
        self._until(self._answers(self.pl + '/'), 'the Placement API')
        self._until(lambda: self._output().count(
            'alloc-placement-api listening on') == 2, 'two processes')
        # A new connection each: the kernel spreads them over both.
        for probe in range(30):
            status, text = base.http_request(
                self.pl + ROUTE + '?name=probe-%d' % probe, headers=HEADERS)
            self.assertEqual(200, status, text)
        pids = set(self.REQUEST_LOG.findall(self._output()))
        self.assertEqual(2, len(pids), pids)
        # Each scrape, answered by either process, counts all 30.
        for _ in range(8):
            self.assertEqual(30, self.count(self.pl, ROUTE))
        self.assertNotIn('histogram_1.db', os.listdir(directory))
        self.stop()

    def test_all_in_one_keeps_the_apis_apart(self):
        # alloc-server: both APIs in each process, their histograms in
        # the same files; each port reports its own API's.
        directory = os.path.join(self.state_path, 'prometheus')
        self.start('server', extra_config=(
            'server_workers = 2\n[metrics]\nprometheus_multiproc_dir = %s'
            % directory))
        self._until(self._answers(self.pl + '/'), 'the Placement API')
        self._until(self._answers(self.bm + '/'), 'the bare metal API')
        for _ in range(10):
            base.http_request(self.pl + ROUTE, headers=HEADERS)
            base.http_request(self.bm + '/v1/nodes', headers={
                'X-OpenStack-Ironic-API-Version': 'latest'})
        for _ in range(4):
            self.assertEqual(10, self.count(self.pl, ROUTE))
            self.assertEqual(0, self.count(self.pl, '/v1/nodes'))
            self.assertEqual(10, self.count(self.bm, '/v1/nodes'))
            self.assertEqual(0, self.count(self.bm, ROUTE))
        self.stop()
