"""Options of the [placement] group: our Placement service, and reaching one.

The group holds two sets of options, as upstream services name them:

* the behaviour of our own Placement service (``opts`` below, as upstream
  Placement's ``[placement]``), and ``drift_heal_interval``, the
  conductor's periodic healing of the ``placement`` backend's mirror;
* how the ``placement`` node allocation backend reaches a Placement, in
  keystoneauth1's usual form (as nova's ``[placement]``): session options
  (``cafile``, ``timeout`` ...), ``auth_type`` with the options of that
  plugin, and adapter options (``endpoint_override``, ``region_name``,
  ``valid_interfaces`` ...). When neither ``auth_type`` nor
  ``endpoint_override`` is set, the backend uses our own Placement in
  the same process, on the same database, without HTTP.

The names of the two sets do not overlap (``tests/unit/test_conf.py``
checks it).
"""

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

from alloc_framework.conf import opt_types

GROUP = 'placement'

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
    cfg.IntOpt('drift_heal_interval',
               default=600,
               min=0,
               help='With [allocation]backend = placement: seconds between '
                    'two runs of the conductor periodic task that finds and '
                    'heals drift between the nodes and their resource '
                    'providers (a missing or out of date provider, a '
                    'provider whose node is gone, a claim no allocation '
                    'stands behind, an active allocation without its '
                    'claim), as "alloc-manage placement drift --heal" '
                    'does. Each conductor heals the nodes the hash ring '
                    'gives it. 0 disables the task.'),
    opt_types.FloatOpt(
        'candidates_deadline',
        default=30.0,
        min=0,
        help='Seconds a GET /allocation_candidates request may '
             'work before it is stopped and answered 503 '
             'placement.query.deadline, so that no API worker is '
             'held longer for an answer its client (a scheduler '
             'with a timeout of its own, or a proxy in front) has '
             'most likely stopped waiting for. The database stops '
             'the running statement (a statement timeout on '
             'PostgreSQL and MariaDB, a progress handler on '
             'SQLite), and the search checks the time between '
             'its steps. A request whose client closes its '
             'connection is stopped as well (with '
             'alloc-placement-api and alloc-server). The default, '
             '30, is longer than any search with a limit takes at '
             'the sizes measured in the performance guide; raise '
             'it if clients ask for every candidate of very large '
             'clouds and wait for them. 0 disables the limit.'),
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


def client_opts():
    """keystoneauth1's session, auth and adapter options of the group.

    The options of the plugin chosen with ``auth_type`` are registered
    when the client is built (keystoneauth1 does it), and listed for the
    configuration generator by :func:`client_opts_with_plugin`.
    """
    return (ks_loading.get_session_conf_options()
            + ks_loading.get_auth_common_conf_options()
            + ks_loading.get_adapter_conf_options(include_deprecated=False))


def client_opts_with_plugin(plugin='password'):
    """:func:`client_opts` with those of one auth plugin, for samples."""
    return client_opts() + ks_loading.get_auth_plugin_conf_options(plugin)


def register_opts(conf):
    conf.register_opts(opts, group=GROUP)
    ks_loading.register_session_conf_options(conf, GROUP)
    ks_loading.register_auth_conf_options(conf, GROUP)
    # Unset, service_type and valid_interfaces mean "placement" and
    # "internal, public" (see placement_client.get_adapter).
    ks_loading.register_adapter_conf_options(conf, GROUP,
                                             include_deprecated=False)
