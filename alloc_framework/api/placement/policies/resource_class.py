"""Rules of /resource_classes.

Names and defaults are those of upstream Placement, so that existing
policy files keep working.
"""

from oslo_policy import policy

from alloc_framework.api.placement.policies import base

LIST = 'placement:resource_classes:list'
CREATE = 'placement:resource_classes:create'
SHOW = 'placement:resource_classes:show'
UPDATE = 'placement:resource_classes:update'
DELETE = 'placement:resource_classes:delete'

rules = [
    policy.DocumentedRuleDefault(
        name=LIST,
        check_str=base.ADMIN_OR_SERVICE,
        description='List resource classes.',
        operations=[
            {'method': 'GET', 'path': '/resource_classes'},
        ],
        scope_types=['project'],
    ),
    policy.DocumentedRuleDefault(
        name=CREATE,
        check_str=base.ADMIN_OR_SERVICE,
        description='Create resource class.',
        operations=[
            {'method': 'POST', 'path': '/resource_classes'},
        ],
        scope_types=['project'],
    ),
    policy.DocumentedRuleDefault(
        name=SHOW,
        check_str=base.ADMIN_OR_SERVICE,
        description='Show resource class.',
        operations=[
            {'method': 'GET', 'path': '/resource_classes/{name}'},
        ],
        scope_types=['project'],
    ),
    policy.DocumentedRuleDefault(
        name=UPDATE,
        check_str=base.ADMIN_OR_SERVICE,
        description='Update resource class.',
        operations=[
            {'method': 'PUT', 'path': '/resource_classes/{name}'},
        ],
        scope_types=['project'],
    ),
    policy.DocumentedRuleDefault(
        name=DELETE,
        check_str=base.ADMIN_OR_SERVICE,
        description='Delete resource class.',
        operations=[
            {'method': 'DELETE', 'path': '/resource_classes/{name}'},
        ],
        scope_types=['project'],
    ),
]


def list_rules():
    return rules
