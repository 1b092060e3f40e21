"""The rule of the read-only dashboard (``/dashboard/``).

Not an upstream rule: the dashboard shows every provider, consumer,
node and allocation at once, so the default is the admin rule.
"""

from oslo_policy import policy

from alloc_framework.api.placement.policies import base

VIEW = 'placement:dashboard'

rules = [
    policy.DocumentedRuleDefault(
        name=VIEW,
        check_str=base.RULE_ADMIN_API,
        description='View the read-only dashboard: capacity, providers, '
                    'what fits, bare metal and trouble lists.',
        operations=[{'method': 'GET', 'path': '/dashboard/'}],
        scope_types=['project'],
    ),
]


def list_rules():
    return rules
