"""``alloc-server``: everything in one process, the embedded default.

Runs the bare metal API (``[api]host_ip``:``port``), the Placement API
(``[placement_api]host_ip``:``port``) and one conductor reached through
the ``local`` RPC transport. With the embedded SQLite database (the
default, under ``[DEFAULT]state_path``) the schema is created or upgraded
at start, so a fresh ``alloc-server`` with no configuration at all
serves. SIGTERM or SIGINT stops it cleanly.

It runs ``[DEFAULT]server_workers`` such processes (unset: one per CPU,
at most four, with a database server; one with SQLite; see
:func:`worker_count`), sharing the API ports; with more than one, each
one's conductor is named ``<host>-<n>``.
"""

import os
import sys

import fasteners
from oslo_log import log
import sqlalchemy as sa

from alloc_framework.api.baremetal import app as bm_app
from alloc_framework.api.dashboard import app as dashboard_app
from alloc_framework.api.placement import deploy as placement_deploy
from alloc_framework.api.placement import direct as placement_direct
from alloc_framework.api import prometheus
from alloc_framework.cmd import service_setup
from alloc_framework.common import wsgi_service
from alloc_framework.conductor import service as conductor_service
from alloc_framework.db import api as db_api
from alloc_framework.db import migration

LOG = log.getLogger(__name__)

# Processes run when [DEFAULT]server_workers is unset, at most: each one
# holds a whole copy of the service (about 100 MiB).
MAX_DEFAULT_WORKERS = 4


def worker_count(conf):
    """How many alloc-server processes to run.

    ``[DEFAULT]server_workers`` when set. Unset, one per CPU this process
    may run on (its affinity, which a container's CPU set limits), at
    most :data:`MAX_DEFAULT_WORKERS`, since Python runs one thread at a
    time per process; but one on SQLite, where one writer at a time
    holds the database and more processes would only wait for each
    other.
    """
    if conf.server_workers is not None:
        return conf.server_workers
    try:
        backend = sa.engine.make_url(
            conf.database.connection).get_backend_name()
    except sa.exc.ArgumentError:
        # Not a database URL: the start refuses it with its own words.
        return 1
    if backend == 'sqlite':
        return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, MAX_DEFAULT_WORKERS))


class WorkerSlotError(Exception):
    """No free worker slot: more processes than ``[DEFAULT]server_workers``."""


def claim_worker_slot(conf, count):
    """Claim the lowest free worker number of this host, 0 to count - 1.

    A slot is an exclusive lock on a file under ``[DEFAULT]state_path``;
    the kernel releases it when the process ends, however it ends, so the
    process that replaces a dead one gets the same number (and with it the
    same conductor name, whose stale node locks it then clears).

    :returns: ``(number, lock)``; keep the lock for the process's life.
    :raises: WorkerSlotError
    """
    os.makedirs(conf.state_path, exist_ok=True)
    for number in range(count):
        lock = fasteners.InterProcessLock(os.path.join(
            conf.state_path, 'alloc-server-%s-worker-%d.lock'
            % (conf.host, number)))
        if lock.acquire(blocking=False):
            return number, lock
    raise WorkerSlotError('All %d worker slots of host %s are taken: is '
                          'another alloc-server running with the same '
                          '[DEFAULT]host and state_path?'
                          % (count, conf.host))


class WorkerGroup(conductor_service.ServiceGroup):
    """The all-in-one services of one of several alloc-server processes.

    At start, in its own process, it claims a worker number and names its
    conductor ``<host>-<number>``.
    """

    def __init__(self, services, conf, conductor, count):
        super().__init__(services)
        self.conf = conf
        self.conductor = conductor
        self.count = count
        self._slot_lock = None

    def start(self):
        number, self._slot_lock = claim_worker_slot(self.conf, self.count)
        self.conductor.rename('%s-%d' % (self.conf.host, number))
        LOG.info('alloc-server worker %(n)d of %(count)d (pid %(pid)d)',
                 {'n': number, 'count': self.count, 'pid': os.getpid()})
        super().start()

    def stop(self, graceful=True):
        try:
            super().stop(graceful)
        finally:
            if self._slot_lock is not None:
                self._slot_lock.release()
                self._slot_lock = None


def build_service(conf):
    """The grouped services of the all-in-one server (not started)."""
    if conf.rpc_transport != 'local':
        LOG.info('rpc_transport is "%s": the conductor of this process '
                 'also serves other API processes', conf.rpc_transport)
    # The conductor's placement backend reaches the Placement of this
    # process, when [placement] names no other, through its in-process
    # client.
    conductor = conductor_service.ConductorService(
        conf.host, conf,
        in_process_placement=placement_direct.InProcessPlacement(conf))
    conductor.check_config()
    migration.upgrade_embedded(conf)
    count = worker_count(conf)
    prometheus.setup_process(conf, count)
    services = [
        # The conductor first: the APIs route requests to it.
        conductor,
        wsgi_service.WSGIService.from_conf(
            'alloc-api', bm_app.setup_app(conf), conf, 'api',
            reuse_port=count > 1),
        wsgi_service.WSGIService.from_conf(
            'alloc-placement-api', placement_deploy.loadapp(conf), conf,
            'placement_api', reuse_port=count > 1,
            announce=dashboard_app.announce(conf)),
    ]
    # Last: a registration is only released by the process that stops it.
    # Each worker process is the conductor of its number.
    hosts = (['%s-%d' % (conf.host, number) for number in range(count)]
             if count > 1 else None)
    conductor.register(hosts)
    # Before serving, here: a reshape that fails stops the command.
    conductor.start_backend(hosts)
    # The launcher runs the group in child processes: connections opened
    # here must not be shared with them.
    db_api.get_engine().dispose()
    if count > 1:
        return WorkerGroup(services, conf, conductor, count)
    return conductor_service.ServiceGroup(services)


def main(argv=None):
    conf = service_setup.prepare_service(argv)
    return service_setup.serve(conf, build_service,
                               workers=worker_count(conf))


if __name__ == '__main__':
    sys.exit(main())
