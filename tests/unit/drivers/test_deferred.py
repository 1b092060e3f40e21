"""Resolving the call of a deferred action to a deferrable method."""

import types

from alloc_framework.drivers import deferred
from alloc_framework.common import exception
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
