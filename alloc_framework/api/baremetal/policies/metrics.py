"""Policy of the Prometheus metrics endpoint (not upstream's)."""

from oslo_policy import policy

from alloc_framework.api.baremetal.policies import base

METRICS = 'baremetal:metrics:get'

rules = [
    policy.DocumentedRuleDefault(
        name=METRICS,
        check_str=base.SYSTEM_ADMIN,
        scope_types=base.SCOPES,
        description='Read the Prometheus metrics of the bare metal API '
                    '(not checked when [metrics]'
                    'prometheus_allow_unauthenticated is true).',
        operations=[{'path': '/metrics', 'method': 'GET'}]),
]


def list_rules():
    return rules
