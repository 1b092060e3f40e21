"""Options of the [placement_api] group: the Placement API endpoint."""

from oslo_config import cfg

from alloc_framework.conf import opt_types

opts = [
    cfg.HostAddressOpt('host_ip',
                       default='127.0.0.1',
                       help='The IP address or host name on which the '
                            'Placement API listens.'),
    cfg.PortOpt('port',
                default=8778,
                help='The TCP port on which the Placement API listens.'),
    cfg.StrOpt('auth_strategy',
               choices=[('noauth', 'Upstream Placement\'s noauth '
                         'conventions: x-auth-token names the user; no '
                         'authentication.'),
                        ('http_basic', 'HTTP basic authentication against '
                         'the htpasswd file named by [DEFAULT]http_basic_'
                         'auth_user_file; every user has the admin role.'),
                        ('keystone', 'Keystone tokens through '
                         'keystonemiddleware.')],
               help='How Placement API requests are authenticated. When '
                    'unset, [DEFAULT]auth_strategy is used.'),
    cfg.ListOpt('noauth_admin_tokens',
                default=['admin', 'notused'],
                help='With noauth, the x-auth-token values (the user part '
                     'of ``user[:project]``) that carry the admin role. '
                     '``admin`` is upstream Placement\'s convention; '
                     '``notused`` is the token keystoneauth\'s ``none`` '
                     'plugin sends, so that clients configured without '
                     'authentication (``--os-auth-type none``) work against '
                     'the embedded default. Set to ``admin`` alone for '
                     'upstream\'s exact behaviour.'),
    cfg.IntOpt('processes',
               min=1,
               default=1,
               help='Number of alloc-placement-api processes. They listen '
                    'on the same port (SO_REUSEPORT) and the kernel '
                    'spreads new connections over them; each one runs '
                    '[placement_api]api_workers requests at a time. Python '
                    'runs one thread of a process at a time, so a process '
                    'uses about one CPU core: set this to the number of '
                    'cores the service may use. When a process dies, the '
                    'launcher starts another. alloc-server ignores this '
                    'option (see [DEFAULT]server_workers).'),
    cfg.IntOpt('api_workers',
               min=1,
               default=8,
               help='Number of Placement API requests that each process '
                    'runs at a time (reading requests from and writing '
                    'responses to clients is done by '
                    '[placement_api]connection_threads).'),
    cfg.IntOpt('connection_threads',
               min=1,
               default=64,
               help='Number of threads of each Placement API process that '
                    'read requests from clients and write responses. A '
                    'client sending its request holds one until the whole '
                    'request has arrived, at most '
                    '[placement_api]request_read_deadline seconds; an idle '
                    'connection holds none. Complete requests then wait '
                    'for one of the [placement_api]api_workers slots.'),
    opt_types.FloatOpt(
        'request_read_deadline',
        min=0.1,
        default=30,
        help='Seconds within which the request line, the headers '
             'and the body of a Placement API request must have '
             'arrived, counted from its first byte. A client that '
             'is slower gets 408 Request Timeout and its '
             'connection is closed, so that slow clients cannot '
             'hold the connection threads.'),
    opt_types.FloatOpt(
        'policy_cache_seconds',
        min=0,
        default=1.0,
        help='Seconds for which each Placement API process keeps '
             'the policy decisions it took: the same rule asked '
             'with the same credentials on the same target is '
             'answered from memory meanwhile instead of by '
             'oslo.policy, which looks for the policy file and '
             'inspects each check on every call. A changed '
             'policy file (or [oslo_policy]policy_dirs) applies '
             'to every request at most this many seconds after '
             'it was written, and a check that asks another '
             'service (``http:``) is asked again at most this '
             'often for the same credentials. 0 consults '
             'oslo.policy on every request.'),
]


def register_opts(conf):
    conf.register_opts(opts, group='placement_api')
