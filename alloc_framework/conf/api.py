"""Options of the [api] group: the bare metal API endpoint."""

from oslo_config import cfg

opts = [
    cfg.HostAddressOpt('host_ip',
                       default='127.0.0.1',
                       help='The IP address or host name on which the bare '
                            'metal API listens.'),
    cfg.PortOpt('port',
                default=6385,
                help='The TCP port on which the bare metal API listens.'),
    cfg.IntOpt('max_limit',
               default=1000,
               min=1,
               help='The maximum number of items returned in a single '
                    'response from a collection resource.'),
    cfg.StrOpt('public_endpoint',
               help='Public URL to use in links of API responses. When '
                    'unset, the URL of the request is used.'),
    cfg.IntOpt('api_workers',
               min=1,
               default=2,
               help='Number of threads serving bare metal API requests in '
                    'each API process. Python runs one thread of a '
                    'process at a time: more threads only help requests '
                    'that wait (on the database, on Keystone), and under '
                    'load each one adds CPU spent handing the interpreter '
                    'lock around. Use more processes for more cores '
                    '([DEFAULT]server_workers of alloc-server).'),
]


def register_opts(conf):
    conf.register_opts(opts, group='api')
