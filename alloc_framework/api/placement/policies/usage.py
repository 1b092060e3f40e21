"""Rules of the usages endpoints.

Names and defaults are those of upstream Placement, so that existing
policy files keep working.
"""

from oslo_policy import policy

from alloc_framework.api.placement.policies import base

PROVIDER_USAGES = 'placement:resource_providers:usages'
TOTAL_USAGES = 'placement:usages'

rules = [
    policy.DocumentedRuleDefault(
        name=PROVIDER_USAGES,
        check_str=base.ADMIN_OR_SERVICE,
        description='List resource provider usages.',
        operations=[
            {'method': 'GET', 'path': '/resource_providers/{uuid}/usages'},
        ],
        scope_types=['project'],
    ),
    policy.DocumentedRuleDefault(
        name=TOTAL_USAGES,
        check_str=base.ADMIN_OR_PROJECT_READER_OR_SERVICE,
        description='List total resource usages for a given project.',
        operations=[
            {'method': 'GET', 'path': '/usages'},
        ],
        scope_types=['project'],
    ),
]


def list_rules():
    return rules
