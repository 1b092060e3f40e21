"""The deallocation rule and the free-node rule, without a database."""

import types

from alloc_framework.common import exception
from alloc_framework.common import states
from alloc_framework.objects.baremetal import node_reservation
from tests import base


def _node(provision_state, target=None, maintenance=False):
    return types.SimpleNamespace(
        uuid='node-1', provision_state=provision_state,
        target_provision_state=target, maintenance=maintenance)


class DeallocationRuleTestCase(base.TestCase):

    def _allowed(self, node):
        try:
            node_reservation.verify_node_for_deallocation(node, 'alloc-1')
        except exception.NodeIsAllocated as exc:
            self.assertEqual(409, exc.code)
            self.assertIn('node-1', str(exc))
            self.assertIn('alloc-1', str(exc))
            return False
        return True

    def test_active_refused(self):
        self.assertFalse(self._allowed(_node(states.ACTIVE)))

    def test_states_where_nothing_runs_allowed(self):
        for state in (states.AVAILABLE, states.MANAGEABLE, states.ENROLL,
                      states.ERROR, states.DEPLOYFAIL, states.CLEANFAIL,
                      states.SERVICEFAIL):
            self.assertTrue(self._allowed(_node(state)), state)
            self.assertTrue(self._allowed(_node(state, states.ACTIVE)),
                            state)

    def test_running_or_waiting_flows_refused(self):
        for state, target in ((states.DEPLOYING, states.ACTIVE),
                              (states.DEPLOYWAIT, states.ACTIVE),
                              (states.DELETING, states.AVAILABLE),
                              (states.CLEANING, states.AVAILABLE),
                              (states.SERVICING, states.ACTIVE),
                              (states.SERVICEWAIT, states.ACTIVE)):
            self.assertFalse(self._allowed(_node(state, target)), state)
            # A lost target does not make a running flow stop.
            self.assertFalse(self._allowed(_node(state)), state)

    def test_maintenance_always_allowed(self):
        for state in states.ALL_STATES + (states.RESCUE, None):
            self.assertTrue(self._allowed(_node(state, maintenance=True)),
                            state)


class FreeNodeRuleTestCase(base.TestCase):

    def _node(self, **kw):
        values = {'provision_state': states.AVAILABLE,
                  'instance_uuid': None, 'maintenance': False,
                  'power_state': states.POWER_OFF}
        values.update(kw)
        return types.SimpleNamespace(**values)

    def test_free(self):
        self.assertTrue(node_reservation.node_is_free(self._node()))

    def test_each_condition_excludes(self):
        for kw in ({'provision_state': states.ACTIVE},
                   {'provision_state': None},
                   {'instance_uuid': 'instance-1'},
                   {'maintenance': True},
                   {'maintenance': None},
                   {'power_state': None}):
            self.assertFalse(node_reservation.node_is_free(self._node(**kw)),
                             kw)

    def test_sql_names_every_column_of_the_rule(self):
        conds = node_reservation.free_node_conditions()
        self.assertEqual(len(node_reservation.FREE_NODE), len(conds))
        for (name, _wanted), cond in zip(node_reservation.FREE_NODE, conds):
            self.assertIn(name, str(cond))
