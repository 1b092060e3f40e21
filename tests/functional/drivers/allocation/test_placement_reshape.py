"""Reshaping node provider trees: at conductor start and offline.

Each worked reshape starts from the shape an earlier release left in
Placement, with a live allocation consuming it, written here through
Placement's HTTP API: the node's root carries what the new shape moves
(GPUs, NUMA resources, or the node's old resource class) and the
allocation's consumer holds it. The node then says what the new shape is
(``properties``, or a new ``resource_class``), and the reshape runs at
conductor start (online: our Placement in process and upstream's over
HTTP) or with ``alloc-manage placement migrate-compute-inventory``
(offline: nothing else runs). Placement is read back over its API.
"""

import logging
import os
import signal
import subprocess
import sys

import fixtures
from oslo_utils import uuidutils

from alloc_framework.common import exception
from alloc_framework.conductor import allocations as allocations_mod
from alloc_framework.conductor import manager as manager_mod
from alloc_framework.drivers.allocation import placement_drift
from alloc_framework.drivers import node_tree
from alloc_framework.objects import baremetal as objects
from alloc_framework.placement_client import exception as pc_exc
from tests import base
from tests.functional.drivers.allocation import \
    test_placement_drift_periodic as periodic
from tests.functional.objects.baremetal import factories as f

RC = 'CUSTOM_BAREMETAL'


def inv(total):
    return node_tree.inventory(total)


class ReshapeTestCase(periodic.PeriodicTestCase):

    def setUp(self):
        super().setUp()
        self.logger = self.useFixture(fixtures.FakeLogger(level=logging.INFO))

    # --- Placement over its API ---

    def call(self, method, url, body=None, expected=(200,)):
        kwargs = {'json': body} if body is not None else {}
        resp = self.client.adapter.request(
            url, method, headers={'OpenStack-API-Version': 'placement 1.36'},
            **kwargs)
        self.assertIn(resp.status_code, expected, resp.text)
        return resp.json() if resp.content else None

    def tree(self, root):
        """{provider uuid: (name, parent, {class: total})} of the tree."""
        found = {}
        for rp in self.call('GET', '/resource_providers?in_tree=%s'
                            % root)['resource_providers']:
            inventories = self.call(
                'GET', '/resource_providers/%s/inventories' % rp['uuid'])
            found[rp['uuid']] = (
                rp['name'], rp['parent_provider_uuid'],
                {rc: r['total'] for rc, r
                 in inventories['inventories'].items()})
        return found

    def held(self, consumer):
        return {rp: v['resources'] for rp, v in self.call(
            'GET', '/allocations/%s' % consumer)['allocations'].items()}

    def assert_within_capacity(self, root):
        for rp_uuid in self.tree(root):
            usages = self.call('GET', '/resource_providers/%s/usages'
                               % rp_uuid)['usages']
            inventories = self.call(
                'GET', '/resource_providers/%s/inventories'
                % rp_uuid)['inventories']
            for rc, used in usages.items():
                if used:
                    self.assertLessEqual(used, inventories[rc]['total'],
                                         (rp_uuid, rc))

    # --- the earlier shapes ---

    def allocated_node(self, **kw):
        """A node with an active allocation claimed in Placement."""
        node = f.make_node(self.ctx, name='node-%s' % uuidutils
                           .generate_uuid()[:8], **kw)
        allocation = f.make_allocation(self.ctx)
        self.assertEqual(node.uuid,
                         self.backend.allocate(self.ctx, allocation))
        self.assertEqual({node.uuid: {RC: 1}}, self.held(allocation.uuid))
        node.refresh()
        return node, allocation

    def write_earlier_shape(self, node, consumer, root_inventories,
                            held):
        """What an earlier release left: inventory and claim on the root."""
        rp = self.call('GET', '/resource_providers/%s' % node.uuid)
        for rc in root_inventories:
            if rc.startswith('CUSTOM_'):
                self.call('PUT', '/resource_classes/%s' % rc,
                          expected=(201, 204))
        self.call('PUT', '/resource_providers/%s/inventories' % node.uuid,
                  {'resource_provider_generation': rp['generation'],
                   'inventories': {rc: inv(t) for rc, t
                                   in root_inventories.items()}})
        current = self.call('GET', '/allocations/%s' % consumer)
        self.call('PUT', '/allocations/%s' % consumer,
                  {'allocations': {node.uuid: {'resources': held}},
                   'project_id': current.get('project_id', self.project),
                   'user_id': current.get('user_id', self.project),
                   'consumer_generation': current.get(
                       'consumer_generation')},
                  expected=(204,))

    def gpu_node(self):
        """Worked reshape 1: the root holds ``PGPU: 2`` beside its class."""
        node, allocation = self.allocated_node()
        self.write_earlier_shape(node, allocation.uuid,
                                 {RC: 1, 'PGPU': 2}, {RC: 1, 'PGPU': 2})
        node.properties = {'gpus': 2}
        node.save()
        gpus = [node_tree.child_uuid(node.uuid, 'gpu%d' % i)
                for i in range(2)]
        expected_tree = {
            node.uuid: (node.name, None, {RC: 1}),
            gpus[0]: ('%s_gpu0' % node.uuid, node.uuid, {'PGPU': 1}),
            gpus[1]: ('%s_gpu1' % node.uuid, node.uuid, {'PGPU': 1})}
        expected_held = {node.uuid: {RC: 1}, gpus[0]: {'PGPU': 1},
                         gpus[1]: {'PGPU': 1}}
        return node, allocation, expected_tree, expected_held

    def numa_node(self):
        """Worked reshape 2: VCPU and MEMORY_MB split over two cells."""
        node, allocation = self.allocated_node()
        self.write_earlier_shape(
            node, allocation.uuid, {RC: 1, 'VCPU': 8, 'MEMORY_MB': 4096},
            {RC: 1, 'VCPU': 8, 'MEMORY_MB': 4096})
        node.properties = {'numa_nodes': 2, 'cpus': 8, 'memory_mb': 4096}
        node.save()
        cells = [node_tree.child_uuid(node.uuid, 'numa%d' % i)
                 for i in range(2)]
        half = {'VCPU': 4, 'MEMORY_MB': 2048}
        expected_tree = {
            node.uuid: (node.name, None, {RC: 1}),
            cells[0]: ('%s_numa0' % node.uuid, node.uuid, half),
            cells[1]: ('%s_numa1' % node.uuid, node.uuid, half)}
        expected_held = {node.uuid: {RC: 1}, cells[0]: half,
                         cells[1]: half}
        return node, allocation, expected_tree, expected_held

    def renamed_class_node(self):
        """Worked reshape 3: the node's resource class changed in use."""
        node, allocation = self.allocated_node()
        node.resource_class = 'gold'
        node.save()
        return (node, allocation,
                {node.uuid: (node.name, None, {'CUSTOM_GOLD': 1})},
                {node.uuid: {'CUSTOM_GOLD': 1}})

    def unplaceable_node(self):
        """A reshape that cannot be done: a consumer would hold nothing.

        An earlier release's FPGA on the root, held alone by another
        consumer: the new shape has no FPGA.

        :returns: the node, its allocation and the other consumer.
        """
        node, allocation = self.allocated_node()
        other = uuidutils.generate_uuid()
        self.write_earlier_shape(node, allocation.uuid, {RC: 1, 'FPGA': 1},
                                 {RC: 1})
        self.call('PUT', '/allocations/%s' % other,
                  {'allocations': {node.uuid: {'resources': {'FPGA': 1}}},
                   'project_id': self.project, 'user_id': self.project,
                   'consumer_generation': None}, expected=(204,))
        return node, allocation, other

    SHAPES = ('gpu_node', 'numa_node', 'renamed_class_node')

    def check_reshaped(self, node, allocation, expected_tree,
                       expected_held):
        self.assertEqual(expected_tree, self.tree(node.uuid))
        self.assertEqual(expected_held, self.held(allocation.uuid))
        self.assert_within_capacity(node.uuid)
        self.assertEqual([], [d for d in placement_drift.find(
            self.ctx, self.backend) if d.provider == node.uuid])

    def check_unchanged(self, node, allocation, tree, held):
        self.assertEqual(tree, self.tree(node.uuid))
        self.assertEqual(held, self.held(allocation.uuid))


class OnlineTests:
    """At conductor start."""

    def _reshaped_at_start(self, shape):
        node, allocation, tree, held = getattr(self, shape)()
        before = (self.tree(node.uuid), self.held(allocation.uuid))
        # A running conductor's sync does not reshape: it says how to.
        self.backend.node_changed(self.ctx, node.uuid)
        self.check_unchanged(node, allocation, *before)
        self.assertIn('need a reshape, which runs only when its conductor '
                      'starts', self.logger.output)
        self.assertIn((placement_drift.STALE_PROVIDER, node.uuid),
                      {(d.kind, d.provider) for d in placement_drift.find(
                          self.ctx, self.backend) if 'reshape' in d.detail})
        self.start_conductor()
        self.check_reshaped(node, allocation, tree, held)
        self.assertIn('Reshaped the resource providers of node %s: '
                      'consumer %s' % (node.uuid, allocation.uuid),
                      self.logger.output)

    def test_gpus_move_to_children(self):
        self._reshaped_at_start('gpu_node')

    def test_numa_split(self):
        self._reshaped_at_start('numa_node')

    def test_node_resource_class_changed(self):
        self._reshaped_at_start('renamed_class_node')

    def test_reshape_losing_a_race_is_done_again(self):
        node, allocation, tree, held = self.gpu_node()
        report = self.backend.report
        real_gather = report.get_allocations_for_provider_tree
        raced = []

        def gather_then_race(context, nodename):
            gathered = real_gather(context, nodename)
            if not raced:
                # Another writer changes the root meanwhile: the
                # reshape's generation is stale, Placement answers 409.
                self.call('PUT', '/traits/CUSTOM_RACED', expected=(201,))
                rp = self.call('GET', '/resource_providers/%s' % node.uuid)
                self.call('PUT', '/resource_providers/%s/traits' % node.uuid,
                          {'resource_provider_generation': rp['generation'],
                           'traits': ['CUSTOM_ALLOC_FRAMEWORK_NODE',
                                      'CUSTOM_RACED']})
                raced.append(True)
            return gathered

        self.useFixture(fixtures.MockPatchObject(
            report, 'get_allocations_for_provider_tree',
            side_effect=gather_then_race))
        self.backend.sync_provider(node, startup=True)
        self.assertEqual([True], raced)
        self.check_reshaped(node, allocation, tree, held)

    def test_reshape_losing_every_race_stops_the_conductor(self):
        node, allocation, _tree, _held = self.gpu_node()
        before = (self.tree(node.uuid), self.held(allocation.uuid))
        manager = manager_mod.ConductorManager('test-host', self.conf)
        self.addCleanup(manager.del_host)
        report = allocations_mod.get_backend(manager).report
        real_gather = report.get_allocations_for_provider_tree
        races = []

        def gather_then_race(context, nodename):
            gathered = real_gather(context, nodename)
            # Another writer changes the root each time: every reshape
            # is sent with a stale generation.
            trait = 'CUSTOM_RACED_%d' % len(races)
            self.call('PUT', '/traits/%s' % trait, expected=(201,))
            rp = self.call('GET', '/resource_providers/%s' % node.uuid)
            self.call('PUT', '/resource_providers/%s/traits' % node.uuid,
                      {'resource_provider_generation': rp['generation'],
                       'traits': ['CUSTOM_ALLOC_FRAMEWORK_NODE', trait]})
            races.append(trait)
            return gathered

        self.useFixture(fixtures.MockPatchObject(
            report, 'get_allocations_for_provider_tree',
            side_effect=gather_then_race))
        error = self.assertRaises(exception.ReshapeAtStartFailed,
                                  manager.init_host)
        # Bounded: three tries, then the conductor does not start.
        self.assertEqual(3, len(races))
        self.assertIn(node.uuid, str(error))
        self.assertIn('lost the race with other writers 3 times',
                      str(error))
        self.assertIn('placement.concurrent_update', str(error))
        # Nothing moved. The children were created before the reshape
        # was sent (as upstream's report client does): they stay, empty,
        # and the next try uses them.
        self.assertEqual(before[1], self.held(allocation.uuid))
        gpus = [node_tree.child_uuid(node.uuid, 'gpu%d' % i)
                for i in range(2)]
        self.assertEqual(dict(before[0], **{
            gpu: ('%s_gpu%d' % (node.uuid, i), node.uuid, {})
            for i, gpu in enumerate(gpus)}), self.tree(node.uuid))

    def test_periodic_logs_an_error_and_changes_nothing(self):
        node, allocation, _tree, _held = self.gpu_node()
        before = (self.tree(node.uuid), self.held(allocation.uuid))
        manager = self.start_conductor()
        # Started: reshaped. Make it need one again, as a change would.
        self.write_earlier_shape(node, allocation.uuid,
                                 {RC: 1, 'PGPU': 2}, {RC: 1, 'PGPU': 2})
        for rp_uuid in self.tree(node.uuid):
            if rp_uuid != node.uuid:
                self.call('DELETE', '/resource_providers/%s' % rp_uuid,
                          expected=(204,))
        self.check_unchanged(node, allocation, *before)
        self.run_periodic(manager)
        self.check_unchanged(node, allocation, *before)
        self.assertIn('migrate-compute-inventory --node %s' % node.uuid,
                      self.logger.output)

    def test_periodic_failure_is_logged_and_retried_next_period(self):
        node = f.make_node(self.ctx)
        manager = self.start_conductor()
        before = self.tree(node.uuid)
        # The node gained GPUs behind the conductor's back: stale.
        node.properties = {'gpus': 1}
        node.save()
        report = manager.allocation_backend.report
        real_update = report.update_from_provider_tree
        failures = []

        def fail_once(context, new_tree, allocations=None):
            if not failures:
                failures.append(True)
                raise pc_exc.ProviderUpdateFailed(
                    pc_exc.PlacementAPIError('PUT', '/x', 503))
            return real_update(context, new_tree, allocations=allocations)

        self.useFixture(fixtures.MockPatchObject(
            report, 'update_from_provider_tree', side_effect=fail_once))
        self.run_periodic(manager)
        self.assertEqual([True], failures)
        self.assertEqual(before, self.tree(node.uuid))
        self.assertIn('Could not heal %s' % placement_drift.STALE_PROVIDER,
                      self.logger.output)
        # The next period heals it.
        self.run_periodic(manager)
        gpu = node_tree.child_uuid(node.uuid, 'gpu0')
        self.assertEqual({node.uuid: {RC: 1}, gpu: {'PGPU': 1}},
                         {u: t[2] for u, t in self.tree(node.uuid).items()})

    def test_new_node_with_gpus_gets_the_new_shape(self):
        node = f.make_node(self.ctx, properties={'gpus': 2})
        gpus = [node_tree.child_uuid(node.uuid, 'gpu%d' % i)
                for i in range(2)]
        self.assertEqual({node.uuid: {RC: 1}, gpus[0]: {'PGPU': 1},
                          gpus[1]: {'PGPU': 1}},
                         {u: t[2] for u, t in self.tree(node.uuid).items()})
        # A claim takes the whole tree.
        allocation = f.make_allocation(self.ctx)
        self.assertEqual(node.uuid,
                         self.backend.allocate(self.ctx, allocation))
        self.assertEqual({node.uuid: {RC: 1}, gpus[0]: {'PGPU': 1},
                          gpus[1]: {'PGPU': 1}}, self.held(allocation.uuid))
        # Freed, the tree is reserved again as the node is.
        self.backend.deallocate(self.ctx, allocation)
        self.assertEqual({}, self.held(allocation.uuid))

    def test_claim_of_a_shape_gone_is_refused_not_an_error(self):
        # What the candidates showed before a reshape moved the GPUs:
        # Placement answers 409, the next candidate is tried.
        node = f.make_node(self.ctx, properties={'gpus': 1})
        consumer = uuidutils.generate_uuid()
        self.assertFalse(self.client.claim(
            consumer, node.uuid, RC, self.project, self.project,
            resources={node.uuid: {RC: 1, 'PGPU': 1}}))
        self.assertEqual({}, self.held(consumer))

    def test_failed_reshape_stops_the_conductor(self):
        node, allocation, other = self.unplaceable_node()
        before = (self.tree(node.uuid), self.held(allocation.uuid))
        error = self.assertRaises(exception.ReshapeAtStartFailed,
                                  self.start_conductor)
        self.assertIn(node.uuid, str(error))
        self.assertIn('would hold nothing', str(error))
        self.check_unchanged(node, allocation, *before)
        self.assertEqual({node.uuid: {'FPGA': 1}}, self.held(other))


class OfflineTests:
    """``alloc-manage placement migrate-compute-inventory``."""

    def migrate(self, *args):
        return self.manage(*args, command='migrate-compute-inventory')

    def test_offline_worked_reshapes(self):
        # The three worked reshapes, one node each, in one run of the
        # command: a dry run changes nothing, the run reshapes every node,
        # and a second run has nothing left to do.
        shapes = [getattr(self, shape)() for shape in self.SHAPES]
        before = [(self.tree(node.uuid), self.held(allocation.uuid))
                  for node, allocation, _tree, _held in shapes]
        status, out = self.migrate('--dry-run')
        self.assertEqual(0, status, out)
        for (node, allocation, tree, _held), (old_tree, old_held) in zip(
                shapes, before):
            self.assertIn('node %s (%s): would be reshaped'
                          % (node.uuid, node.name), out)
            self.assertIn('  consumer %s: ' % allocation.uuid, out)
            for rp_uuid in tree:
                if tree[rp_uuid] != old_tree.get(rp_uuid):
                    self.assertIn('  provider %s (' % rp_uuid, out)
            self.check_unchanged(node, allocation, old_tree, old_held)

        status, out = self.migrate()
        self.assertEqual(0, status, out)
        for node, allocation, tree, held in shapes:
            self.assertIn('node %s (%s): reshaped' % (node.uuid, node.name),
                          out)
            self.check_reshaped(node, allocation, tree, held)

        status, out = self.migrate()
        self.assertEqual(0, status, out)
        self.assertIn('Nothing to do', out)
        for node, allocation, tree, held in shapes:
            self.check_reshaped(node, allocation, tree, held)

    def test_named_nodes_only(self):
        first, first_alloc, tree, held = self.gpu_node()
        second, second_alloc, _tree2, _held2 = self.renamed_class_node()
        before = (self.tree(second.uuid), self.held(second_alloc.uuid))
        status, out = self.migrate('--node', first.name)
        self.assertEqual(0, status, out)
        self.check_reshaped(first, first_alloc, tree, held)
        self.check_unchanged(second, second_alloc, *before)

    def test_unknown_node(self):
        status, out = self.migrate('--node', 'no-such-node')
        self.assertEqual(1, status, out)
        self.assertIn('node no-such-node not found', out)

    def test_failure_exits_non_zero_and_moves_nothing(self):
        node, allocation, other = self.unplaceable_node()
        fine, fine_alloc, tree, held = self.gpu_node()
        before = (self.tree(node.uuid), self.held(allocation.uuid))
        fine_before = (self.tree(fine.uuid), self.held(fine_alloc.uuid))
        # A dry run finds the failure too, and changes nothing.
        status, out = self.migrate('--dry-run')
        self.assertEqual(1, status, out)
        self.assertIn('ERROR: node %s (%s): consumer %s would hold nothing'
                      % (node.uuid, node.name, other), out)
        self.assertIn('node %s (%s): would be reshaped'
                      % (fine.uuid, fine.name), out)
        self.check_unchanged(node, allocation, *before)
        self.check_unchanged(fine, fine_alloc, *fine_before)
        status, out = self.migrate()
        self.assertEqual(1, status, out)
        self.assertIn('ERROR: node %s (%s): consumer %s would hold nothing'
                      % (node.uuid, node.name, other), out)
        self.check_unchanged(node, allocation, *before)
        # The other nodes are done all the same.
        self.check_reshaped(fine, fine_alloc, tree, held)


class ConsoleScriptTests:
    """``alloc-conductor`` reshapes before it serves, or does not start."""

    def conductor(self):
        """Start the installed alloc-conductor on the test's database."""
        script = os.path.join(os.path.dirname(sys.executable),
                              'alloc-conductor')
        if not os.path.exists(script):
            self.skipTest('alloc-conductor console script not installed')
        path = os.path.join(self.state_path, 'conductor.conf')
        with open(path, 'w') as conf_file:
            conf_file.write(
                '[DEFAULT]\nstate_path = %s\nhost = reshaper\n'
                '[database]\nconnection = %s\n'
                '[allocation]\nbackend = placement\n'
                % (self.state_path,
                   self.db.engine.url.render_as_string(hide_password=False)))
        log = open(os.path.join(self.state_path, 'conductor.log'), 'w+')
        self.addCleanup(log.close)
        env = dict(os.environ)
        env.pop('OS_TEST_TIMEOUT', None)
        proc = subprocess.Popen([script, '--config-file', path], stdout=log,
                                stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)

        def stop():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        self.addCleanup(stop)

        def output():
            log.seek(0)
            return log.read()
        return proc, output, stop

    def test_conductor_reshapes_before_it_serves(self):
        node, allocation, tree, held = self.gpu_node()
        proc, output, stop = self.conductor()
        base.wait_for(lambda: 'Conductor reshaper started' in output()
                      or proc.poll() is not None,
                      'the conductor to start', timeout=90)
        self.assertIsNone(proc.poll(), output())
        out = output()
        self.assertIn('Reshaped the resource providers of node %s'
                      % node.uuid, out)
        self.assertLess(out.index('Reshaped the resource providers'),
                        out.index('Conductor reshaper started'))
        stop()
        self.check_reshaped(node, allocation, tree, held)

    def test_failed_reshape_stops_the_command(self):
        node, allocation, other = self.unplaceable_node()
        before = (self.tree(node.uuid), self.held(allocation.uuid))
        proc, output, _stop = self.conductor()
        self.assertEqual(1, proc.wait(90), output())
        out = output()
        self.assertIn('Could not reshape the resource providers of node %s '
                      'at start' % node.uuid, out)
        self.assertNotIn('Traceback', out)
        self.assertNotIn('Conductor reshaper started', out)
        self.check_unchanged(node, allocation, *before)
        # Its registration was released: the host can start again.
        self.assertEqual([], objects.Conductor.list_alive(
            self.ctx, self.conf.conductor.heartbeat_timeout))


class TestInProcess(OnlineTests, ReshapeTestCase):
    mode = 'in-process'


class TestCommands(ConsoleScriptTests, OfflineTests, ReshapeTestCase):
    """The console scripts, on our Placement in process.

    They reshape through the code, and so the SQL, that TestInProcess
    runs on every database: their own part (options, output, exit
    status, stopping the service) is the same on all of them.
    """
    dialect_neutral = True
    mode = 'in-process'


class TestHTTP(OnlineTests, ReshapeTestCase):
    """Our Placement over HTTP (keystoneauth1, endpoint_override).

    The same reshapes and SQL as TestInProcess, which runs on every
    database: only the way to Placement differs.
    """
    dialect_neutral = True
    mode = 'http'


class TestServiceCatalog(ReshapeTestCase):
    """Our Placement over HTTP, found in the service catalog of a token."""
    # Only the finding of Placement differs from TestHTTP's.
    dialect_neutral = True
    mode = 'catalog'

    def test_gpus_move_to_children_at_start(self):
        OnlineTests._reshaped_at_start(self, 'gpu_node')
        self.assertGreater(self.placement.keystone.issued, 0)
        # Nothing but Keystone was configured: the catalog told the rest.
        self.assertIsNone(self.conf.placement.endpoint_override)
        self.assertEqual(
            self.placement.keystone.placement_url,
            self.backend.report._adapter.get_endpoint().rstrip('/'))


class TestUpstream(OnlineTests, ReshapeTestCase):
    # The same SQL as TestInProcess; upstream keeps its own SQLite.
    dialect_neutral = True
    mode = 'upstream'
