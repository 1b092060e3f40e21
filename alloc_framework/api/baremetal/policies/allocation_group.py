"""Policies of the allocation group endpoints (an extension of ours).

The defaults follow the allocation rules: a group's owner project plays
the allocation owner's part (``%(allocation.owner)s``).
"""

from oslo_policy import policy

from alloc_framework.api.baremetal.policies import base

GROUPS = '/allocation_groups'
GROUP = '/allocation_groups/{group_ident}'

rules = [
    policy.DocumentedRuleDefault(
        name='baremetal:allocation_group:get',
        check_str=base.ALLOCATION_READER,
        scope_types=base.SCOPES,
        description='Retrieve an allocation group',
        operations=[{'path': GROUP, 'method': 'GET'}]),
    policy.DocumentedRuleDefault(
        name='baremetal:allocation_group:list',
        check_str=base.API_READER,
        scope_types=base.SCOPES,
        description='List the allocation groups of the caller\'s project',
        operations=[{'path': GROUPS, 'method': 'GET'}]),
    policy.DocumentedRuleDefault(
        name='baremetal:allocation_group:list_all',
        check_str=base.SYSTEM_READER,
        scope_types=base.SCOPES,
        description='List the allocation groups of every owner',
        operations=[{'path': GROUPS, 'method': 'GET'}]),
    policy.DocumentedRuleDefault(
        name='baremetal:allocation_group:create',
        check_str=base.ALLOCATION_CREATOR,
        scope_types=base.SCOPES,
        description='Create an allocation group',
        operations=[{'path': GROUPS, 'method': 'POST'}]),
    policy.DocumentedRuleDefault(
        name='baremetal:allocation_group:create_restricted',
        check_str=base.SYSTEM_MEMBER,
        scope_types=base.SCOPES,
        description='Create allocation groups with any owner (without it '
                    'the owner is the project of the caller)',
        operations=[{'path': GROUPS, 'method': 'POST'}]),
    policy.DocumentedRuleDefault(
        name='baremetal:allocation_group:delete',
        check_str=base.ALLOCATION_MEMBER,
        scope_types=base.SCOPES,
        description='Delete an allocation group and its allocations',
        operations=[{'path': GROUP, 'method': 'DELETE'}]),
]


def list_rules():
    return rules
