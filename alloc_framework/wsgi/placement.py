"""The Placement API for WSGI servers: ``alloc_framework.wsgi.placement``.

For example ``gunicorn -w 4 --threads 8 -b 0.0.0.0:8778
alloc_framework.wsgi.placement:application``. Loading the module parses the
configuration (``ALLOC_CONFIG_FILE``), sets up logging and the database,
syncs standard resource classes and traits and builds the application;
the database schema must exist (``alloc-manage db sync``).
"""

import threading

from alloc_framework.api.placement import deploy
from alloc_framework.cmd import service_setup
from alloc_framework import wsgi

_LOCK = threading.Lock()
_APP = None


def init_application():
    """Build the application once per process."""
    global _APP
    with _LOCK:
        if _APP is None:
            conf = service_setup.prepare_service(
                [], default_config_files=wsgi.config_files())
            _APP = deploy.loadapp(conf)
    return _APP


def application(environ, start_response):
    """The WSGI callable; the application is built on first use."""
    return init_application()(environ, start_response)
