"""Options of the [dashboard] group: the read-only web dashboard.

The dashboard is served by the Placement API process at ``/dashboard/``
(see ``alloc_framework.api.dashboard``).
"""

from oslo_config import cfg

opts = [
    cfg.BoolOpt('enabled',
                default=True,
                help='Serve the read-only dashboard at ``/dashboard/`` of '
                     'the Placement API (alloc-placement-api and '
                     'alloc-server), behind the authentication of the '
                     'Placement API and the ``placement:dashboard`` policy '
                     'rule (admin only by default). Disabled, the path is '
                     'an ordinary request of the API (404).'),
    cfg.IntOpt('page_size',
               default=50,
               min=1,
               max=500,
               help='Rows of each list of the dashboard on one page. A page '
                    'asks the database for this many rows, never for the '
                    'whole list.'),
    cfg.IntOpt('stuck_after',
               default=600,
               min=1,
               help='Seconds after which a node allocation still in '
                    '``allocating`` counts as stuck on the dashboard.'),
]


def register_opts(conf):
    conf.register_opts(opts, group='dashboard')
