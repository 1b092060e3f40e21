"""Check strings shared by the bare metal policies and the generic rules.

The personas follow the upstream bare metal service's secure-RBAC
defaults, so that a policy file written for it works here: system-scoped
admin/member/reader, project owners and lessees of a node, owners of an
allocation, and the ``service`` role.
"""

from oslo_policy import policy

SYSTEM_ADMIN = 'role:admin and system_scope:all'
SYSTEM_MEMBER = '(role:member and system_scope:all) or rule:service_role'
SYSTEM_READER = ('(role:reader and system_scope:all) or '
                 '(role:service and system_scope:all) or rule:service_role')
SYSTEM_SERVICE = 'role:service and system_scope:all'

NODE_OWNER_ADMIN = 'role:admin and project_id:%(node.owner)s'
NODE_OWNER_MANAGER = 'role:manager and project_id:%(node.owner)s'
NODE_OWNER_MEMBER = 'role:member and project_id:%(node.owner)s'
NODE_OWNER_READER = 'role:reader and project_id:%(node.owner)s'
NODE_LESSEE_ADMIN = 'role:admin and project_id:%(node.lessee)s'
NODE_LESSEE_MANAGER = 'role:manager and project_id:%(node.lessee)s'
NODE_PROJECT_MEMBER = ('role:member and (project_id:%(node.owner)s or '
                       'project_id:%(node.lessee)s)')
NODE_PROJECT_READER = ('role:reader and (project_id:%(node.owner)s or '
                       'project_id:%(node.lessee)s)')
PROJECT_SERVICE = 'role:service and project_id:%(node.owner)s'

ALLOCATION_OWNER_MEMBER = 'role:member and project_id:%(allocation.owner)s'
ALLOCATION_OWNER_READER = 'role:reader and project_id:%(allocation.owner)s'


def any_of(*checks):
    """``(a) or (b) or ...``"""
    return ' or '.join('(%s)' % check for check in checks)


SYSTEM_OR_PROJECT_MEMBER = any_of(SYSTEM_MEMBER, NODE_PROJECT_MEMBER,
                                  SYSTEM_SERVICE)
SYSTEM_OR_PROJECT_READER = any_of(SYSTEM_READER, NODE_PROJECT_READER,
                                  PROJECT_SERVICE)
SYSTEM_OR_OWNER_MEMBER_AND_LESSEE_ADMIN = any_of(
    SYSTEM_MEMBER, SYSTEM_SERVICE, NODE_OWNER_MEMBER, NODE_LESSEE_ADMIN,
    NODE_LESSEE_MANAGER, PROJECT_SERVICE)
SYSTEM_MEMBER_OR_OWNER_ADMIN = any_of(
    SYSTEM_MEMBER, SYSTEM_SERVICE, NODE_OWNER_ADMIN, NODE_OWNER_MANAGER,
    PROJECT_SERVICE)
SYSTEM_MEMBER_OR_OWNER_MEMBER = any_of(
    SYSTEM_MEMBER, SYSTEM_SERVICE, NODE_OWNER_MEMBER, PROJECT_SERVICE)
SYSTEM_OR_OWNER_READER = any_of(
    SYSTEM_READER, SYSTEM_SERVICE, NODE_OWNER_READER, PROJECT_SERVICE)

ALLOCATION_MEMBER = any_of(SYSTEM_MEMBER, ALLOCATION_OWNER_MEMBER)
ALLOCATION_READER = any_of(SYSTEM_READER, ALLOCATION_OWNER_READER)
ALLOCATION_CREATOR = any_of(SYSTEM_MEMBER, 'role:member')
API_READER = '(role:reader) or (role:service)'

SCOPES = ['system', 'project']

rules = [
    policy.RuleDefault(
        'public_api', 'is_public_api:True',
        description='Internal flag for public API routes.'),
    policy.RuleDefault(
        'show_password', '!',
        description='Show or mask secrets within node driver information '
                    'in API responses.'),
    policy.RuleDefault(
        'show_instance_secrets', '!',
        description='Show or mask secrets within instance information in '
                    'API responses.'),
    policy.RuleDefault(
        'service_role',
        'role:service and project_name:%(config.service_project_name)s',
        description='Users with the service role in the service project '
                    '(the project named ``service``).'),
]


def list_rules():
    return rules
