"""oslo.messaging's [DEFAULT] options (transport_url ...), registered early.

oslo.messaging registers them only when a transport is created; the
services and tests read and override them before that. The sample
configuration documents them through the ``oslo.messaging`` namespace.
"""

import oslo_messaging
from oslo_messaging import opts as messaging_opts

# Queues and exchanges of this project are named after it. Set before the
# options are copied below so that the copies equal oslo.messaging's own
# when it registers them too.
CONTROL_EXCHANGE = 'alloc_framework'


def _default_opts():
    for group, group_opts in messaging_opts.list_opts():
        if group in (None, 'DEFAULT'):
            return list(group_opts)
    return []


def register_opts(conf):
    oslo_messaging.set_transport_defaults(CONTROL_EXCHANGE)
    conf.register_opts(_default_opts())
