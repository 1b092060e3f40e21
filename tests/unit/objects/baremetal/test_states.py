"""The provision state machine table."""

from alloc_framework.common import exception
from alloc_framework.common import states
from alloc_framework.objects import baremetal as objects
from tests import base

M = states.MACHINE


class StateMachineTestCase(base.TestCase):

    def _walk(self, state, *events):
        target = None
        path = []
        for event in events:
            state, target = M.process_event(state, event, target)
            path.append((state, target))
        return path

    def test_enroll_to_available(self):
        self.assertEqual(
            [(states.VERIFYING, states.MANAGEABLE),
             (states.MANAGEABLE, None),
             (states.CLEANING, states.AVAILABLE),
             (states.AVAILABLE, None)],
            self._walk(states.ENROLL, 'manage', 'done', 'provide', 'done'))

    def test_deploy_with_wait_and_undeploy(self):
        self.assertEqual(
            [(states.DEPLOYING, states.ACTIVE),
             (states.DEPLOYWAIT, states.ACTIVE),
             (states.DEPLOYING, states.ACTIVE),
             (states.ACTIVE, None),
             (states.DELETING, states.AVAILABLE),
             (states.CLEANING, states.AVAILABLE),
             (states.AVAILABLE, None)],
            self._walk(states.AVAILABLE, 'deploy', 'wait', 'resume', 'done',
                       'delete', 'done', 'done'))

    def test_manual_clean_returns_to_manageable(self):
        self.assertEqual(
            [(states.CLEANING, states.MANAGEABLE),
             (states.CLEANWAIT, states.MANAGEABLE),
             (states.CLEANING, states.MANAGEABLE),
             (states.MANAGEABLE, None)],
            self._walk(states.MANAGEABLE, 'clean', 'wait', 'resume',
                       'manage'))

    def test_failures_and_abort(self):
        self.assertEqual((states.DEPLOYFAIL, states.ACTIVE),
                         M.process_event(states.DEPLOYING, 'fail'))
        self.assertEqual((states.CLEANFAIL, states.MANAGEABLE),
                         M.process_event(states.CLEANWAIT, 'abort'))
        self.assertEqual((states.MANAGEABLE, None),
                         M.process_event(states.CLEANFAIL, 'manage'))
        self.assertEqual((states.DEPLOYING, states.ACTIVE),
                         M.process_event(states.DEPLOYFAIL, 'deploy'))

    def test_invalid(self):
        for state, event in ((states.ENROLL, 'provide'),
                             (states.AVAILABLE, 'delete'),
                             (states.ACTIVE, 'deploy'),
                             (states.MANAGEABLE, 'abort'),
                             (states.CLEANING, 'abort')):
            self.assertFalse(M.is_valid_event(state, event))
            exc = self.assertRaises(exception.InvalidStateRequested,
                                    M.process_event, state, event,
                                    node='n1', action=event)
            self.assertIn(state, str(exc))
            self.assertEqual(400, exc.code)

    def test_verbs(self):
        self.assertEqual('deploy', states.event_for_verb('active'))
        self.assertEqual('delete', states.event_for_verb('deleted'))
        self.assertEqual('delete', states.event_for_verb('undeploy'))
        self.assertRaises(exception.InvalidParameterValue,
                          states.event_for_verb, 'explode')

    def test_every_transition_lands_on_a_known_state(self):
        for (src, event), (dst, target) in states.TRANSITIONS.items():
            self.assertIn(src, states.ALL_STATES)
            self.assertIn(dst, states.ALL_STATES)
            if dst in states.STABLE_STATES:
                self.assertIsNone(target, (src, event))


class ExceptionTestCase(base.TestCase):

    def test_format_and_code(self):
        exc = exception.NodeLocked(node='n1', host='h1')
        self.assertEqual(409, exc.code)
        self.assertIn('n1', str(exc))
        self.assertIn('h1', str(exc))
        self.assertEqual('custom', str(exception.NodeNotFound('custom')))
        self.assertEqual(404, exception.DriverNotFound(driver_name='x').code)

    def test_bad_kwargs_do_not_raise(self):
        exc = exception.NodeLocked(wrong='x')
        self.assertEqual(exception.NodeLocked.msg_fmt, str(exc))


class NodeMoveTestCase(base.TestCase):
    """``Node.move_provision_state``: the one way a node's state moves."""

    def _node(self, state, target=None):
        return objects.Node(uuid='1be26c0b-03f2-4d2d-ae87-c02d7f3ba0ff',
                            provision_state=state,
                            target_provision_state=target)

    def test_moves_by_the_table(self):
        node = self._node(states.AVAILABLE)
        node.move_provision_state(states.DEPLOY)
        self.assertEqual((states.DEPLOYING, states.ACTIVE),
                         (node.provision_state, node.target_provision_state))
        node.move_provision_state(states.WAIT)
        self.assertEqual((states.DEPLOYWAIT, states.ACTIVE),
                         (node.provision_state, node.target_provision_state))

    def test_refuses_what_the_table_lacks(self):
        node = self._node(states.ACTIVE)
        self.assertRaises(exception.InvalidStateRequested,
                          node.move_provision_state, states.PROVIDE)
        self.assertEqual((states.ACTIVE, None),
                         (node.provision_state, node.target_provision_state))

    def test_revert_of_the_move_just_made(self):
        node = self._node(states.CLEANWAIT, states.MANAGEABLE)
        node.move_provision_state(states.RESUME)
        node.move_provision_state(
            states.RESUME, revert_to=(states.CLEANWAIT, states.MANAGEABLE))
        self.assertEqual((states.CLEANWAIT, states.MANAGEABLE),
                         (node.provision_state, node.target_provision_state))

    def test_revert_of_a_move_the_table_did_not_make(self):
        node = self._node(states.DEPLOYING, states.ACTIVE)
        self.assertRaises(exception.InvalidStateRequested,
                          node.move_provision_state, states.PROVIDE,
                          revert_to=(states.MANAGEABLE, None))
        self.assertEqual((states.DEPLOYING, states.ACTIVE),
                         (node.provision_state, node.target_provision_state))
