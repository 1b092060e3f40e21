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
                help='Randomise the order of GET /allocation_candidates '
                     'answers, so that concurrent schedulers do not all '
                     'pick the same providers. The search then starts at a '
                     'random provider tree (and wraps around) instead of '
                     'the oldest one, and the candidates found are '
                     'shuffled; with a limit, the candidates returned are '
                     'those of the trees met first from that random start, '
                     'so the work stays proportional to the limit.'),
    cfg.IntOpt('max_allocation_candidates',
               default=-1,
               min=-1,
               help='Upper bound of the allocation candidates one GET '
                    '/allocation_candidates request generates, whatever its '
                    'limit: the search stops once that many are found, so '
                    'that a query matching many wide provider trees cannot '
                    'exhaust the memory of the service. -1 means no bound '
                    '(the reference behaviour: every candidate, or limit).'),
]


def register_opts(conf):
    conf.register_opts(opts, group='placement')
