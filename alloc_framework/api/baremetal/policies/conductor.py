"""Policies of the conductor endpoints (rule name and default as upstream)."""

from oslo_policy import policy

from alloc_framework.api.baremetal.policies import base

rules = [
    policy.DocumentedRuleDefault(
        name='baremetal:conductor:get',
        check_str=base.SYSTEM_READER,
        scope_types=base.SCOPES,
        description='Retrieve Conductor records',
        operations=[{'path': '/conductors', 'method': 'GET'},
                    {'path': '/conductors/{hostname}', 'method': 'GET'}]),
]


def list_rules():
    return rules
