"""The bare metal API for WSGI servers: ``alloc_framework.wsgi.baremetal``.

For example ``gunicorn -w 4 --threads 8 -b 0.0.0.0:6385
alloc_framework.wsgi.baremetal:application``. Loading the application
parses the configuration (``ALLOC_CONFIG_FILE``), sets up logging and the
database, checks ``[DEFAULT]rpc_transport`` and builds the application,
as ``alloc-api`` does. No conductor runs in a WSGI server: the API
reaches those of ``alloc-conductor`` over ``rpc_transport = oslo``. The
database schema must exist (``alloc-manage db sync``).
"""

import threading

from alloc_framework.api.baremetal import app
from alloc_framework.cmd import api as api_cmd
from alloc_framework.cmd import service_setup
from alloc_framework.conductor import rpcapi
from alloc_framework import wsgi

_LOCK = threading.Lock()
_APP = None


def init_application():
    """Build the application once per process.

    :raises: DriverLoadError for an unknown transport; ValueError for
        transport options that can never work (the WSGI server logs the
        error and serves nothing).
    """
    global _APP
    with _LOCK:
        if _APP is None:
            conf = service_setup.prepare_service(
                [], default_config_files=wsgi.config_files())
            api_cmd.check_transport(conf, server='a WSGI server')
            # Conductors are reached lazily, at the first request that
            # needs one: an unknown transport must stop now instead.
            rpcapi.load_transport(conf)
            _APP = app.setup_app(conf)
    return _APP


def application(environ, start_response):
    """The WSGI callable; the application is built on first use."""
    return init_application()(environ, start_response)
