"""Options of the [metrics] group.

Two kinds of metrics: those conductors send (``backend``, ``prefix``,
``statsd_*``), and the Prometheus endpoint ``GET /metrics`` of both APIs
(``prometheus_*``; see ``doc/source/metrics.rst``).
"""

from oslo_config import cfg

opts = [
    cfg.StrOpt('backend',
               default='noop',
               help='The metrics emitter: an entry point of the '
                    '``alloc_framework.metrics.emitters`` namespace. '
                    '``noop`` sends nothing; ``statsd`` sends gauges and '
                    'timers to a statsd daemon over UDP.'),
    cfg.StrOpt('prefix',
               default='alloc_framework',
               help='Prefix of every metric name.'),
    cfg.HostAddressOpt('statsd_host',
                       default='localhost',
                       help='Host of the statsd daemon (``statsd``).'),
    cfg.PortOpt('statsd_port',
                default=8125,
                help='UDP port of the statsd daemon (``statsd``).'),
    cfg.BoolOpt('prometheus_enabled',
                default=True,
                help='Serve ``GET /metrics`` on the bare metal API and the '
                     'Placement API: Prometheus metrics in the text '
                     'exposition format, with request latency histograms '
                     'and gauges computed from the database at each '
                     'scrape. When false, requests are not timed and '
                     '/metrics answers 404.'),
    cfg.BoolOpt('prometheus_allow_unauthenticated',
                default=False,
                help='Answer ``GET /metrics`` without authentication or '
                     'policy check, for scrapers on a private network '
                     'that cannot present the credentials the API asks '
                     'for (a Keystone token, for instance). When false, '
                     '/metrics needs the configured authentication and '
                     'passes the admin-only policy rule '
                     '``placement:metrics`` or ``baremetal:metrics:get``.'),
    cfg.StrOpt('prometheus_multiproc_dir',
               help='A directory private to one service where the serving '
                    'processes of an API keep their latency histograms '
                    '(prometheus-client\'s multiprocess mode), so that a '
                    'scrape, whichever process answers it, reports the '
                    'requests of all of them. It is created if missing and '
                    'emptied when alloc-server, alloc-api or '
                    'alloc-placement-api start, so give each service its '
                    'own. When unset (and the PROMETHEUS_MULTIPROC_DIR '
                    'environment variable too), alloc-server and '
                    'alloc-placement-api running several processes '
                    '([DEFAULT]server_workers, [placement_api]processes) '
                    'use ``prometheus/<command>-<host>`` under '
                    '[DEFAULT]state_path, and a single process keeps its '
                    'histograms in memory. Set it (or the environment '
                    'variable) when a WSGI server runs several processes '
                    'of an application.'),
]


def register_opts(conf):
    conf.register_opts(opts, group='metrics')
