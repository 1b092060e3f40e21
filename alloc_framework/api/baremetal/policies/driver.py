"""Policies of the driver (hardware type) endpoints, as upstream's."""

from oslo_policy import policy

from alloc_framework.api.baremetal.policies import base

rules = [
    policy.DocumentedRuleDefault(
        name='baremetal:driver:get',
        check_str=base.SYSTEM_READER,
        scope_types=base.SCOPES,
        description='View list of available drivers',
        operations=[{'path': '/drivers', 'method': 'GET'},
                    {'path': '/drivers/{driver_name}', 'method': 'GET'}]),
    policy.DocumentedRuleDefault(
        name='baremetal:driver:get_properties',
        check_str=base.SYSTEM_READER,
        scope_types=base.SCOPES,
        description='View driver-specific properties',
        operations=[{'path': '/drivers/{driver_name}/properties',
                     'method': 'GET'}]),
]


def list_rules():
    return rules
