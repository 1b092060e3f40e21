"""Options of the [healthcheck] group: ``GET /healthcheck`` on both APIs.

The group is oslo.middleware's: its healthcheck middleware reads
``detailed``, ``backends``, ``allowed_source_ranges``,
``ignore_proxied_requests`` and the options of its backends
(``disable_by_file_path`` of ``disable_by_file``, the one operators use
to drain a server; ``disable_by_file_paths`` of ``disable_by_files_ports``;
``enable_by_file_paths`` of ``enable_by_files``). They are listed here so
that the sample configuration shows them and the configuration is
complete before the middleware is built. ``enabled`` is ours, as in the
upstream bare metal service, which also keeps it in this group.
"""

from oslo_config import cfg
from oslo_middleware.healthcheck import opts as healthcheck_opts

GROUP = 'healthcheck'

opts = [
    cfg.BoolOpt('enabled',
                default=True,
                help='Answer ``GET /healthcheck`` on the bare metal and '
                     'Placement APIs without authentication: 200 ``OK`` '
                     'while the service is healthy, 503 when a backend '
                     'says it is not (with ``backends = disable_by_file``, '
                     'while the file ``disable_by_file_path`` exists: '
                     'create it to drain the server from a load balancer). '
                     'The answer says nothing more unless ``detailed`` is '
                     'true. Disabled, the path is an ordinary request of '
                     'the API (404 or 401).'),
] + (healthcheck_opts.HEALTHCHECK_OPTS
     + healthcheck_opts.DISABLE_BY_FILE_OPTS
     + healthcheck_opts.DISABLE_BY_FILES_OPTS
     + healthcheck_opts.ENABLE_BY_FILES_OPTS)


def register_opts(conf):
    conf.register_opts(opts, group=GROUP)
