"""``alloc-manage placement drift [--heal]``: nodes against providers."""

import html
import os
import re
import subprocess
import sys

from oslo_utils import uuidutils
import webob

from alloc_framework.api.placement import deploy
from alloc_framework.drivers.allocation import placement
from alloc_framework.drivers.allocation import placement_drift
from alloc_framework.objects.baremetal import node_reservation
from tests import base
from tests.functional.drivers.allocation import \
    placement_fixtures as pb_fixtures
from tests.functional.objects.baremetal import factories as f

RC = 'CUSTOM_BAREMETAL'


class DriftTestCase(base.DBTestCase):

    mode = 'in-process'

    def setUp(self):
        super().setUp()
        self.conf([], project='alloc_framework', default_config_files=[],
                  default_config_dirs=[])
        self.ctx = f.admin_context()
        self.placement = self.useFixture(
            pb_fixtures.PlacementBackendFixture(self, self.mode))
        self.client = self.placement.client
        self.backend = self.placement.backend
        self.project = self.conf.placement.incomplete_consumer_project_id

    def make_drift(self):
        """One difference of each kind; returns what to expect."""
        # First, while it is the only free node: allocating resyncs the
        # nodes Placement offers that are not free.
        # Over capacity: the inventory of a claimed node shrank under
        # its claim, which Placement accepts (here its unit reserved; the
        # provider is stale too: healing makes it right).
        overfull = f.make_node(self.ctx, name='overfull')
        held = f.make_allocation(self.ctx)
        self.assertEqual(overfull.uuid,
                         self.backend.allocate(self.ctx, held))
        inventories, generation = self.client.get_inventories(overfull.uuid)
        inventories[RC]['reserved'] = 1
        self.client.set_inventories(overfull.uuid, generation, inventories)
        missing = f.make_node(self.ctx, name='missing')
        self.client.delete_provider(missing.uuid)
        stale = f.make_node(self.ctx, name='stale')
        stale.maintenance = True
        stale.save()
        orphan = uuidutils.generate_uuid()
        self.client.create_provider(orphan, 'gone')
        self.client.ensure_trait(placement.NODE_TRAIT)
        self.client.set_traits(orphan, 0, [placement.NODE_TRAIT])
        # A claim whose allocation is gone.
        claimed = f.make_node(self.ctx, name='claimed')
        stray = uuidutils.generate_uuid()
        self.assertTrue(self.client.claim(stray, claimed.uuid, RC,
                                          self.project, self.project))
        # An active allocation whose claim is gone.
        served = f.make_node(self.ctx, name='served')
        allocation = f.make_allocation(self.ctx)
        self.assertEqual(served.uuid, node_reservation.reserve_node(
            self.ctx, allocation, node_uuid=served.uuid))
        # Not drift: an allocation in progress holds its claim already.
        busy = f.make_node(self.ctx, name='busy')
        in_progress = f.make_allocation(self.ctx)
        self.assertTrue(self.client.claim(in_progress.uuid, busy.uuid, RC,
                                          self.project, self.project))
        # Not ours: a provider without the marker trait.
        self.client.create_provider(uuidutils.generate_uuid(), 'compute')
        return {
            (placement_drift.MISSING_PROVIDER, missing.uuid),
            (placement_drift.STALE_PROVIDER, stale.uuid),
            (placement_drift.ORPHAN_PROVIDER, orphan),
            (placement_drift.ORPHAN_CLAIM, claimed.uuid),
            (placement_drift.MISSING_CLAIM, served.uuid),
            (placement_drift.STALE_PROVIDER, overfull.uuid),
            (placement_drift.OVER_CAPACITY, overfull.uuid),
        }, allocation, stray

    def manage(self, *args, command='drift'):
        """Run the installed ``alloc-manage placement <command>``.

        On the test's database, with this test's ``[placement]``.
        """
        script = os.path.join(os.path.dirname(sys.executable),
                              'alloc-manage')
        if not os.path.exists(script):
            self.skipTest('alloc-manage console script not installed')
        lines = ['[DEFAULT]', 'state_path = %s' % self.state_path,
                 '[database]', 'connection = %s'
                 % self.db.engine.url.render_as_string(hide_password=False),
                 '[allocation]', 'backend = placement', '[placement]']
        for name in ('auth_type', 'endpoint_override'):
            value = getattr(self.conf.placement, name)
            if value:
                lines.append('%s = %s' % (name, value))
        if self.conf.placement.auth_type:
            lines += ['endpoint = %s' % self.conf.placement.endpoint,
                      'token = %s' % self.conf.placement.token]
        path = os.path.join(self.state_path, 'manage.conf')
        with open(path, 'w') as conf_file:
            conf_file.write('\n'.join(lines) + '\n')
        proc = subprocess.run(
            [script, '--config-file', path, 'placement', command]
            + list(args), capture_output=True, text=True, timeout=120)
        self.assertNotIn('Traceback', proc.stderr)
        return proc.returncode, proc.stdout + proc.stderr


class DriftTests:

    def test_no_drift(self):
        f.make_node(self.ctx)
        self.assertEqual([], placement_drift.find(self.ctx, self.backend))

    def test_over_capacity_reported_until_consumers_go(self):
        node = f.make_node(self.ctx, name='shrunk')
        allocation = f.make_allocation(self.ctx)
        self.assertEqual(node.uuid,
                         self.backend.allocate(self.ctx, allocation))
        # Another consumer of the same unit, written straight to
        # Placement with the class's inventory grown, then shrunk back.
        inventories, generation = self.client.get_inventories(node.uuid)
        inventories[RC].update(total=2, max_unit=2)
        generation = self.client.set_inventories(node.uuid, generation,
                                                 inventories)
        other = uuidutils.generate_uuid()
        self.assertTrue(self.client.claim(other, node.uuid, RC,
                                          self.project, self.project))
        inventories, generation = self.client.get_inventories(node.uuid)
        inventories[RC].update(total=1, max_unit=1)
        self.client.set_inventories(node.uuid, generation, inventories)
        found = [(d.kind, d.provider) for d in placement_drift.find(
            self.ctx, self.backend)]
        self.assertIn((placement_drift.OVER_CAPACITY, node.uuid), found)
        drift = [d for d in placement_drift.find(self.ctx, self.backend)
                 if d.kind == placement_drift.OVER_CAPACITY][0]
        self.assertIn('uses 2 %s of a capacity of 1' % RC, drift.detail)
        # Not healed while the consumers are there; gone with them.
        [(_drift, error)] = placement_drift.heal(self.ctx, self.backend,
                                                 [drift])
        self.assertIn('heals as its consumers go', str(error))
        self.client.delete_claim(other)
        self.assertEqual([], placement_drift.find(self.ctx, self.backend))

    def test_each_kind_found_and_healed(self):
        expected, allocation, stray = self.make_drift()
        drifts = placement_drift.find(self.ctx, self.backend)
        self.assertEqual(expected, {(d.kind, d.provider) for d in drifts})
        kinds = [d.kind for d in drifts]
        self.assertEqual(sorted(kinds, key=placement_drift.KINDS.index),
                         kinds)
        self.assertEqual(set(placement_drift.KINDS), set(kinds))
        results = placement_drift.heal(self.ctx, self.backend, drifts)
        self.assertEqual([None] * 7, [error for _, error in results])
        self.assertEqual([], placement_drift.find(self.ctx, self.backend))
        claims = self.placement.claims()
        self.assertNotIn(stray, claims)
        self.assertIn(allocation.uuid, claims)


class CommandTests:
    """``alloc-manage placement drift``."""

    def test_command_reports_then_heals(self):
        expected, _, _ = self.make_drift()
        status, out = self.manage()
        self.assertEqual(3, status, out)
        for kind, uuid in expected:
            self.assertIn(kind + ': ', out)
            self.assertIn(uuid, out)
        self.assertIn('7 differences (heal them with --heal)', out)
        status, out = self.manage('--heal')
        self.assertEqual(0, status, out)
        self.assertIn('7 of 7 differences healed', out)
        status, out = self.manage()
        self.assertEqual(0, status, out)
        self.assertIn('No drift between nodes and Placement', out)


class TestInProcess(DriftTests, DriftTestCase):
    mode = 'in-process'

    def dashboard_drift(self):
        """``(kind, node, detail)`` of every row of the dashboard's drift
        list, page after page (on this test's database)."""
        app = deploy.loadapp(self.conf)
        found = []
        url = '/dashboard/trouble/drift'
        pages = 0
        while url:
            resp = webob.Request.blank(url).get_response(app)
            self.assertEqual(200, resp.status_int, resp.text)
            found += re.findall(
                r'<td><a href="/dashboard/providers/([0-9a-f-]+)"><code>'
                r'[^<]*</code></a></td><td>[^<]*</td><td>[^<]*</td>'
                r'<td>([a-z ]+)</td><td>([^<]*)</td>', resp.text)
            self.assertIn('id="checked">', resp.text)
            url = re.search(r'rel="next" href="([^"]+)"', resp.text)
            url = url and url.group(1).replace('&amp;', '&')
            pages += 1
        return pages, {(kind, node, html.unescape(detail))
                       for node, kind, detail in found}

    def test_dashboard_finds_the_same(self):
        """The dashboard reads the trees from the database, ``find``
        over the API: the same rule gives the same findings."""
        self.make_drift()
        # A stale provider of each other kind.
        renamed, traits, aggregates, inventory = (
            f.make_node(self.ctx, name=name)
            for name in ('renamed', 'traits', 'aggregates', 'inventory'))
        self.client.rename_provider(renamed.uuid, 'not-the-node')
        _, generation = self.client.get_traits(traits.uuid)
        self.client.set_traits(traits.uuid, generation,
                               [placement.NODE_TRAIT, 'HW_CPU_X86_AVX'])
        _, generation = self.client.get_aggregates(aggregates.uuid)
        self.client.set_aggregates(aggregates.uuid, generation,
                                   [uuidutils.generate_uuid()])
        records, generation = self.client.get_inventories(inventory.uuid)
        records[RC].update(total=2, max_unit=2)
        self.client.set_inventories(inventory.uuid, generation, records)
        expected = {(d.kind, d.provider, d.detail)
                    for d in placement_drift.find(self.ctx, self.backend)
                    if d.kind in (placement_drift.MISSING_PROVIDER,
                                  placement_drift.STALE_PROVIDER)}
        self.assertEqual(7, len(expected))
        for node, word in ((renamed, 'name'), (traits, 'traits'),
                           (aggregates, 'aggregates'),
                           (inventory, 'inventory')):
            self.assertIn((placement_drift.STALE_PROVIDER, node.uuid,
                           'the provider of node %s (%s) differs in: %s'
                           % (node.uuid, node.name, word)), expected)
        # Eleven nodes, four a page.
        self.config(page_size=4, group='dashboard')
        pages, found = self.dashboard_drift()
        self.assertEqual(3, pages)
        self.assertEqual(expected, found)
        # Healed, both find nothing.
        placement_drift.heal(self.ctx, self.backend, placement_drift.find(
            self.ctx, self.backend))
        self.assertEqual((3, set()), self.dashboard_drift())


class TestCommand(CommandTests, DriftTestCase):
    # The command finds and heals through the code, and so the SQL, that
    # TestInProcess runs on every database: its own part (options,
    # output, exit status) is the same on all of them.
    dialect_neutral = True
    mode = 'in-process'


class TestUpstream(DriftTests, CommandTests, DriftTestCase):
    # The same SQL as TestInProcess; upstream keeps its own SQLite.
    dialect_neutral = True
    mode = 'upstream'
