"""``alloc-placement-api``: serve the Placement API.

Serves ``deploy.loadapp`` with cheroot threads on
``[placement_api]host_ip``:``port``. With an SQLite database (the embedded
default) the schema is created or upgraded first, so a standalone service
needs no separate ``alloc-manage db sync``.

With ``[placement_api]processes`` above 1 it runs that many serving
processes, which share the port (SO_REUSEPORT).
"""

import sys

from oslo_log import log as logging

from alloc_framework.api.dashboard import app as dashboard_app
from alloc_framework.api.placement import deploy
from alloc_framework.api import prometheus
from alloc_framework.cmd import service_setup
from alloc_framework.common import wsgi_service
from alloc_framework.db import api as db_api
from alloc_framework.db import migration

LOG = logging.getLogger(__name__)


def build_service(conf):
    """The WSGIService of the Placement API over ``conf`` (not started)."""
    migration.upgrade_embedded(conf)
    prometheus.setup_process(conf, conf.placement_api.processes,
                             service='alloc-placement-api')
    app = deploy.loadapp(conf)
    # The launcher serves from a forked child: connections opened while
    # loading must not be shared with it.
    db_api.get_engine().dispose()
    return wsgi_service.WSGIService.from_conf(
        'alloc-placement-api', app, conf, 'placement_api',
        reuse_port=conf.placement_api.processes > 1,
        announce=dashboard_app.announce(conf))


def main(argv=None):
    conf = service_setup.prepare_service(argv)
    return service_setup.serve(conf, build_service,
                               workers=conf.placement_api.processes)


if __name__ == '__main__':
    sys.exit(main())
