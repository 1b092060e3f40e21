"""Policies of the deferred action endpoints (read-only, admins only)."""

from oslo_policy import policy

from alloc_framework.api.baremetal.policies import base

rules = [
    policy.DocumentedRuleDefault(
        name='baremetal:deferred_action:get',
        check_str=base.any_of(base.SYSTEM_ADMIN, 'role:admin'),
        scope_types=base.SCOPES,
        description='Retrieve deferred actions, the work conductors do '
                    'later on nodes (an operator view).',
        operations=[{'path': '/deferred_actions', 'method': 'GET'},
                    {'path': '/deferred_actions/{action_id}',
                     'method': 'GET'}]),
]


def list_rules():
    return rules
