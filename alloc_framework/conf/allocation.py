"""Options of the [allocation] group: the node allocation backend."""

from oslo_config import cfg

opts = [
    cfg.StrOpt('backend',
               default='database',
               help='The node allocation backend: an entry point of the '
                    '``alloc_framework.allocation.backends`` namespace. '
                    '``database`` picks nodes straight from the database; '
                    '``placement`` mirrors nodes as resource providers of a '
                    'Placement service (see the [placement] group) and '
                    'claims them there before reserving them in the '
                    'database; third parties can add their own.'),
    cfg.IntOpt('placement_candidates_limit',
               default=20,
               min=1,
               help='With the placement backend: how many allocation '
                    'candidates one allocation asks Placement for (the '
                    '``limit`` of GET /allocation_candidates). They are '
                    'tried in random order, so concurrent allocations '
                    'rarely claim the same node. Placement\'s cost grows '
                    'with it; each retry asks again (see '
                    'placement_claim_retries).'),
    cfg.IntOpt('placement_claim_retries',
               default=5,
               min=0,
               help='With the placement backend: how many more times one '
                    'allocation asks Placement for candidates when none of '
                    'the candidates of the last answer could be claimed '
                    '(Placement refused the claim with 409 because another '
                    'allocation claimed the node first, or the node was '
                    'not free in the database). Every answer leaves out '
                    'the nodes claimed since, so each retry has fewer '
                    'nodes to compete for.'),
    cfg.BoolOpt('placement_claim_in_database',
                default=True,
                help='With the placement backend and our own Placement in '
                     'this process (the [placement] group names no remote '
                     'one, so both share the database): claim the node\'s '
                     'resource providers in the same database transaction '
                     'that reserves the node, with Placement\'s own checks '
                     '(the root offers a free unit of the node\'s class, '
                     'the requested traits and the owner\'s aggregate; '
                     'capacity and generations as for PUT /allocations), '
                     'instead of asking GET /allocation_candidates and '
                     'claiming with PUT /allocations. The claim and the '
                     'reservation then commit or roll back together. An '
                     'allocation that no node can serve this way (a '
                     'provider missing or out of date, a tree serving the '
                     'class from a child) is then tried through the API as '
                     'when this is False. Ignored with a remote Placement, '
                     'which is always reached through its API, and for '
                     'allocation groups.'),
    cfg.IntOpt('max_group_size',
               default=1000,
               min=1,
               help='How many nodes one allocation group may ask for in '
                    'all (the sum of the counts of its members); a larger '
                    'request is refused with HTTP 400. A group is reserved '
                    'in one database transaction that locks its nodes.'),
    cfg.StrOpt('notification_level',
               default='info',
               choices=[('debug', 'every notification'),
                        ('info', 'start, end and error'),
                        ('error', 'error only'),
                        ('none', 'no notification')],
               help='Lowest priority of the versioned notifications the '
                    'API sends when it creates, updates or deletes an '
                    'allocation (baremetal.allocation.<action>.start and '
                    '.end at info, .error at error). They go through the '
                    'oslo.messaging notifier, whose '
                    '[oslo_messaging_notifications]driver is empty (no-op) '
                    'by default.'),
]


def register_opts(conf):
    conf.register_opts(opts, group='allocation')
