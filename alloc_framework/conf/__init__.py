"""Configuration options, one module per option group.

``CONF`` is the process-wide ``ConfigOpts`` used by the console scripts;
library code receives a ``ConfigOpts`` explicitly wherever it can.
"""

from oslo_config import cfg

from alloc_framework.conf import allocation
from alloc_framework.conf import api
from alloc_framework.conf import conductor
from alloc_framework.conf import dashboard
from alloc_framework.conf import database
from alloc_framework.conf import default
from alloc_framework.conf import deferred_actions
from alloc_framework.conf import hardware
from alloc_framework.conf import healthcheck
from alloc_framework.conf import messaging
from alloc_framework.conf import metrics
from alloc_framework.conf import middleware
from alloc_framework.conf import placement
from alloc_framework.conf import placement_api

CONF = cfg.CONF

_MODULES = (default, database, api, placement_api, placement, conductor,
            allocation, hardware, messaging, middleware, deferred_actions,
            metrics, healthcheck, dashboard)


def register_opts(conf):
    """Register every option of the project on ``conf``."""
    for module in _MODULES:
        module.register_opts(conf)


register_opts(CONF)
