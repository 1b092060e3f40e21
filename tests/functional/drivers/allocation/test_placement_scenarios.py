"""The node Allocation API's own tests, with the placement backend.

The test classes of the bare metal API (``tests.functional.api.baremetal``)
and of the conductors (``tests.functional.conductor.test_allocations``)
run unchanged against the placement backend, each against our Placement
in process and upstream openstack-placement over HTTP: the API, its
answers and the allocation life cycle must not change with the backend.
Our own Placement over HTTP is not one more copy of every scenario: the
report client's HTTP path is what upstream's run takes, and the backend's
own tests (``test_placement.TestHTTP``) run against our server over
HTTP. The allocation groups' tests (API and conductors) run the same
way. Every test also checks, at its end, that Placement holds a claim for
exactly the active allocations, each on its node's provider.
"""

from alloc_framework.common import context as af_context
from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import allocation as alloc_obj
from tests.functional.api.baremetal import test_allocation_concurrency
from tests.functional.api.baremetal import test_allocation_groups
from tests.functional.api.baremetal import test_allocations
from tests.functional.conductor import test_allocation_groups as \
    conductor_group_tests
from tests.functional.conductor import test_allocations as conductor_tests
from tests.functional.drivers.allocation import \
    placement_fixtures as pb_fixtures


class _Scenario:
    """Run the test with the placement backend against ``mode``."""

    mode = 'in-process'

    def use_placement(self):
        # oslo.policy (our Placement's) reads the parsed configuration.
        self.conf([], project='alloc_framework', default_config_files=[],
                  default_config_dirs=[])
        self.placement = self.useFixture(
            pb_fixtures.PlacementBackendFixture(self, self.mode))
        # Checked after the test's own clean-ups (conductors stopped).
        self.addCleanup(self.check_claims)

    def check_claims(self):
        ctx = af_context.get_admin_context()
        active = {a.uuid: a.node_uuid
                  for a in objects.Allocation.list(ctx)
                  if a.state == alloc_obj.ACTIVE}
        self.assertEqual(active, self.placement.claims())


class _APIScenario(_Scenario):

    def _start_conductor(self):
        self.use_placement()
        return super()._start_conductor()

    def make_node(self, **kw):
        node = super().make_node(**kw)
        # Written straight to the database: mirror it as the conductor
        # mirrors the nodes it creates.
        self.placement.sync(node.uuid)
        return node


class _ConductorScenario(_Scenario):

    def setUp(self):
        super().setUp()
        self.use_placement()


# The concurrency tests' load against upstream Placement. Its server
# answers one request at a time (see placement_upstream_server.py), so 50
# clients competing for 20 nodes took a minute or more, nearly all of it
# queued in that one thread. 20 clients for 8 nodes still start at once,
# still outnumber the nodes 5 to 2 and race for the same candidates, so
# the test still shows what it is for: every node claimed once, every
# excess request an error, Placement's claims matching the allocations.
# Our own Placement, in process, still runs the full load.
UPSTREAM_LOAD = {'clients': 20, 'matching_nodes': 8}


def _scenarios(namespace, bases, modes=('in-process', 'upstream'), prefix=''):
    for test_class in bases:
        mixin = (_APIScenario if hasattr(test_class, '_start_conductor')
                 else _ConductorScenario)
        for mode in modes:
            name = '%s%s_%s' % (prefix, test_class.__name__,
                                mode.replace('-', '_').title()
                                .replace('_', ''))
            # Only the in-process variant's SQL differs from what the
            # database backend's run covers: the others run on SQLite.
            attrs = {'mode': mode, 'dialect_neutral': mode != 'in-process'}
            if mode == 'upstream' and hasattr(test_class, 'clients'):
                attrs.update(UPSTREAM_LOAD)
            namespace[name] = type(name, (mixin, test_class), attrs)


_scenarios(globals(), [
    test_allocations.TestCreate,
    test_allocations.TestBackfill,
    test_allocations.TestReadUpdateDelete,
    test_allocation_concurrency.TestConcurrentHTTP,
    test_allocation_concurrency.TestTakeOverHTTP,
    conductor_tests.TestCreateAllocation,
    conductor_tests.TestConcurrency,
    conductor_tests.TestResumeAndTakeOver,
])

# Allocation groups: one claim for every node of a group.
_scenarios(globals(), [
    test_allocation_groups.TestCreate,
    test_allocation_groups.TestListShowDelete,
    conductor_group_tests.TestGroupRaces,
    conductor_group_tests.TestConductorKilled,
], prefix='Group')
