"""Options of the [deferred_actions] group: launcher and clean-up."""

from oslo_config import cfg

from alloc_framework.conf import opt_types

# Terminal actions are never kept longer than this, whatever is set.
MAX_RETENTION = 86400

opts = [
    opt_types.FloatOpt(
        'launcher_interval',
        default=1.0,
        min=0,
        help='Seconds between runs of the periodic task that '
             'launches deferred actions. 0 disables it: no '
             'deferred action runs on this conductor.'),
    cfg.IntOpt('pool_size',
               default=8,
               min=1,
               help='Worker threads that run deferred actions. The '
                    'launcher claims at most this many actions more than '
                    'there are threads: they wait in the pool\'s queue '
                    'for the next free thread.'),
    cfg.IntOpt('candidates_per_iteration',
               default=200,
               min=1,
               help='At most this many launchable actions of the nodes '
                    'this conductor manages are read per launcher run; '
                    'the first of each node is launched while threads are '
                    'free.'),
    cfg.IntOpt('step_retries',
               default=2,
               min=0,
               help='Retries of the deferred action that runs a deferrable '
                    'clean or service step: a step that raises is called '
                    'again this many times before its flow fails.'),
    cfg.IntOpt('max_reschedules',
               default=500,
               min=0,
               help='An action that asks to be called again more than '
                    'this many times FAILED: it is not making progress.'),
    cfg.IntOpt('action_timeout',
               default=7200,
               min=1,
               help='Seconds after its creation after which an action '
                    'that did not complete FAILED instead of running or '
                    'rescheduling again (unless the action set its own '
                    'deadline).'),
    cfg.IntOpt('running_timeout',
               default=900,
               min=1,
               help='An action RUNNING for longer than this many seconds '
                    'is taken to have lost its conductor (killed, or its '
                    'worker died): the clean-up moves it to PENDING_RETRY, '
                    'or to FAILED when it has no retries left.'),
    cfg.IntOpt('retention',
               default=900,
               min=0,
               max=MAX_RETENTION,
               help='Seconds a COMPLETED or FAILED action is kept after it '
                    'ended before the clean-up deletes it. At most one day '
                    '(86400): actions are never kept longer.'),
    cfg.IntOpt('cleanup_interval',
               default=300,
               min=0,
               help='Seconds between clean-ups of deferred actions while '
                    'the worker pool is busy. 0 disables the clean-up.'),
    cfg.IntOpt('idle_cleanup_interval',
               default=60,
               min=1,
               help='Seconds between clean-ups while the worker pool is '
                    'idle (quiet periods clean up more often).'),
    cfg.StrOpt('notification_level',
               default='info',
               choices=[('debug', 'every notification'),
                        ('info', 'COMPLETED and FAILED'),
                        ('error', 'FAILED only'),
                        ('none', 'no notification')],
               help='Lowest priority of the versioned notifications sent '
                    'when a deferred action ends: COMPLETED is sent at '
                    'info, FAILED at error. They go through the '
                    'oslo.messaging notifier, whose '
                    '[oslo_messaging_notifications]driver is empty (no-op) '
                    'by default.'),
    cfg.IntOpt('purge_batch_size',
               default=500,
               min=1,
               help='Deleted actions are purged in transactions of at '
                    'most this many rows, so that no table lock is held '
                    'for long.'),
]


def register_opts(conf):
    conf.register_opts(opts, group='deferred_actions')
