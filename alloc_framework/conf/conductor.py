"""Options of the [conductor] group."""

from oslo_config import cfg

from alloc_framework.conf import opt_types

opts = [
    cfg.IntOpt('heartbeat_interval',
               default=10,
               min=1,
               help='Seconds between conductor heartbeats.'),
    cfg.IntOpt('heartbeat_timeout',
               default=60,
               min=2,
               help='A conductor whose last heartbeat is older than this '
                    'many seconds is considered dead: it leaves the hash '
                    'ring and its allocations are taken over.'),
    cfg.IntOpt('workers_pool_size',
               default=16,
               min=2,
               help='Size of the bounded thread pool in which a conductor '
                    'runs asynchronous work such as allocations.'),
    cfg.IntOpt('check_allocations_interval',
               default=60,
               min=0,
               help='Seconds between runs of the periodic task that takes '
                    'over allocations of dead conductors. 0 disables it; '
                    'allocations of a dead conductor then stay in '
                    '"allocating" until that conductor comes back.'),
    cfg.StrOpt('conductor_group',
               default='',
               help='Name of the conductor group this conductor belongs to. '
                    'It manages only nodes of the same group.'),
    cfg.IntOpt('node_locked_retry_attempts',
               default=3,
               min=0,
               help='How many times a conductor retries to lock a node that '
                    'is locked by another task before giving up.'),
    opt_types.FloatOpt(
        'node_locked_retry_interval',
        default=0.2,
        min=0,
        help='Seconds between attempts to lock a busy node.'),
    cfg.BoolOpt('automated_clean',
                default=True,
                help='Whether nodes run the automated clean steps of their '
                     'interfaces when they are provided and after they are '
                     'undeployed. A node\'s own ``automated_clean`` field, '
                     'when set, overrides this.'),
    cfg.IntOpt('check_provision_state_interval',
               default=60,
               min=0,
               help='Seconds between runs of the periodic task that fails '
                    'nodes left waiting too long (see '
                    '``deploy_callback_timeout``, '
                    '``clean_callback_timeout`` and '
                    '``service_callback_timeout``). 0 disables it.'),
    cfg.IntOpt('deploy_callback_timeout',
               default=1800,
               min=0,
               help='Seconds a node may stay in "wait call-back" (its '
                    'deploy interface waits for the node to call back) '
                    'before the deployment fails into "deploy failed". '
                    'Nodes in maintenance are not timed out. 0 disables '
                    'the timeout.'),
    cfg.IntOpt('clean_callback_timeout',
               default=1800,
               min=0,
               help='Seconds a node may stay in "clean wait" (a clean '
                    'step goes on asynchronously) before cleaning fails '
                    'into "clean failed", putting the node in maintenance. '
                    'Nodes in maintenance are not timed out, nor nodes '
                    'waiting for a deferred action that can still run '
                    '(see ``service_callback_timeout``). 0 disables '
                    'the timeout.'),
    cfg.IntOpt('service_callback_timeout',
               default=1800,
               min=0,
               help='Seconds a node may stay in "service wait" (a service '
                    'step goes on asynchronously) before servicing fails '
                    'into "service failed". Nodes in maintenance are not '
                    'timed out. A node waiting for a deferred action '
                    '(a deferrable clean or service step) is not timed '
                    'out while the action can still run: the action\'s '
                    'own retries and deadline '
                    '(``[deferred_actions]action_timeout``) govern it. '
                    '0 disables the timeout.'),
    cfg.IntOpt('power_state_change_timeout',
               default=60,
               min=1,
               deprecated_opts=[cfg.DeprecatedOpt(
                   'power_state_change_timeout', group='redfish')],
               help='Seconds a power change (on, off, reboot) may take to '
                    'show in the power state the BMC reports, after the '
                    'BMC accepted the request. The ``ipmi`` and '
                    '``redfish`` power interfaces read the state back '
                    'until then (every ``[ipmi]power_state_poll_interval`` '
                    'or ``[redfish]power_state_poll_interval`` seconds, '
                    'waiting on the conductor\'s stop event) and the '
                    'change fails when it does not show in time. A reboot '
                    'may take this long for each of its two changes.'),
    cfg.IntOpt('sync_power_state_interval',
               default=60,
               min=0,
               help='Seconds between runs of the periodic task that reads '
                    'the power state of this conductor\'s nodes from their '
                    'BMCs and reconciles it with the recorded one (see '
                    '``force_power_state_during_sync``). The same run '
                    'takes nodes put in maintenance by a power failure '
                    'out of it once their BMC answers again. 0 disables '
                    'it; the recorded power state then only changes '
                    'through power actions.'),
    cfg.BoolOpt('enable_health_monitoring',
                default=True,
                help='Whether the power state sync also reads each '
                     'node\'s health from its BMC (Redfish: the system\'s '
                     'Status.Health) and records it in the node\'s '
                     '``health`` (bare metal API 1.109). False leaves '
                     '``health`` as it is.'),
    cfg.BoolOpt('force_power_state_during_sync',
                default=True,
                help='What the power state sync does when a BMC reports '
                     'another power state than the recorded one: True '
                     'powers the node back to the recorded state, False '
                     'records the state the BMC reports. Either way the '
                     'change is written to the node history.'),
    cfg.IntOpt('power_state_sync_max_retries',
               default=3,
               min=0,
               help='How many further runs of the power state sync may '
                    'fail on a node, after a first failure, before the '
                    'node is put in maintenance with the fault "power '
                    'failure". A failure is a BMC that cannot be read, or '
                    '(with ``force_power_state_during_sync``) a node that '
                    'is still not in its recorded state after being '
                    'powered back to it. A node that answers again in '
                    'the sync comes out of that maintenance by itself.'),
    cfg.IntOpt('sync_power_state_workers',
               default=8,
               min=1,
               help='Most nodes whose BMC the power state sync talks to at '
                    'the same time. These threads are the sync\'s own: '
                    'they never take workers from '
                    '``workers_pool_size``.'),
    cfg.IntOpt('hash_ring_reset_interval',
               default=15,
               min=1,
               help='Seconds after which the cached hash ring is rebuilt '
                    'from the list of live conductors.'),
]


def register_opts(conf):
    conf.register_opts(opts, group='conductor')
