"""Policies of the node endpoints (rule names as upstream)."""

from oslo_policy import policy

from alloc_framework.api.baremetal.policies import base

NODE = '/nodes/{node_ident}'


def _rule(name, check, description, path, method):
    return policy.DocumentedRuleDefault(
        name=name, check_str=check, scope_types=base.SCOPES,
        description=description,
        operations=[{'path': path, 'method': method}])


rules = [
    _rule('baremetal:node:create',
          base.any_of(base.SYSTEM_ADMIN, base.SYSTEM_SERVICE),
          'Create Node records', '/nodes', 'POST'),
    _rule('baremetal:node:create:self_owned_node',
          '(role:admin) or (role:service)',
          'Create node records owned by the project of the caller.',
          '/nodes', 'POST'),
    policy.DocumentedRuleDefault(
        name='baremetal:node:list', check_str=base.API_READER,
        scope_types=base.SCOPES,
        description='Retrieve multiple Node records, filtered by the '
                    'project of the caller (owner or lessee)',
        operations=[{'path': '/nodes', 'method': 'GET'},
                    {'path': '/nodes/detail', 'method': 'GET'}]),
    policy.DocumentedRuleDefault(
        name='baremetal:node:list_all', check_str=base.SYSTEM_READER,
        scope_types=base.SCOPES,
        description='Retrieve multiple Node records of every project',
        operations=[{'path': '/nodes', 'method': 'GET'},
                    {'path': '/nodes/detail', 'method': 'GET'}]),
    _rule('baremetal:node:get', base.SYSTEM_OR_PROJECT_READER,
          'Retrieve a single Node record', NODE, 'GET'),
    _rule('baremetal:node:get:driver_info', base.SYSTEM_OR_OWNER_READER,
          'Show the node driver_info field (secrets stay masked).',
          NODE, 'GET'),
    _rule('baremetal:node:get:driver_internal_info',
          base.SYSTEM_OR_OWNER_READER,
          'Show the node driver_internal_info field.', NODE, 'GET'),
    _rule('baremetal:node:get:last_error', base.SYSTEM_OR_OWNER_READER,
          'Show the node last_error field.', NODE, 'GET'),
    _rule('baremetal:node:get:reservation', base.SYSTEM_OR_OWNER_READER,
          'Show the node reservation field.', NODE, 'GET'),
    _rule('baremetal:node:update', base.SYSTEM_OR_PROJECT_MEMBER,
          'Generalized update of node records', NODE, 'PATCH'),
    _rule('baremetal:node:update:driver_info',
          base.SYSTEM_MEMBER_OR_OWNER_MEMBER,
          'Update the node driver_info field.', NODE, 'PATCH'),
    _rule('baremetal:node:update:properties',
          base.SYSTEM_MEMBER_OR_OWNER_MEMBER,
          'Update the node properties field.', NODE, 'PATCH'),
    _rule('baremetal:node:update:instance_uuid',
          base.SYSTEM_MEMBER_OR_OWNER_MEMBER,
          'Update the node instance_uuid field.', NODE, 'PATCH'),
    _rule('baremetal:node:update:lessee',
          base.SYSTEM_MEMBER_OR_OWNER_MEMBER,
          'Update the node lessee field.', NODE, 'PATCH'),
    _rule('baremetal:node:update:owner', base.SYSTEM_MEMBER,
          'Update the node owner field.', NODE, 'PATCH'),
    _rule('baremetal:node:update:driver_interfaces',
          base.SYSTEM_MEMBER_OR_OWNER_ADMIN,
          'Update the node driver and its interfaces.', NODE, 'PATCH'),
    _rule('baremetal:node:update:conductor_group', base.SYSTEM_MEMBER,
          'Update the node conductor_group field.', NODE, 'PATCH'),
    _rule('baremetal:node:update:name', base.SYSTEM_MEMBER_OR_OWNER_MEMBER,
          'Update the node name field.', NODE, 'PATCH'),
    _rule('baremetal:node:update:retired',
          base.SYSTEM_MEMBER_OR_OWNER_MEMBER,
          'Update the node retired and retired_reason fields.',
          NODE, 'PATCH'),
    _rule('baremetal:node:update_extra', base.SYSTEM_OR_PROJECT_MEMBER,
          'Update the node extra field', NODE, 'PATCH'),
    _rule('baremetal:node:update_instance_info',
          base.SYSTEM_OR_OWNER_MEMBER_AND_LESSEE_ADMIN,
          'Update the node instance_info field', NODE, 'PATCH'),
    _rule('baremetal:node:update_owner_provisioned', base.SYSTEM_ADMIN,
          'Update the node owner even when the node is provisioned',
          NODE, 'PATCH'),
    _rule('baremetal:node:delete', base.SYSTEM_ADMIN,
          'Delete Node records', NODE, 'DELETE'),
    _rule('baremetal:node:set_maintenance',
          base.SYSTEM_OR_OWNER_MEMBER_AND_LESSEE_ADMIN,
          'Set the maintenance flag, taking a Node out of service',
          NODE + '/maintenance', 'PUT'),
    _rule('baremetal:node:clear_maintenance',
          base.SYSTEM_OR_OWNER_MEMBER_AND_LESSEE_ADMIN,
          'Clear the maintenance flag, placing the Node into service again',
          NODE + '/maintenance', 'DELETE'),
    _rule('baremetal:node:get_states', base.SYSTEM_OR_PROJECT_READER,
          'View Node power and provision state', NODE + '/states', 'GET'),
    _rule('baremetal:node:set_power_state', base.SYSTEM_OR_PROJECT_MEMBER,
          'Change Node power status', NODE + '/states/power', 'PUT'),
    _rule('baremetal:node:get_boot_device', base.SYSTEM_OR_PROJECT_MEMBER,
          'Retrieve Node boot device metadata (the next boot device and '
          'the supported ones)', NODE + '/management/boot_device', 'GET'),
    _rule('baremetal:node:set_boot_device', base.SYSTEM_OR_PROJECT_MEMBER,
          'Change Node boot device', NODE + '/management/boot_device',
          'PUT'),
    _rule('baremetal:node:set_provision_state',
          base.SYSTEM_OR_OWNER_MEMBER_AND_LESSEE_ADMIN,
          'Change Node provision status', NODE + '/states/provision', 'PUT'),
    _rule('baremetal:node:traits:list', base.SYSTEM_OR_PROJECT_READER,
          'List node traits', NODE + '/traits', 'GET'),
    policy.DocumentedRuleDefault(
        name='baremetal:node:traits:set',
        check_str=base.SYSTEM_MEMBER_OR_OWNER_ADMIN,
        scope_types=base.SCOPES,
        description='Add a trait to, or replace all traits of, a node',
        operations=[{'path': NODE + '/traits', 'method': 'PUT'},
                    {'path': NODE + '/traits/{trait}', 'method': 'PUT'}]),
    policy.DocumentedRuleDefault(
        name='baremetal:node:traits:delete',
        check_str=base.SYSTEM_MEMBER_OR_OWNER_ADMIN,
        scope_types=base.SCOPES,
        description='Remove one or all traits from a node',
        operations=[{'path': NODE + '/traits', 'method': 'DELETE'},
                    {'path': NODE + '/traits/{trait}', 'method': 'DELETE'}]),
    policy.DocumentedRuleDefault(
        name='baremetal:node:history:get',
        check_str=base.SYSTEM_OR_OWNER_READER,
        scope_types=base.SCOPES,
        description='Retrieve the history records of a node.',
        operations=[{'path': NODE + '/history', 'method': 'GET'},
                    {'path': NODE + '/history/{event_ident}',
                     'method': 'GET'}]),
]


def list_rules():
    return rules
