"""The fake power interface as a stand-in BMC for the power state sync."""

import types

from alloc_framework.common import exception
from alloc_framework.common import states
from alloc_framework.drivers.modules import fake
from tests import base

ON, OFF = states.POWER_ON, states.POWER_OFF


def _task(power_state=OFF, driver_info=None, internal=None):
    node = types.SimpleNamespace(
        uuid='1be26c0b-03f2-4d2e-ae87-c02d7f33c123',
        power_state=power_state, driver_info=driver_info or {},
        driver_internal_info=internal)
    return types.SimpleNamespace(node=node)


class FakePowerTestCase(base.TestCase):

    dialect_neutral = True

    def setUp(self):
        super().setUp()
        self.power = fake.FakePower()

    def test_reports_the_record_by_default(self):
        self.assertEqual(ON, self.power.get_power_state(_task(ON)))
        self.assertEqual(OFF, self.power.get_power_state(_task(None)))

    def test_reports_the_bmc_state_when_set(self):
        task = _task(OFF, internal={fake.BMC_POWER_STATE: ON})
        self.assertEqual(ON, self.power.get_power_state(task))

    def test_power_action_ends_the_bmc_state(self):
        for act in (lambda t: self.power.set_power_state(t, OFF),
                    self.power.reboot):
            task = _task(OFF, internal={fake.BMC_POWER_STATE: ON, 'x': 1})
            act(task)
            self.assertNotIn(fake.BMC_POWER_STATE,
                             task.node.driver_internal_info)
            self.assertEqual(1, task.node.driver_internal_info['x'])
            self.assertEqual(task.node.power_state,
                             self.power.get_power_state(task))

    def test_failing_action_keeps_the_bmc_state(self):
        task = _task(OFF, driver_info={'fake_fail_power': True},
                     internal={fake.BMC_POWER_STATE: ON})
        self.assertRaises(exception.PowerStateFailure,
                          self.power.set_power_state, task, OFF)
        self.assertEqual(ON, self.power.get_power_state(task))

    def test_read_failure(self):
        task = _task(ON, driver_info={'fake_fail_power_read': True})
        exc = self.assertRaises(exception.PowerStateFailure,
                                self.power.get_power_state, task)
        self.assertIn('does not answer', str(exc))
        # Only reading fails: power actions still work.
        self.power.set_power_state(task, OFF)
        self.assertEqual(OFF, task.node.power_state)

    def test_properties_name_the_keys(self):
        self.assertEqual({'fake_fail_power', 'fake_fail_power_read'},
                         set(self.power.get_properties()))
