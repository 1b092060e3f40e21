"""Process set-up shared by every console script and the WSGI entry points.

Parsing the command line, logging, the database, and running a service
until it stops: the top floor's work, which reaches into every floor
below (the API's credentials file, the database), so it lives with the
console scripts rather than in ``common/``.

An operator's mistake found here (a missing or unparsable configuration
file, an invalid value, an unknown option under ``strict_config``, a
database that stays unreachable or whose schema is behind, a directory
that cannot be written) stops the command with one line and status 1:
:func:`prepare_service` says it and raises ``SystemExit(1)``. Tracebacks
are for bugs.
"""

import gc
import glob
import os
import re
import sys
import time

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg
from oslo_db import exception as db_exc
from oslo_log import log
from oslo_service import backend as _service_backend
from oslo_service import service
import sqlalchemy as sa
import stevedore

from alloc_framework.api import http_basic
from alloc_framework.common import exception
from alloc_framework.common import wsgi_service
from alloc_framework import conf as af_conf
from alloc_framework.db import api as db_api
from alloc_framework.db import migration
from alloc_framework import version

LOG = log.getLogger(__name__)

# The ``oslo.config.opts`` namespaces whose options a configuration file
# may set: those of etc/oslo-config-generator/alloc_framework.conf, and
# the launcher's own. Options registered only when a library loads (the
# transport's, the auth middleware's) are known from here before that.
CONFIG_NAMESPACES = ('alloc_framework', 'oslo.db', 'oslo.log',
                     'oslo.messaging', 'oslo.middleware', 'oslo.policy',
                     'keystonemiddleware.auth_token', 'oslo.service.service')

# A configuration that can never serve: building the service raises one of
# these in the launching process, and the command stops with its message
# (the launcher would start a failing child process again and again).
FATAL_ERRORS = (wsgi_service.ListenError, exception.DriverLoadError,
                http_basic.HtpasswdError,
                exception.ConductorAlreadyRegistered,
                exception.ReshapeAtStartFailed)


class StartError(Exception):
    """An operator's mistake that stops the command: its one line."""


def prepare_service(argv=None, conf=None, default_config_files=None,
                    check_schema=True):
    """Parse and check the configuration, set up logging and the database.

    The configuration is checked before anything else happens (see
    :func:`check_config`); then the database must answer (see
    :func:`wait_for_database`).

    :param check_schema: whether a server database whose schema is not
        the newest stops the command (not for ``alloc-manage``).
    :raises: SystemExit(1) on an operator's mistake, said in one line.
    """
    if _service_backend.get_backend_type() != (
            _service_backend.BackendType.THREADING):
        raise RuntimeError('alloc_framework services run on oslo.service\'s '
                           'threading backend only; import alloc_framework '
                           'before anything selects another backend')
    conf = conf or af_conf.CONF
    argv = sys.argv[1:] if argv is None else argv
    log.register_options(conf)
    try:
        logging_ready = _prepare(conf, argv, default_config_files,
                                 check_schema)
    except StartError as exc:
        error, logging_ready = exc.args
    else:
        return conf
    # Outside the except clause: one line, without the exception text
    # that the log formatter would add there.
    if logging_ready:
        LOG.error('%s', error)
    else:
        print('ERROR: %s' % error, file=sys.stderr)
    raise SystemExit(1)


def _prepare(conf, argv, default_config_files, check_schema):
    """The steps of :func:`prepare_service`.

    :raises: StartError(message, whether logging is set up)
    """
    try:
        conf(argv, project='alloc_framework',
             version=version.version_info.version_string(),
             default_config_files=default_config_files)
    except cfg.ConfigFilesNotFoundError as exc:
        raise StartError('Configuration file not found or not readable: '
                         '%s' % ', '.join(exc.config_files), False)
    except cfg.Error as exc:
        raise StartError('Invalid configuration: %s' % _one_line(exc),
                         False)
    try:
        check_values(conf)
    except StartError as exc:
        raise StartError(exc.args[0], False)
    try:
        log.setup(conf, 'alloc_framework')
    except OSError as exc:
        raise StartError('Cannot set up logging: %s' % exc, False)
    try:
        unknown = unknown_options(conf)
        for item in unknown:
            LOG.warning('Unknown configuration %s: it is ignored', item)
        if unknown and conf.strict_config:
            raise StartError('Unknown configuration (%s) and [DEFAULT] '
                             'strict_config is true' % ', '.join(unknown))
        try:
            db_api.configure(conf)
        except OSError as exc:
            raise StartError('Cannot create the database directory: %s'
                             % exc)
        wait_for_database(conf)
        if check_schema:
            check_database_schema(conf)
    except StartError as exc:
        raise StartError(exc.args[0], True)
    return True


def _one_line(exc):
    return ' '.join(str(exc).split())


def check_values(conf):
    """Read every registered option once, so that a bad value stops now.

    oslo.config converts a value when it is first read: a non-integer
    port or an unknown ``auth_strategy`` would otherwise fail later,
    wherever it is read first.

    :raises: StartError naming the option and the value.
    """
    def fail(exc, name, group=None):
        # oslo.config's message names the value's location as a repr.
        text = _one_line(exc)
        path = re.search(r"detail='([^']*)'", text)
        raise StartError('Invalid value of [%s] %s%s: %s'
                         % (group or 'DEFAULT', name,
                            ' in %s' % path.group(1) if path else '',
                            text.split(' is not valid: ', 1)[-1]))
    for name in conf:
        try:
            value = conf[name]
        except (ValueError, cfg.Error) as exc:
            fail(exc, name)
        if isinstance(value, cfg.ConfigOpts.GroupAttr):
            for opt_name in value:
                try:
                    value[opt_name]
                except (ValueError, cfg.Error) as exc:
                    fail(exc, opt_name, name)


def _config_files(conf):
    files = list(conf.config_file or [])
    for directory in conf.config_dir or []:
        files.extend(sorted(glob.glob(os.path.join(directory, '*.conf'))))
    return files


def known_options():
    """``{group: {option names}}`` of every ``CONFIG_NAMESPACES`` option.

    Deprecated names count: oslo.config reads them (and warns).
    """
    known = {}
    manager = stevedore.NamedExtensionManager(
        'oslo.config.opts', names=CONFIG_NAMESPACES, invoke_on_load=True,
        on_load_failure_callback=lambda *args: None)
    for extension in manager:
        for group, opts in extension.obj:
            group = getattr(group, 'name', group) or 'DEFAULT'
            names = known.setdefault(group, set())
            for opt in opts:
                names.add(opt.dest)
                for old in opt.deprecated_opts:
                    names.add((old.name or opt.dest).replace('-', '_'))
                    if old.group:
                        known.setdefault(old.group, set()).add(
                            (old.name or opt.dest).replace('-', '_'))
    return known


def unknown_options(conf):
    """Sections and options of the configuration files that nothing reads.

    Known are the options of ``CONFIG_NAMESPACES``, those registered on
    ``conf``, and in a section with ``auth_type`` that keystoneauth
    plugin's options.

    The options registered on ``conf`` are checked first: they are most
    of any configuration file. Only when something is left are the
    libraries' option lists loaded (importing some of them, such as
    keystonemiddleware's, takes a good part of a second, which every
    command would otherwise pay at start).

    :returns: ``["[section]", "[section] option", ...]``, in file order.
    """
    registered = {}
    for name in conf:
        value = conf[name]
        if isinstance(value, cfg.ConfigOpts.GroupAttr):
            registered.setdefault(name, set()).update(value)
        else:
            registered.setdefault('DEFAULT', set()).add(name)
    files = []
    for path in _config_files(conf):
        sections = {}
        try:
            cfg.ConfigParser(path, sections).parse()
        except (OSError, cfg.ParseError):
            continue    # already said by oslo.config
        files.append((path, sections))
    unknown = _not_in(files, registered)
    if not unknown:
        return unknown
    known = known_options()
    for group, names in registered.items():
        known.setdefault(group, set()).update(names)
    return _not_in(files, known)


def _not_in(files, known):
    """What of ``[(path, {section: {option: values}})]`` ``known`` lacks."""
    unknown = []
    for path, sections in files:
        for section, options in sections.items():
            if section not in known:
                item = '[%s] in %s' % (section, path)
                if item not in unknown:
                    unknown.append(item)
                continue
            names = set(known[section])
            auth_type = options.get('auth_type')
            if auth_type:
                try:
                    names.update(opt.dest for opt in
                                 ks_loading.get_auth_plugin_conf_options(
                                     auth_type[-1]))
                except Exception:  # an unknown plugin: its own error later
                    pass
            for option in options:
                if option.replace('-', '_') not in names:
                    item = '[%s] %s in %s' % (section, option, path)
                    if item not in unknown:
                        unknown.append(item)
    return unknown


def wait_for_database(conf):
    """Connect to the database, retrying as ``[database]`` says.

    ``max_retries`` attempts after the first (-1: for ever), one log line
    each, ``retry_interval`` seconds apart.

    :raises: StartError when it never answers.
    """
    retries = conf.database.max_retries
    attempt = 0
    while True:
        try:
            with db_api.get_engine().connect() as connection:
                connection.exec_driver_sql('SELECT 1')
            return
        except (db_exc.DBError, sa.exc.OperationalError,
                sa.exc.InterfaceError) as exc:
            reason = _db_error(exc)
        if retries != -1 and attempt >= retries:
            raise StartError('Database unreachable after %d attempts: %s'
                             % (attempt + 1, reason))
        attempt += 1
        LOG.warning('Database unreachable (%(reason)s): next attempt '
                    '(%(n)d of %(of)s) in %(wait)s s',
                    {'reason': reason, 'n': attempt + 1,
                     'of': 'unlimited' if retries == -1 else retries + 1,
                     'wait': conf.database.retry_interval})
        # The main thread, before anything runs: nothing else waits.
        time.sleep(conf.database.retry_interval)


def _db_error(exc):
    """The driver's own first line of a connection error."""
    inner = getattr(exc, 'inner_exception', None) or exc
    inner = getattr(inner, 'orig', None) or inner
    text = str(inner).strip().splitlines()
    return text[0] if text else type(inner).__name__


def check_database_schema(conf):
    """Stop when a server database's schema is not the code's newest.

    The embedded SQLite database is left alone: the commands that create
    it upgrade it themselves.

    :raises: StartError naming the command to run.
    """
    if conf.database.connection.startswith('sqlite'):
        return
    current, head = migration.version(), migration.head()
    if current != head:
        raise StartError(
            'The database schema is at revision %s, this version needs %s: '
            'run "alloc-manage db sync" first' % (current or '(none)', head))


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
    except (db_exc.DBConnectionError, sa.exc.OperationalError) as exc:
        # The database went away after the start-time check.
        LOG.error('Database error: %s', _db_error(exc))
        return 1
    except PermissionError as exc:
        LOG.error('%s', exc)
        return 1
    # What loading made (modules, configuration, tables, compiled
    # statements) lives as long as the process: kept out of the cyclic
    # collector's passes, which otherwise walk all of it in each full
    # collection, tens of milliseconds that land on whichever request is
    # running; forked workers also keep sharing those pages.
    gc.collect()
    gc.freeze()
    launcher = service.launch(conf, services, restart_method='mutate',
                              workers=workers)
    return launcher.wait() or 0
