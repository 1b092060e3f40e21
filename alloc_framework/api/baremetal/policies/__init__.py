"""Every policy rule of the bare metal API (oslo.policy in code)."""

import itertools

from alloc_framework.api.baremetal.policies import allocation
from alloc_framework.api.baremetal.policies import allocation_group
from alloc_framework.api.baremetal.policies import base
from alloc_framework.api.baremetal.policies import conductor
from alloc_framework.api.baremetal.policies import deferred_action
from alloc_framework.api.baremetal.policies import driver
from alloc_framework.api.baremetal.policies import metrics
from alloc_framework.api.baremetal.policies import node


def list_rules():
    return list(itertools.chain(base.list_rules(), node.list_rules(),
                                allocation.list_rules(),
                                allocation_group.list_rules(),
                                conductor.list_rules(), driver.list_rules(),
                                deferred_action.list_rules(),
                                metrics.list_rules()))
