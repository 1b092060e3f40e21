"""``alloc-conductor``: run a conductor.

The conductor is named ``[DEFAULT]host`` and serves RPC over
``[DEFAULT]rpc_transport``; with several processes that is ``oslo``
(oslo.messaging over ``[DEFAULT]transport_url``). The database schema must
exist (``alloc-manage db sync``).
"""

import sys

from oslo_log import log

from alloc_framework.api.placement import direct as placement_direct
from alloc_framework.cmd import service_setup
from alloc_framework.conductor import service as conductor_service
from alloc_framework.db import api as db_api

LOG = log.getLogger(__name__)


def main(argv=None):
    conf = service_setup.prepare_service(argv)
    if conf.rpc_transport == 'local':
        LOG.warning('rpc_transport is "local": only services in this '
                    'process can reach this conductor; use "oslo" with a '
                    'separate alloc-api')
    return service_setup.serve(conf, build_service)


def build_service(conf):
    """The conductor service over ``conf`` (not started)."""
    # With [placement] naming no remote Placement, the placement backend
    # serves our Placement application in this process, on the same
    # database.
    conductor = conductor_service.ConductorService(
        conf.host, conf,
        in_process_placement=placement_direct.InProcessPlacement(conf))
    conductor.check_config()
    # Last: a registration is only released by the process that stops it.
    conductor.register()
    # Before serving, here: a reshape that fails stops the command.
    conductor.start_backend()
    # The launcher serves from a child process: connections opened here
    # must not be shared with it.
    db_api.get_engine().dispose()
    return conductor


if __name__ == '__main__':
    sys.exit(main())
