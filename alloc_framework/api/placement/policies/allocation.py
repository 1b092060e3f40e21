"""Rules of /allocations and provider allocations.

Names and defaults are those of upstream Placement, so that existing
policy files keep working.
"""

from oslo_policy import policy

from alloc_framework.api.placement.policies import base

ALLOC_MANAGE = 'placement:allocations:manage'
ALLOC_LIST = 'placement:allocations:list'
ALLOC_UPDATE = 'placement:allocations:update'
ALLOC_DELETE = 'placement:allocations:delete'
RP_ALLOC_LIST = 'placement:resource_providers:allocations:list'

rules = [
    policy.DocumentedRuleDefault(
        name=ALLOC_MANAGE,
        check_str=base.ADMIN_OR_SERVICE,
        description='Manage allocations.',
        operations=[
            {'method': 'POST',
             'path': '/allocations'},
        ],
        scope_types=['project'],
    ),
    policy.DocumentedRuleDefault(
        name=ALLOC_LIST,
        check_str=base.ADMIN_OR_SERVICE,
        description='List allocations.',
        operations=[
            {'method': 'GET',
             'path': '/allocations/{consumer_uuid}'},
        ],
        scope_types=['project'],
    ),
    policy.DocumentedRuleDefault(
        name=ALLOC_UPDATE,
        check_str=base.ADMIN_OR_SERVICE,
        description='Update allocations.',
        operations=[
            {'method': 'PUT',
             'path': '/allocations/{consumer_uuid}'},
        ],
        scope_types=['project'],
    ),
    policy.DocumentedRuleDefault(
        name=ALLOC_DELETE,
        check_str=base.ADMIN_OR_SERVICE,
        description='Delete allocations.',
        operations=[
            {'method': 'DELETE',
             'path': '/allocations/{consumer_uuid}'},
        ],
        scope_types=['project'],
    ),
    policy.DocumentedRuleDefault(
        name=RP_ALLOC_LIST,
        check_str=base.ADMIN_OR_SERVICE,
        description='List resource provider allocations.',
        operations=[
            {'method': 'GET',
             'path': '/resource_providers/{uuid}/allocations'},
        ],
        scope_types=['project'],
    ),
]


def list_rules():
    return rules
