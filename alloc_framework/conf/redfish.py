"""Options of the [redfish] group: how the ``redfish`` hardware talks to BMCs.

They are a hardware plugin's options: :func:`list_opts` is the
``alloc_framework.hardware.opts`` entry point ``redfish``, so the driver
factory registers them before it loads any plugin and the sample
configuration lists them.

Every request to a BMC has a deadline (``connection_timeout`` to connect,
``read_timeout`` for the answer) and nothing here retries after a pause:
a worker thread never sleeps on a BMC. Operations that take the hardware
longer (power changes, firmware updates) have their own bounded waits,
described with each option.
"""

from oslo_config import cfg

from alloc_framework.conf import opt_types

GROUP = 'redfish'

opts = [
    opt_types.FloatOpt(
        'connection_timeout',
        default=10.0,
        min=0.1,
        help='Seconds a request waits for the TCP connection to a '
             'BMC (and the TLS handshake) before it fails.'),
    opt_types.FloatOpt(
        'read_timeout',
        default=30.0,
        min=0.1,
        help='Seconds a request waits for a connected BMC to '
             'answer before it fails. A BMC that accepts the '
             'connection but never answers costs this long per '
             'request.'),
    cfg.IntOpt('connection_attempts',
               default=1,
               min=1,
               help='Connection attempts per request. Further attempts '
                    'follow at once, without a pause: a BMC that is not '
                    'answering is tried again by a later call (a deferred '
                    'action reschedule, the next power request), not by a '
                    'sleeping worker.'),
    cfg.StrOpt('auth_type',
               default='auto',
               choices=[('basic', 'HTTP basic authentication on every '
                                  'request'),
                        ('session', 'a Redfish session (one login, then a '
                                    'token)'),
                        ('auto', 'a session when the BMC offers the '
                                 'session service, basic otherwise')],
               help='How to authenticate to BMCs whose node does not set '
                    '``redfish_auth_type`` in ``driver_info``.'),
    cfg.IntOpt('connection_cache_size',
               default=1000,
               min=0,
               help='Open Redfish connections (one per BMC address, user '
                    'and credentials) kept for reuse, least recently used '
                    'first out. 0 opens a connection (and a session) per '
                    'call.'),
    opt_types.FloatOpt(
        'power_state_poll_interval',
        default=1.0,
        min=0.01,
        help='Seconds between two reads of the power state while '
             'a power change is awaited (for at most '
             '``[conductor]power_state_change_timeout``). The '
             'pause waits on the conductor\'s stop event, so a '
             'stopping conductor ends it at once.'),
    cfg.IntOpt('firmware_update_status_interval',
               default=15,
               min=0,
               help='Seconds before a firmware update is polled again '
                    '(its task monitor, a BMC coming back, a rebooting '
                    'node) when the BMC does not say how long to wait '
                    '(``Retry-After``). Each poll is a reschedule of the '
                    'deferred action: no thread waits in between.'),
    cfg.IntOpt('firmware_update_max_retry_after',
               default=300,
               min=0,
               help='Upper bound of the pause a BMC may ask for with '
                    '``Retry-After`` between two polls of a firmware '
                    'update task.'),
    cfg.IntOpt('firmware_update_bmc_timeout',
               default=600,
               min=1,
               help='Seconds a BMC may stay unreachable or answer "503 '
                    'Service Unavailable" while its firmware is applied '
                    'and it resets; past them the update FAILED.'),
    cfg.IntOpt('firmware_update_reboot_timeout',
               default=600,
               min=1,
               help='Seconds a node rebooted to apply new BIOS firmware '
                    'may take to be powered on again; past them the update '
                    'FAILED.'),
]


def register_opts(conf):
    conf.register_opts(opts, group=GROUP)


def list_opts():
    """The ``alloc_framework.hardware.opts`` entry point of the plugin."""
    return [(GROUP, opts)]
