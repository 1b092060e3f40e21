"""``alloc-server``: everything in one process, the embedded default.

Runs the bare metal API (``[api]host_ip``:``port``), the Placement API
(``[placement_api]host_ip``:``port``) and one conductor reached through
the ``local`` RPC transport. With the embedded SQLite database (the
default, under ``[DEFAULT]state_path``) the schema is created or upgraded
at start, so a fresh ``alloc-server`` with no configuration at all
serves. SIGTERM or SIGINT stops it cleanly.
"""

import sys

from oslo_log import log
from oslo_service import service

from alloc_framework.common import service_setup
from alloc_framework.common import wsgi_service
from alloc_framework.conductor import service as conductor_service
from alloc_framework.db import api as db_api
from alloc_framework.db import migration

LOG = log.getLogger(__name__)


def is_embedded_db(conf):
    """True when the database is a local SQLite file (or memory)."""
    return conf.database.connection.startswith('sqlite')


def build_service(conf):
    """The grouped services of the all-in-one server (not started)."""
    if conf.rpc_transport != 'local':
        LOG.info('rpc_transport is "%s": the conductor of this process '
                 'also serves other API processes', conf.rpc_transport)
    if is_embedded_db(conf):
        LOG.info('Embedded SQLite database: upgrading its schema')
        migration.upgrade('head')
    # Imported here so that a missing or broken API stops this command
    # only, with a clear error.
    from alloc_framework.api.baremetal import app as bm_app
    from alloc_framework.api.placement import deploy as placement_deploy
    services = [
        # The conductor first: the APIs route requests to it.
        conductor_service.ConductorService(conf.host, conf),
        wsgi_service.WSGIService('alloc-api', bm_app.setup_app(conf),
                                 conf.api.host_ip, conf.api.port,
                                 workers=conf.api.api_workers),
        wsgi_service.WSGIService('alloc-placement-api',
                                 placement_deploy.loadapp(conf),
                                 conf.placement_api.host_ip,
                                 conf.placement_api.port,
                                 workers=conf.placement_api.api_workers),
    ]
    # The launcher runs the group in a child process: connections opened
    # here must not be shared with it.
    db_api.get_engine().dispose()
    return conductor_service.ServiceGroup(services)


def main(argv=None):
    conf = service_setup.prepare_service(argv)
    try:
        services = build_service(conf)
    except wsgi_service.ListenError as exc:
        LOG.error('%s', exc)
        return 1
    launcher = service.launch(conf, services, restart_method='mutate')
    return launcher.wait() or 0


if __name__ == '__main__':
    sys.exit(main())
