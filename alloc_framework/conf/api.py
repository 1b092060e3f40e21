"""Options of the [api] group: the bare metal API endpoint."""

from oslo_config import cfg

from alloc_framework.conf import opt_types

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
               help='Number of bare metal API requests that each API '
                    'process runs at a time (reading requests from and '
                    'writing responses to clients is done by '
                    '[api]connection_threads). Python runs one thread of a '
                    'process at a time: more threads only help requests '
                    'that wait (on the database, on Keystone), and under '
                    'load each one adds CPU spent handing the interpreter '
                    'lock around. Use more processes for more cores '
                    '([DEFAULT]server_workers of alloc-server).'),
    cfg.IntOpt('connection_threads',
               min=1,
               default=64,
               help='Number of threads of each bare metal API process that '
                    'read requests from clients and write responses. A '
                    'client sending its request holds one until the whole '
                    'request has arrived, at most '
                    '[api]request_read_deadline seconds; an idle '
                    'connection holds none. Complete requests then wait '
                    'for one of the [api]api_workers slots.'),
    opt_types.FloatOpt(
        'request_read_deadline',
        min=0.1,
        default=30,
        help='Seconds within which the request line, the headers '
             'and the body of a bare metal API request must have '
             'arrived, counted from its first byte. A client that '
             'is slower gets 408 Request Timeout and its '
             'connection is closed, so that slow clients cannot '
             'hold the connection threads.'),
]


def register_opts(conf):
    conf.register_opts(opts, group='api')
