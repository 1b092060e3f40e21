"""Policies of the allocation endpoints (rule names as upstream)."""

from oslo_policy import policy

from alloc_framework.api.baremetal.policies import base

ALLOCATION = '/allocations/{allocation_id}'
NODE_ALLOCATION = '/nodes/{node_ident}/allocation'

rules = [
    policy.DocumentedRuleDefault(
        name='baremetal:allocation:get',
        check_str=base.ALLOCATION_READER,
        scope_types=base.SCOPES,
        description='Retrieve Allocation records',
        operations=[{'path': ALLOCATION, 'method': 'GET'},
                    {'path': NODE_ALLOCATION, 'method': 'GET'}]),
    policy.DocumentedRuleDefault(
        name='baremetal:allocation:list',
        check_str=base.API_READER,
        scope_types=base.SCOPES,
        description='Retrieve multiple Allocation records, filtered by '
                    'owner',
        operations=[{'path': '/allocations', 'method': 'GET'}]),
    policy.DocumentedRuleDefault(
        name='baremetal:allocation:list_all',
        check_str=base.SYSTEM_READER,
        scope_types=base.SCOPES,
        description='Retrieve multiple Allocation records of every owner',
        operations=[{'path': '/allocations', 'method': 'GET'}]),
    policy.DocumentedRuleDefault(
        name='baremetal:allocation:create',
        check_str=base.ALLOCATION_CREATOR,
        scope_types=base.SCOPES,
        description='Create Allocation records',
        operations=[{'path': '/allocations', 'method': 'POST'}]),
    policy.DocumentedRuleDefault(
        name='baremetal:allocation:create_restricted',
        check_str=base.SYSTEM_MEMBER,
        scope_types=base.SCOPES,
        description='Create Allocation records with any owner (without '
                    'it the owner is the project of the caller).',
        operations=[{'path': '/allocations', 'method': 'POST'}]),
    policy.DocumentedRuleDefault(
        name='baremetal:allocation:delete',
        check_str=base.ALLOCATION_MEMBER,
        scope_types=base.SCOPES,
        description='Delete Allocation records',
        operations=[{'path': ALLOCATION, 'method': 'DELETE'},
                    {'path': NODE_ALLOCATION, 'method': 'DELETE'}]),
    policy.DocumentedRuleDefault(
        name='baremetal:allocation:update',
        check_str=base.ALLOCATION_MEMBER,
        scope_types=base.SCOPES,
        description='Change name and extra fields of an allocation',
        operations=[{'path': ALLOCATION, 'method': 'PATCH'}]),
    policy.DocumentedRuleDefault(
        name='baremetal:allocation:retry',
        check_str=base.ALLOCATION_MEMBER,
        scope_types=base.SCOPES,
        description='Retry a failed allocation (an extension: move it '
                    'from error back to allocating)',
        operations=[{'path': ALLOCATION + '/retry', 'method': 'POST'}]),
]


def list_rules():
    return rules
