"""Process set-up shared by every console script and the WSGI entry points.

Parsing the command line, logging, the database, and running a service
until it stops: the top floor's work, which reaches into every floor
below (the API's credentials file, the database), so it lives with the
console scripts rather than in ``common/``.
"""

import sys

from oslo_log import log
from oslo_service import backend as _service_backend
from oslo_service import service

from alloc_framework.api import http_basic
from alloc_framework.common import exception
from alloc_framework.common import wsgi_service
from alloc_framework import conf as af_conf
from alloc_framework.db import api as db_api
from alloc_framework import version

LOG = log.getLogger(__name__)

# A configuration that can never serve: building the service raises one of
# these in the launching process, and the command stops with its message
# (the launcher would start a failing child process again and again).
FATAL_ERRORS = (wsgi_service.ListenError, exception.DriverLoadError,
                http_basic.HtpasswdError,
                exception.ConductorAlreadyRegistered)


def prepare_service(argv=None, conf=None, default_config_files=None):
    """Parse the command line, set up logging and the database."""
    if _service_backend.get_backend_type() != (
            _service_backend.BackendType.THREADING):
        raise RuntimeError('alloc_framework services run on oslo.service\'s '
                           'threading backend only; import alloc_framework '
                           'before anything selects another backend')
    conf = conf or af_conf.CONF
    argv = sys.argv[1:] if argv is None else argv
    log.register_options(conf)
    conf(argv, project='alloc_framework',
         version=version.version_info.version_string(),
         default_config_files=default_config_files)
    log.setup(conf, 'alloc_framework')
    db_api.configure(conf)
    return conf


def serve(conf, build_service, workers=1):
    """Build a console script's service and run it until it is stopped.

    :param build_service: ``build_service(conf)`` -> the service to run.
    :param workers: processes to run it in.
    :returns: the exit status: 1 on a configuration that can never
        serve (one of ``FATAL_ERRORS``, logged), else the launcher's.
    """
    try:
        services = build_service(conf)
    except FATAL_ERRORS as exc:
        LOG.error('%s', exc)
        return 1
    launcher = service.launch(conf, services, restart_method='mutate',
                              workers=workers)
    return launcher.wait() or 0
