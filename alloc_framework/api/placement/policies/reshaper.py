"""Rules of /reshaper.

Names and defaults are those of upstream Placement, so that existing
policy files keep working.
"""

from oslo_policy import policy

from alloc_framework.api.placement.policies import base

RESHAPE = 'placement:reshaper:reshape'

rules = [
    policy.DocumentedRuleDefault(
        name=RESHAPE,
        check_str=base.SERVICE,
        description='Reshape Inventory and Allocations.',
        operations=[
            {'method': 'POST', 'path': '/reshaper'},
        ],
        scope_types=['project'],
    ),
]


def list_rules():
    return rules
