"""Rules of /allocation_candidates.

Names and defaults are those of upstream Placement, so that existing
policy files keep working.
"""

from oslo_policy import policy

from alloc_framework.api.placement.policies import base

LIST = 'placement:allocation_candidates:list'

rules = [
    policy.DocumentedRuleDefault(
        name=LIST,
        check_str=base.ADMIN_OR_SERVICE,
        description='List allocation candidates.',
        operations=[
            {'method': 'GET', 'path': '/allocation_candidates'},
        ],
        scope_types=['project'],
    ),
]


def list_rules():
    return rules
