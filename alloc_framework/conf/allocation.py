"""Options of the [allocation] group: the node allocation backend."""

from oslo_config import cfg

opts = [
    cfg.StrOpt('backend',
               default='database',
               help='The node allocation backend: an entry point of the '
                    '``alloc_framework.allocation.backends`` namespace. '
                    '``database`` picks nodes straight from the database; '
                    'third parties can add their own.'),
]


def register_opts(conf):
    conf.register_opts(opts, group='allocation')
