"""``alloc-api``: serve the bare metal API.

Serves the bare metal API on ``[api]host_ip``:``[api]port`` with
``[api]api_workers`` threads. It reaches conductors over
``[DEFAULT]rpc_transport``, which must be ``oslo`` unless a conductor runs
in the same process (that is ``alloc-server``).
"""

import sys

from oslo_log import log

from alloc_framework.api.baremetal import app
from alloc_framework.api import prometheus
from alloc_framework.cmd import service_setup
from alloc_framework.common import wsgi_service
from alloc_framework.conductor import rpcapi
from alloc_framework.db import api as db_api

LOG = log.getLogger(__name__)


def build_service(conf):
    """The WSGIService of the bare metal API over ``conf`` (not started)."""
    # Conductors are reached lazily, at the first request that needs one:
    # an unknown transport must stop the command now instead.
    rpcapi.load_transport(conf)
    prometheus.setup_process(conf)
    server = wsgi_service.WSGIService.from_conf(
        'alloc-api', app.setup_app(conf), conf, 'api')
    # The launcher serves from a child process: connections opened here
    # must not be shared with it.
    db_api.get_engine().dispose()
    return server


def check_transport(conf, server='alloc-api'):
    """Check ``[DEFAULT]rpc_transport`` for an API without a conductor.

    Also used by the WSGI entry point (``server`` names it in the
    warning).

    :raises: ValueError for transport options that can never work.
    """
    if conf.rpc_transport == 'local':
        LOG.warning('rpc_transport is "local" but no conductor runs in '
                    '%s: requests that need a conductor will fail '
                    'with 503; use "oslo", or alloc-server', server)
    elif conf.rpc_transport == 'oslo':
        # The transport is loaded at the first request: refuse its
        # options now rather than answer every request 500.
        from alloc_framework.conductor import rpc_oslo
        rpc_oslo.check_options(conf)


def main(argv=None):
    conf = service_setup.prepare_service(argv)
    try:
        check_transport(conf)
    except ValueError as exc:
        LOG.error('%s', exc)
        return 1
    return service_setup.serve(conf, build_service)


if __name__ == '__main__':
    sys.exit(main())
