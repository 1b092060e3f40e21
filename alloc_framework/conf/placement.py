"""Options of the [placement] group: behaviour of the Placement service."""

from oslo_config import cfg

opts = [
    cfg.IntOpt('allocation_conflict_retry_count',
               default=10,
               min=0,
               help='How many times a write of allocations is retried inside '
                    'the server when another request changed the same '
                    'providers concurrently, before the client gets a 409 '
                    'placement.concurrent_update.'),
    cfg.StrOpt('incomplete_consumer_project_id',
               default='00000000-0000-0000-0000-000000000000',
               help='Project id recorded for consumers created by requests '
                    'older than microversion 1.8, which carried no project.'),
    cfg.StrOpt('incomplete_consumer_user_id',
               default='00000000-0000-0000-0000-000000000000',
               help='User id recorded for consumers created by requests '
                    'older than microversion 1.8, which carried no user.'),
    cfg.BoolOpt('randomize_allocation_candidates',
                default=False,
                help='Shuffle allocation candidates before a limit is '
                     'applied, so that callers do not all pick the same '
                     'providers.'),
    cfg.IntOpt('max_allocation_candidates',
               default=-1,
               help='Upper bound of allocation candidates generated for one '
                    'request; -1 means no bound.'),
]


def register_opts(conf):
    conf.register_opts(opts, group='placement')
