"""Rules of /resource_providers/{uuid}/inventories.

Names and defaults are those of upstream Placement, so that existing
policy files keep working.
"""

from oslo_policy import policy

from alloc_framework.api.placement.policies import base

LIST = 'placement:resource_providers:inventories:list'
CREATE = 'placement:resource_providers:inventories:create'
SHOW = 'placement:resource_providers:inventories:show'
UPDATE = 'placement:resource_providers:inventories:update'
DELETE = 'placement:resource_providers:inventories:delete'
BASE_PATH = '/resource_providers/{uuid}/inventories'

rules = [
    policy.DocumentedRuleDefault(
        name=LIST,
        check_str=base.ADMIN_OR_SERVICE,
        description='List resource provider inventories.',
        operations=[
            {'method': 'GET',
             'path': BASE_PATH},
        ],
        scope_types=['project'],
    ),
    policy.DocumentedRuleDefault(
        name=CREATE,
        check_str=base.ADMIN_OR_SERVICE,
        description='Create one resource provider inventory.',
        operations=[
            {'method': 'POST',
             'path': BASE_PATH},
        ],
        scope_types=['project'],
    ),
    policy.DocumentedRuleDefault(
        name=SHOW,
        check_str=base.ADMIN_OR_SERVICE,
        description='Show resource provider inventory.',
        operations=[
            {'method': 'GET',
             'path': BASE_PATH + '/{resource_class}'},
        ],
        scope_types=['project'],
    ),
    policy.DocumentedRuleDefault(
        name=UPDATE,
        check_str=base.ADMIN_OR_SERVICE,
        description='Update resource provider inventory.',
        operations=[
            {'method': 'PUT',
             'path': BASE_PATH},
            {'method': 'PUT',
             'path': BASE_PATH + '/{resource_class}'},
        ],
        scope_types=['project'],
    ),
    policy.DocumentedRuleDefault(
        name=DELETE,
        check_str=base.ADMIN_OR_SERVICE,
        description='Delete resource provider inventory.',
        operations=[
            {'method': 'DELETE',
             'path': BASE_PATH},
            {'method': 'DELETE',
             'path': BASE_PATH + '/{resource_class}'},
        ],
        scope_types=['project'],
    ),
]


def list_rules():
    return rules
