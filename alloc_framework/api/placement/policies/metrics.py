"""Rule of the Prometheus metrics endpoint (not upstream Placement's)."""

from oslo_policy import policy

from alloc_framework.api.placement.policies import base

METRICS = 'placement:metrics'

rules = [
    policy.DocumentedRuleDefault(
        name=METRICS,
        check_str=base.RULE_ADMIN_API,
        description='Read the Prometheus metrics of the Placement API '
                    '(not checked when [metrics]'
                    'prometheus_allow_unauthenticated is true).',
        operations=[{'method': 'GET', 'path': '/metrics'}],
        scope_types=['project'],
    ),
]


def list_rules():
    return rules
