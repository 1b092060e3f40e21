"""Resolving the call of a deferred action to a deferrable method."""

import types

from alloc_framework.common import exception
from alloc_framework.drivers import deferred
from tests import base


class _Firmware:

    @deferred.deferrable
    def update(self, task, url):
        return url

    def erase(self, task):
        pass


def _task(driver=True):
    return types.SimpleNamespace(
        node=types.SimpleNamespace(driver='fake-hardware'),
        driver=types.SimpleNamespace(firmware=_Firmware()) if driver
        else None)


class TestResolve(base.TestCase):

    def test_deferrable_method(self):
        task = _task()
        method = deferred.resolve(task, 'task.driver.firmware.update')
        self.assertEqual('x', method(task, url='x'))
        self.assertTrue(deferred.is_deferrable(method))
        self.assertEqual('task.driver.firmware.update',
                         deferred.call_name('firmware', 'update'))

    def test_refused(self):
        for call in ('task.driver.firmware.erase',
                     'task.driver.firmware.missing',
                     'task.driver.bios.update',
                     'task.driver.firmware.__init__',
                     'task.driver.firmware',
                     'os.system',
                     None):
            self.assertRaises(exception.DeferredCallNotAllowed,
                              deferred.resolve, _task(), call)

    def test_no_driver(self):
        self.assertRaises(exception.DeferredCallNotAllowed,
                          deferred.resolve, _task(driver=False),
                          'task.driver.firmware.update')

    def test_reschedule(self):
        answer = deferred.Reschedule(delay=5, retries=2, step='poll')
        self.assertEqual((5, 2, {'step': 'poll'}),
                         (answer.delay, answer.retries, answer.arguments))


class TestRunStages(base.TestCase):
    """A resumable method declared as a table of stages."""

    def setUp(self):
        super().setUp()
        self.ran = []

        def stage(name, answer):
            def handler(arg):
                self.ran.append((name, arg))
                return answer
            return handler
        self.stages = {
            None: stage('start', deferred.Next('check')),
            'check': stage('check', deferred.Next('poll')),
            'poll': stage('poll', deferred.Reschedule(delay=5,
                                                      state='done')),
            'done': stage('done', {'finished': True}),
        }

    def test_goes_on_in_the_same_call_until_a_wait(self):
        answer = deferred.run_stages(self.stages, None, 'x')
        self.assertIsInstance(answer, deferred.Reschedule)
        self.assertEqual({'state': 'done'}, answer.arguments)
        self.assertEqual([('start', 'x'), ('check', 'x'), ('poll', 'x')],
                         self.ran)

    def test_resumes_at_the_stage_named_and_returns_the_result(self):
        self.assertEqual({'finished': True},
                         deferred.run_stages(self.stages, 'done', 'y'))
        self.assertEqual([('done', 'y')], self.ran)

    def test_unknown_stage_refused(self):
        exc = self.assertRaises(exception.InvalidParameterValue,
                                deferred.run_stages, self.stages, 'gone', 1)
        self.assertIn("'gone'", str(exc))
        self.assertEqual([], self.ran)
