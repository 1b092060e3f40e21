"""Rules of /traits and /resource_providers/{uuid}/traits.

Names and defaults are those of upstream Placement, so that existing
policy files keep working.
"""

from oslo_policy import policy

from alloc_framework.api.placement.policies import base

TRAITS_LIST = 'placement:traits:list'
TRAITS_SHOW = 'placement:traits:show'
TRAITS_UPDATE = 'placement:traits:update'
TRAITS_DELETE = 'placement:traits:delete'
RP_TRAIT_LIST = 'placement:resource_providers:traits:list'
RP_TRAIT_UPDATE = 'placement:resource_providers:traits:update'
RP_TRAIT_DELETE = 'placement:resource_providers:traits:delete'

rules = [
    policy.DocumentedRuleDefault(
        name=TRAITS_LIST,
        check_str=base.ADMIN_OR_SERVICE,
        description='List traits.',
        operations=[
            {'method': 'GET', 'path': '/traits'},
        ],
        scope_types=['project'],
    ),
    policy.DocumentedRuleDefault(
        name=TRAITS_SHOW,
        check_str=base.ADMIN_OR_SERVICE,
        description='Show trait.',
        operations=[
            {'method': 'GET', 'path': '/traits/{name}'},
        ],
        scope_types=['project'],
    ),
    policy.DocumentedRuleDefault(
        name=TRAITS_UPDATE,
        check_str=base.ADMIN_OR_SERVICE,
        description='Update trait.',
        operations=[
            {'method': 'PUT', 'path': '/traits/{name}'},
        ],
        scope_types=['project'],
    ),
    policy.DocumentedRuleDefault(
        name=TRAITS_DELETE,
        check_str=base.ADMIN_OR_SERVICE,
        description='Delete trait.',
        operations=[
            {'method': 'DELETE', 'path': '/traits/{name}'},
        ],
        scope_types=['project'],
    ),
    policy.DocumentedRuleDefault(
        name=RP_TRAIT_LIST,
        check_str=base.ADMIN_OR_SERVICE,
        description='List resource provider traits.',
        operations=[
            {'method': 'GET', 'path': '/resource_providers/{uuid}/traits'},
        ],
        scope_types=['project'],
    ),
    policy.DocumentedRuleDefault(
        name=RP_TRAIT_UPDATE,
        check_str=base.ADMIN_OR_SERVICE,
        description='Update resource provider traits.',
        operations=[
            {'method': 'PUT', 'path': '/resource_providers/{uuid}/traits'},
        ],
        scope_types=['project'],
    ),
    policy.DocumentedRuleDefault(
        name=RP_TRAIT_DELETE,
        check_str=base.ADMIN_OR_SERVICE,
        description='Delete resource provider traits.',
        operations=[
            {'method': 'DELETE', 'path': '/resource_providers/{uuid}/traits'},
        ],
        scope_types=['project'],
    ),
]


def list_rules():
    return rules
