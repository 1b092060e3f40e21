"""The dashboard in a real headless Chromium, against a real alloc-server.

``alloc-server`` (the console script) runs on loopback with the
``placement`` node allocation backend and its own SQLite database; the
test fills it through both APIs (the README's first allocation, a host
with a NUMA child and a sharing disk pool) and then drives the
distribution's Chromium through Selenium and its chromedriver, as an
operator would: it opens each page, follows the tree, submits "what
fits" for a request that fits and one that does not, reads the
explanation, and compares the numbers shown with the APIs' own answers.
A screenshot of each page is saved under ``$ALLOC_TEST_ARTIFACTS``
(default ``.test-artifacts/``) in ``dashboard/``.

Without ``/usr/bin/chromium`` and ``/usr/bin/chromedriver`` (installed by
``tools/install-browser.sh``) or without Selenium the tests are skipped;
with ``CI=true`` they fail instead. Selenium is pointed at the
distribution's chromedriver and never downloads anything.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import uuid

from testtools import content

from tests import base

CHROMIUM = '/usr/bin/chromium'
CHROMEDRIVER = '/usr/bin/chromedriver'
FLAGS = ('--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
         '--no-first-run', '--disable-background-networking',
         '--disable-component-update', '--disable-sync',
         '--window-size=1366,900')
START_TIMEOUT = 90

BM_HEADERS = {'X-OpenStack-Ironic-API-Version': 'latest'}
PL_HEADERS = {'X-Auth-Token': 'admin',
              'OpenStack-API-Version': 'placement latest'}


def artifacts_dir():
    root = os.environ.get('ALLOC_TEST_ARTIFACTS') or os.path.join(
        os.path.dirname(__file__), '..', '..', '..', '.test-artifacts')
    path = os.path.join(os.path.abspath(root), 'dashboard')
    os.makedirs(path, exist_ok=True)
    return path


def _missing_browser():
    """Why the browser tests cannot run, or None."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.access(path, os.X_OK):
            return ('%s is missing: run tools/install-browser.sh as root'
                    % path)
    try:
        import selenium  # noqa: F401
    except ImportError:
        return 'selenium is not installed (test-requirements.txt)'
    return None


class DashboardBrowserTestCase(base.TestCase):
    # A server with its own SQLite database, driven over HTTP.
    dialect_neutral = True

    def setUp(self):
        super().setUp()
        missing = _missing_browser()
        if missing:
            if base.IN_CI:
                self.fail('The browser tests are required in CI: '
                          + missing)
            self.skipTest(missing)
        self.artifacts = artifacts_dir()
        self.bm_port, self.pl_port = base.free_port(), base.free_port()
        self.bm = 'http://127.0.0.1:%d' % self.bm_port
        self.pl = 'http://127.0.0.1:%d' % self.pl_port
        self.start_server()
        self.driver = self.start_browser()

    # The server.

    def start_server(self):
        config = os.path.join(self.state_path, 'alloc.conf')
        with open(config, 'w') as stream:
            stream.write('[DEFAULT]\nstate_path = %s\nhost = browser-test\n'
                         '[api]\nport = %d\n[placement_api]\nport = %d\n'
                         '[allocation]\nbackend = placement\n'
                         % (self.state_path, self.bm_port, self.pl_port))
        exe = os.path.join(os.path.dirname(sys.executable), 'alloc-server')
        if not os.path.exists(exe):
            self.skipTest('alloc-server console script not installed')
        env = dict(os.environ)
        env.pop('OS_TEST_TIMEOUT', None)
        log = open(os.path.join(self.state_path, 'server.log'), 'w+')
        self.addCleanup(log.close)

        def output():
            log.seek(0)
            return log.read()
        self.addOnException(lambda exc_info: self.addDetail(
            'server output', content.text_content(output())))
        proc = subprocess.Popen([exe, '--config-file', config], stdout=log,
                                stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)

        def stop():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
        self.addCleanup(stop)

        def healthy():
            if proc.poll() is not None:
                self.fail('alloc-server exited (%s)' % proc.returncode)
            try:
                return all(base.http_request(url + '/healthcheck')[0] == 200
                           for url in (self.bm, self.pl))
            except OSError:
                return False
        base.wait_for(healthy, 'alloc-server', timeout=START_TIMEOUT,
                      interval=0.2)
        # Where an operator finds the dashboard: in the log at start.
        base.wait_for(lambda: 'Dashboard: %s/dashboard/' % self.pl
                      in output(), 'the dashboard URL in the log',
                      timeout=10, interval=0.1)

    def api(self, url, method='GET', body=None, expect=(200,), headers=None):
        status, text = base.http_request(url, method, body, headers)
        self.assertIn(status, expect, '%s %s: %s' % (method, url, text))
        return json.loads(text) if text else None

    def placement(self, path, method='GET', body=None, expect=(200,)):
        return self.api(self.pl + path, method, body, expect, PL_HEADERS)

    def baremetal(self, path, method='GET', body=None, expect=(200,)):
        return self.api(self.bm + path, method, body, expect, BM_HEADERS)

    def provider(self, name, inventories, traits=(), aggs=(), parent=None):
        rp = str(uuid.uuid4())
        body = {'name': name, 'uuid': rp}
        if parent:
            body['parent_provider_uuid'] = parent
        self.placement('/resource_providers', 'POST', body)
        generation = 0
        for what, value in (('inventories', inventories),
                            ('traits', list(traits)),
                            ('aggregates', list(aggs))):
            if value:
                self.placement('/resource_providers/%s/%s' % (rp, what),
                               'PUT', {'resource_provider_generation':
                                       generation, what: value})
                generation += 1
        return rp

    def wait_node(self, name, state):
        def reached():
            node = self.baremetal('/v1/nodes/' + name)
            self.assertIsNone(node.get('last_error'), node)
            return node['provision_state'] == state
        base.wait_for(reached, 'node %s %s' % (name, state), timeout=60,
                      interval=0.2)

    def populate(self):
        # The README's first allocation.
        self.baremetal('/v1/nodes', 'POST', {
            'driver': 'fake-hardware', 'resource_class': 'gold',
            'name': 'node-0'}, expect=(201,))
        for target, state in (('manage', 'manageable'),
                              ('provide', 'available')):
            self.baremetal('/v1/nodes/node-0/states/provision', 'PUT',
                           {'target': target}, expect=(202,))
            self.wait_node('node-0', state)
        self.baremetal('/v1/allocations', 'POST', {
            'resource_class': 'gold', 'name': 'web-0'}, expect=(201,))
        base.wait_for(
            lambda: self.baremetal('/v1/allocations/web-0')['state']
            == 'active', 'allocation web-0 active', timeout=60,
            interval=0.2)
        # A host with a NUMA child and a sharing disk pool.
        self.agg = str(uuid.uuid4())
        self.host = self.provider(
            'host-1', {'VCPU': {'total': 16, 'reserved': 2},
                       'MEMORY_MB': {'total': 32768}},
            traits=['HW_CPU_X86_AVX2'], aggs=[self.agg])
        self.numa = self.provider('host-1-numa0', {'VCPU': {'total': 8}},
                                  parent=self.host)
        self.pool = self.provider(
            'disk-pool', {'DISK_GB': {'total': 2000}},
            traits=['MISC_SHARES_VIA_AGGREGATE'], aggs=[self.agg])
        self.consumer = str(uuid.uuid4())
        self.placement('/allocations/' + self.consumer, 'PUT', {
            'allocations': {self.host: {'resources': {'VCPU': 4}},
                            self.pool: {'resources': {'DISK_GB': 100}}},
            'project_id': 'project-a', 'user_id': 'user-a',
            'consumer_generation': None, 'consumer_type': 'INSTANCE'},
            expect=(204,))

    # The browser.

    def start_browser(self):
        from selenium import webdriver
        from selenium.webdriver.chrome import service

        profile = tempfile.mkdtemp(prefix='alloc-chromium-')
        self.addCleanup(shutil.rmtree, profile, ignore_errors=True)
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for flag in FLAGS:
            options.add_argument(flag)
        options.add_argument('--user-data-dir=' + profile)
        options.set_capability('goog:loggingPrefs', {'browser': 'ALL'})
        # The distribution's chromedriver: Selenium Manager is not asked
        # for (nor allowed to download) anything.
        driver = webdriver.Chrome(
            service=service.Service(executable_path=CHROMEDRIVER),
            options=options)
        self.addCleanup(driver.quit)
        driver.set_page_load_timeout(60)
        return driver

    def open(self, path):
        self.driver.get(self.pl + path)
        return self.driver

    def screenshot(self, name):
        self.driver.save_screenshot(os.path.join(self.artifacts,
                                                 name + '.png'))

    def follow(self, element):
        """Click ``element`` (a link, a form's button) and wait for the
        page it leads to: reading the page right after the click could
        read the one it replaces."""
        from selenium.common import exceptions
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support import expected_conditions
        from selenium.webdriver.support import ui
        old = self.driver.find_element(By.TAG_NAME, 'html')
        element.click()
        stale = expected_conditions.staleness_of(old)

        def replaced(driver):
            try:
                return stale(driver)
            except exceptions.WebDriverException as exc:
                # Newer ChromeDrivers report the old document's element
                # so, rather than as a stale element reference.
                if 'does not belong to the document' in str(exc):
                    return True
                raise

        ui.WebDriverWait(self.driver, 60).until(replaced)

    def text(self, selector):
        from selenium.webdriver.common.by import By
        return self.driver.find_element(By.CSS_SELECTOR, selector).text

    def find(self, selector):
        from selenium.webdriver.common.by import By
        return self.driver.find_elements(By.CSS_SELECTOR, selector)

    def assertNoCSPViolation(self):
        for entry in self.driver.get_log('browser'):
            self.assertNotIn('Content Security Policy', entry['message'])

    def cell_after(self, row_label, table='table.capacity'):
        """The cells of the row of ``table`` whose first cell is
        ``row_label``."""
        for row in self.find(table + ' tbody tr'):
            cells = [c.text for c in row.find_elements('tag name', 'td')]
            if cells and cells[0] == row_label:
                return cells
        self.fail('no row %s in %s' % (row_label, table))

    def test_an_operator_looks_around(self):
        from selenium.webdriver.common.by import By

        self.populate()

        # Overview: the numbers are the APIs'.
        self.open('/dashboard/')
        self.assertEqual('Overview', self.text('h1'))
        self.screenshot('overview')
        self.assertNoCSPViolation()
        vcpu = self.cell_after('VCPU')
        usages = self.placement('/usages?project_id=project-a')['usages']
        used = sum(group.get('VCPU', 0) for group in usages.values())
        # total, reserved, used, free, capacity: (16 - 2) + 8 = 22.
        self.assertEqual(['24', '2', str(used), str(22 - used), '22'],
                         vcpu[1:6])
        gold = self.cell_after('CUSTOM_GOLD')
        self.assertEqual(['1', '0', '1', '0', '1'], gold[1:6])

        # Providers: the node's provider is there; follow the tree.
        self.open('/dashboard/providers')
        self.screenshot('providers')
        node = self.baremetal('/v1/nodes/node-0')
        names = [a.text for a in self.find('a.provider')]
        self.assertIn('node-0', names)
        self.assertIn('host-1', names)
        self.follow(self.driver.find_element(By.LINK_TEXT, 'host-1'))
        self.assertIn(self.host, self.text('h1'))
        child = self.driver.find_element(By.ID, 'rp-' + self.numa)
        pool = self.driver.find_element(By.ID, 'rp-' + self.pool)
        self.assertIn('host-1-numa0', child.text)
        self.assertIn('DISK_GB', pool.text)
        self.assertIn('project-a', self.text('table.consumers'))
        self.screenshot('provider-tree')
        # The picture of the tree: the sharing pool is drawn apart, and
        # the child's box is a link to its page (SVG <a href>).
        svg = self.driver.find_element(By.CSS_SELECTOR, 'svg.tree-svg')
        self.assertIn('sharing', svg.find_element(
            By.ID, 'svg-' + self.pool).get_attribute('class'))
        box = svg.find_element(By.ID, 'svg-' + self.numa)
        self.assertIn('host-1-numa0', box.find_element(
            By.CSS_SELECTOR, 'title').get_attribute('textContent'))
        self.follow(box.find_element(By.CSS_SELECTOR, 'rect.box'))
        self.assertIn(self.numa, self.text('h1'))
        self.assertNoCSPViolation()
        self.assertIn('current', self.driver.find_element(
            By.ID, 'svg-' + self.numa).get_attribute('class'))
        self.driver.back()
        self.follow(self.driver.find_element(
            By.ID, 'rp-' + self.numa).find_element(By.LINK_TEXT,
                                                   'host-1-numa0'))
        self.assertIn(self.numa, self.text('h1'))
        # The node's provider: its allocation is the consumer.
        allocation = self.baremetal('/v1/allocations/web-0')
        self.open('/dashboard/providers/' + node['uuid'])
        self.assertIn(allocation['uuid'], self.text('table.consumers'))

        # What fits: a request that fits, from the form.
        self.open('/dashboard/fits')
        field = self.driver.find_element(By.NAME, 'resources')
        field.send_keys('VCPU:2,DISK_GB:50')
        self.driver.find_element(By.NAME, 'required').send_keys(
            'HW_CPU_X86_AVX2')
        self.follow(self.driver.find_element(By.CSS_SELECTOR,
                                             'form.fits button'))
        self.assertEqual('1 candidate', self.text('#result'))
        self.assertIn('disk-pool', self.text('ol.candidates'))
        self.screenshot('fits')
        api_url = self.text('#api-url').split(' ', 1)[1]
        answer = self.placement(api_url)
        self.assertEqual(1, len(answer['allocation_requests']))
        self.assertIn('alloc allocation candidate list',
                      self.text('#cli-command'))
        # And one that does not: the explanation says why.
        field = self.driver.find_element(By.NAME, 'resources')
        field.clear()
        field.send_keys('VCPU:64')
        self.follow(self.driver.find_element(By.CSS_SELECTOR,
                                             'form.fits button'))
        self.assertEqual('Nothing fits', self.text('#result'))
        steps = self.find('table.explanation tbody tr')
        self.assertTrue(steps)
        self.assertTrue(self.text('#summary'))
        self.screenshot('fits-explained')
        api_url = self.text('#api-url').split(' ', 1)[1]
        self.assertIn('resources=VCPU%3A64', api_url)
        explained = self.placement(api_url + '&explain=true')
        self.assertEqual([], explained['allocation_requests'])
        self.assertEqual(explained['explanation']['summary'],
                         self.text('#summary'))

        # Bare metal: counts as the bare metal API lists them.
        self.open('/dashboard/baremetal')
        active = self.baremetal('/v1/allocations?state=active')
        self.assertEqual(str(len(active['allocations'])),
                         self.text('#allocations-active'))
        self.assertIn('web-0', self.text('table.allocations'))
        self.assertIn('browser-test', self.text('table.conductors'))
        self.assertIn('alive', self.text('table.conductors'))
        self.screenshot('baremetal')

        # Trouble: nothing over capacity, no drift.
        self.open('/dashboard/trouble/over-capacity')
        self.assertIn('Nothing here', self.text('main'))
        self.screenshot('trouble')
        self.open('/dashboard/trouble/drift')
        self.assertIn('Nothing here', self.text('main'))
        self.assertNoCSPViolation()

    def test_hostile_input_in_the_browser(self):
        from selenium.webdriver.common.by import By

        self.open('/dashboard/providers')
        field = self.driver.find_element(By.NAME, 'name')
        field.send_keys('"><script>document.title="owned"</script>')
        self.follow(self.driver.find_element(By.CSS_SELECTOR,
                                             'form.search button'))
        self.assertNotEqual('owned', self.driver.title)
        self.assertIn('No provider matches', self.text('main'))
        self.open('/dashboard/fits?resources=%3Cscript%3E')
        self.assertIn('Error 400', self.text('h1'))
        self.assertIn('resources', self.text('code.field'))
        self.assertNotEqual('owned', self.driver.title)
