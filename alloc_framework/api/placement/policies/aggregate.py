"""Rules of /resource_providers/{uuid}/aggregates.

Names and defaults are those of upstream Placement, so that existing
policy files keep working.
"""

from oslo_policy import policy

from alloc_framework.api.placement.policies import base

LIST = 'placement:resource_providers:aggregates:list'
UPDATE = 'placement:resource_providers:aggregates:update'

rules = [
    policy.DocumentedRuleDefault(
        name=LIST,
        check_str=base.ADMIN_OR_SERVICE,
        description='List resource provider aggregates.',
        operations=[
            {'method': 'GET', 'path': '/resource_providers/{uuid}/aggregates'},
        ],
        scope_types=['project'],
    ),
    policy.DocumentedRuleDefault(
        name=UPDATE,
        check_str=base.ADMIN_OR_SERVICE,
        description='Update resource provider aggregates.',
        operations=[
            {'method': 'PUT', 'path': '/resource_providers/{uuid}/aggregates'},
        ],
        scope_types=['project'],
    ),
]


def list_rules():
    return rules
