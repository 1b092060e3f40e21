"""Every policy rule of the Placement API.

``list_rules()`` is the ``oslo.policy.policies`` entry point (used by
``oslopolicy-sample-generator`` and friends) and what the enforcer
registers.
"""

import itertools

from alloc_framework.api.placement.policies import aggregate
from alloc_framework.api.placement.policies import allocation
from alloc_framework.api.placement.policies import allocation_candidate
from alloc_framework.api.placement.policies import base
from alloc_framework.api.placement.policies import dashboard
from alloc_framework.api.placement.policies import inventory
from alloc_framework.api.placement.policies import metrics
from alloc_framework.api.placement.policies import reshaper
from alloc_framework.api.placement.policies import resource_class
from alloc_framework.api.placement.policies import resource_provider
from alloc_framework.api.placement.policies import trait
from alloc_framework.api.placement.policies import usage


def list_rules():
    return list(itertools.chain(
        base.list_rules(),
        resource_provider.list_rules(),
        resource_class.list_rules(),
        inventory.list_rules(),
        aggregate.list_rules(),
        usage.list_rules(),
        trait.list_rules(),
        allocation.list_rules(),
        allocation_candidate.list_rules(),
        reshaper.list_rules(),
        metrics.list_rules(),
        dashboard.list_rules(),
    ))
