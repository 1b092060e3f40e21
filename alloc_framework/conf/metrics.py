"""Options of the [metrics] group: where conductors send their metrics."""

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
]


def register_opts(conf):
    conf.register_opts(opts, group='metrics')
