"""Options for oslo-config-generator (``oslo.config.opts`` entry point)."""

from alloc_framework.conf import allocation
from alloc_framework.conf import api
from alloc_framework.conf import conductor
from alloc_framework.conf import dashboard
from alloc_framework.conf import default
from alloc_framework.conf import deferred_actions
from alloc_framework.conf import hardware
from alloc_framework.conf import healthcheck
from alloc_framework.conf import metrics
from alloc_framework.conf import middleware
from alloc_framework.conf import placement
from alloc_framework.conf import placement_api


def list_opts():
    """Our options, then those of the installed hardware plugins."""
    return [
        ('DEFAULT', default.opts + hardware.opts),
        ('api', api.opts),
        ('placement_api', placement_api.opts),
        ('placement', placement.opts + placement.client_opts_with_plugin()),
        ('conductor', conductor.opts),
        ('allocation', allocation.opts),
        ('deferred_actions', deferred_actions.opts),
        ('metrics', metrics.opts),
        ('oslo_middleware', middleware.opts),
        (healthcheck.GROUP, healthcheck.opts),
        ('dashboard', dashboard.opts),
    ] + hardware.plugin_opts()
