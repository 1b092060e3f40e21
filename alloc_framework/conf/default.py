"""Options of the [DEFAULT] group."""

import os
import socket

from oslo_config import cfg

opts = [
    cfg.StrOpt('host',
               default=socket.gethostname(),
               sample_default='localhost',
               help='Name of this node. It must be unique among the '
                    'conductors of a deployment: it identifies the conductor '
                    'in the hash ring, in node locks (``reservation``) and in '
                    'allocations (``conductor_affinity``).'),
    cfg.StrOpt('state_path',
               default=os.path.join(os.path.expanduser('~'), '.local',
                                    'share', 'alloc_framework'),
               sample_default='$HOME/.local/share/alloc_framework',
               help='Directory where the service keeps its state, such as '
                    'the embedded SQLite database.'),
    cfg.StrOpt('auth_strategy',
               default='noauth',
               choices=[('noauth', 'No authentication: every request is '
                         'trusted. The embedded default, for development '
                         'and standalone use on a trusted network.'),
                        ('http_basic', 'HTTP basic authentication against '
                         'the htpasswd file named by [DEFAULT]http_basic_'
                         'auth_user_file.'),
                        ('keystone', 'Keystone tokens through '
                         'keystonemiddleware ([keystone_authtoken]).')],
               help='How API requests are authenticated.'),
    cfg.StrOpt('http_basic_auth_user_file',
               default='/etc/alloc_framework/htpasswd',
               help='Path to an Apache htpasswd file (bcrypt entries, '
                    '``htpasswd -B``) used when auth_strategy is '
                    'http_basic, by both APIs. A file that cannot be read '
                    'or holds another kind of entry stops the service at '
                    'start; the file is read again when it changes, and '
                    'while it is unreadable or invalid the users read from '
                    'it before stay valid (an error is logged).'),
    cfg.IntOpt('http_basic_auth_cache_ttl',
               default=60,
               min=0,
               help='Seconds during which a successful http_basic check of '
                    'a user name and password is remembered (under a keyed '
                    'hash, in memory), so that a client sending the same '
                    'credentials again does not pay a bcrypt check each '
                    'time. A change of the htpasswd file forgets them all. '
                    '0 checks every request.'),
    cfg.IntOpt('server_workers',
               min=1,
               sample_default='<the CPUs, at most 4; 1 on SQLite>',
               help='Number of alloc-server processes. Each one serves '
                    'both APIs and runs a conductor, named '
                    '``<host>-<n>`` (n from 0) when there is more than '
                    'one; the processes share the API ports (SO_REUSEPORT) '
                    'and the kernel spreads connections over them. A '
                    'process restarted after a crash takes the name of the '
                    'one it replaces. Python runs one thread at a time per '
                    'process: more processes use more CPU cores. Unset, '
                    'one per CPU the process may run on, at most 4, with '
                    'PostgreSQL or MariaDB/MySQL, and 1 with SQLite (one '
                    'writer at a time: more processes would only wait for '
                    'each other). Only alloc-server reads this option.'),
    cfg.StrOpt('rpc_transport',
               default='local',
               help='How the API reaches conductors: an entry point of the '
                    '``alloc_framework.rpc.transports`` namespace. ``local`` '
                    'calls a conductor in the same process (the all-in-one '
                    'alloc-server); ``oslo`` uses oslo.messaging over '
                    '[DEFAULT]transport_url (for example RabbitMQ).'),
    cfg.IntOpt('rpc_failover_timeout',
               default=5,
               min=2,
               help='Seconds after which the API takes a conductor that '
                    'shows no sign of life for unresponsive: neither its '
                    'answer nor, while a call runs, the heartbeat that it '
                    'sends every half of this time came. A new allocation '
                    'is then sent to another live conductor (it is never '
                    'created twice), and requests about nodes that the '
                    'hash ring maps to that conductor answer 503 quickly '
                    'until the ring moves them to a live one. The API then '
                    'prefers other conductors for random choices until '
                    'the dead one must have left the ring '
                    '([conductor]heartbeat_timeout plus [conductor]'
                    'hash_ring_reset_interval). Must be smaller than '
                    '[DEFAULT]rpc_response_timeout, which still bounds a '
                    'call that keeps running. Used by the ``oslo`` '
                    'transport only: in-process calls cannot get lost.'),
    cfg.BoolOpt('strict_config',
                default=False,
                help='Refuse to start when the configuration files hold a '
                     'section or an option that no component knows (a '
                     'typo such as ``auth_stratgy`` or ``[databse]`` '
                     'silently keeps the default otherwise). Each one is '
                     'logged as a WARNING at start in any case. Off by '
                     'default because an option read only by a plugin or '
                     'a library this check does not load would stop the '
                     'service; turn it on once the warnings are gone. '
                     '``oslo-config-validator`` checks a file offline.'),
]


def register_opts(conf):
    conf.register_opts(opts)
