"""``alloc baremetal action list|show`` against the bare metal API."""

from alloc_framework.common import context as af_context
from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import deferred_action as da
from tests.functional.cli import base


class TestActionCommands(base.BaremetalCLITestCase):

    def configure(self):
        super().configure()
        # The actions are looked at, not run: a launcher run during the
        # test (its first comes a second after the conductor starts)
        # would fail them, their calls being no deferrable method.
        self.config(launcher_interval=0, group='deferred_actions')

    def setUp(self):
        super().setUp()
        ctx = af_context.get_admin_context()
        node = self.alloc('baremetal', 'node', 'create', '--driver',
                          'fake-hardware', '--name', 'n1')
        self.node_uuid = node['uuid']
        node_id = objects.Node.get_by_uuid(ctx, node['uuid']).id
        self.actions = []
        for _ in range(3):
            action = objects.DeferredAction.new(
                ctx, node_id, 'task.driver.power.poll',
                arguments={'step': 2}, retries=1)
            action.create()
            self.actions.append(action)
        self.actions[2].transition(da.RUNNING)

    def test_list_and_show(self):
        listed = self.alloc('baremetal', 'action', 'list')
        self.assertEqual([a.uuid for a in self.actions],
                         [i['uuid'] for i in listed])
        self.assertEqual({'uuid', 'node_uuid', 'state', 'call',
                          'start_after', 'retry_remaining'}, set(listed[0]))
        self.assertEqual(self.node_uuid, listed[0]['node_uuid'])
        running = self.alloc('baremetal', 'action', 'list', '--state',
                             'RUNNING', '--node', 'n1', '--long')
        self.assertEqual([self.actions[2].uuid],
                         [i['uuid'] for i in running])
        self.assertEqual({'step': 2}, running[0]['arguments'])
        self.assertEqual(2, len(self.alloc('baremetal', 'action', 'list',
                                           '--limit', '2')))
        shown = self.alloc('baremetal', 'action', 'show',
                           self.actions[0].uuid)
        self.assertEqual('CREATED', shown['state'])
        self.assertEqual(1, shown['retry_remaining'])
        self.assertEqual('task.driver.power.poll', shown['call'])

    def test_state_filter_in_any_case(self):
        for state in ('running', 'Running', 'RUNNING'):
            listed = self.alloc('baremetal', 'action', 'list', '--state',
                                state)
            self.assertEqual([self.actions[2].uuid],
                             [i['uuid'] for i in listed], state)

    def test_node_and_allocation_state_filters_in_any_case(self):
        self.assertEqual(['n1'], [n['name'] for n in self.alloc(
            'baremetal', 'node', 'list', '--provision-state', 'ENROLL')])
        self.assertEqual([], self.alloc('baremetal', 'allocation', 'list',
                                        '--state', 'ACTIVE'))

    def test_unknown_action(self):
        result = self.alloc('baremetal', 'action', 'show',
                            'c0ffee00-0000-0000-0000-000000000000',
                            expect=1)
        self.assertIn('baremetal.deferred_action_not_found', result.err)
