"""A conductor in a process of its own, whose deferred action hangs.

Run as ``python -m tests.functional.conductor.deferred_process CONFIG``:
the conductor of ``[DEFAULT]host`` starts on the configured database
with a ``fake`` power interface whose deferrable ``flash`` method
creates the file named by its ``marker`` argument and then never
returns, as a worker stuck on a BMC would. Tests kill the process
(SIGKILL) once the file exists: the action is RUNNING on a dead
conductor.
"""

import os
import sys
import threading

from alloc_framework.cmd import service_setup
from alloc_framework.conductor import manager as manager_mod
from alloc_framework.drivers import deferred
from alloc_framework.drivers import driver_factory
from alloc_framework.drivers.modules import fake


class HangingPower(fake.FakePower):

    @deferred.deferrable
    def flash(self, task, marker):
        with open(marker + '.tmp', 'w') as f:
            f.write(task.node.uuid)
        os.rename(marker + '.tmp', marker)
        # Stuck until the process is killed.
        threading.Event().wait()


def main(argv):
    conf = service_setup.prepare_service(argv)
    factory = driver_factory.DriverFactory(conf)
    factory.interfaces['power']['fake'] = HangingPower()
    manager = manager_mod.ConductorManager(conf.host, conf,
                                           driver_factory=factory)
    manager.init_host()
    threading.Event().wait()


if __name__ == '__main__':
    main(sys.argv[1:])
