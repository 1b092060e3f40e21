"""Rules of /resource_providers.

Names and defaults are those of upstream Placement, so that existing
policy files keep working.
"""

from oslo_policy import policy

from alloc_framework.api.placement.policies import base

LIST = 'placement:resource_providers:list'
CREATE = 'placement:resource_providers:create'
SHOW = 'placement:resource_providers:show'
UPDATE = 'placement:resource_providers:update'
DELETE = 'placement:resource_providers:delete'

rules = [
    policy.DocumentedRuleDefault(
        name=LIST,
        check_str=base.ADMIN_OR_SERVICE,
        description='List resource providers.',
        operations=[
            {'method': 'GET', 'path': '/resource_providers'},
        ],
        scope_types=['project'],
    ),
    policy.DocumentedRuleDefault(
        name=CREATE,
        check_str=base.ADMIN_OR_SERVICE,
        description='Create resource provider.',
        operations=[
            {'method': 'POST', 'path': '/resource_providers'},
        ],
        scope_types=['project'],
    ),
    policy.DocumentedRuleDefault(
        name=SHOW,
        check_str=base.ADMIN_OR_SERVICE,
        description='Show resource provider.',
        operations=[
            {'method': 'GET', 'path': '/resource_providers/{uuid}'},
        ],
        scope_types=['project'],
    ),
    policy.DocumentedRuleDefault(
        name=UPDATE,
        check_str=base.ADMIN_OR_SERVICE,
        description='Update resource provider.',
        operations=[
            {'method': 'PUT', 'path': '/resource_providers/{uuid}'},
        ],
        scope_types=['project'],
    ),
    policy.DocumentedRuleDefault(
        name=DELETE,
        check_str=base.ADMIN_OR_SERVICE,
        description='Delete resource provider.',
        operations=[
            {'method': 'DELETE', 'path': '/resource_providers/{uuid}'},
        ],
        scope_types=['project'],
    ),
]


def list_rules():
    return rules
