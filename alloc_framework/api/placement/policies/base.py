"""Base rules of the Placement policy, referenced by every other rule.

Secure-RBAC defaults (``admin_or_service_api`` etc.) apply when
``[oslo_policy]enforce_new_defaults`` is true; otherwise the deprecated
``role:admin`` rule is also accepted, as in upstream Placement. All rules
are project scoped: with ``enforce_scope`` a system-scoped token is refused.
"""

from oslo_log import versionutils
from oslo_policy import policy

RULE_ADMIN_API = 'rule:admin_api'
ADMIN_OR_SERVICE = 'rule:admin_or_service_api'
SERVICE = 'rule:service_api'
ADMIN_OR_PROJECT_READER_OR_SERVICE = (
    'rule:admin_or_project_reader_or_service_api')

_DEPRECATED_REASON = """
The Placement API policies now have new default roles (admin, service,
project reader) and scope types. The old admin-only default is deprecated
and is ignored when [oslo_policy]enforce_new_defaults is true.
"""

DEPRECATED_ADMIN_POLICY = policy.DeprecatedRule(
    name=RULE_ADMIN_API,
    check_str='role:admin',
    deprecated_reason=_DEPRECATED_REASON,
    deprecated_since=versionutils.deprecated.WALLABY,
)

rules = [
    policy.RuleDefault(
        'admin_api',
        'role:admin',
        description='Default rule for most placement APIs.',
        scope_types=['project'],
    ),
    policy.RuleDefault(
        'service_api',
        'role:service',
        description='Default rule for service-to-service placement APIs.',
        scope_types=['project'],
        deprecated_rule=DEPRECATED_ADMIN_POLICY,
    ),
    policy.RuleDefault(
        'admin_or_service_api',
        'role:admin or role:service',
        description='Default rule for most placement APIs.',
        scope_types=['project'],
        deprecated_rule=DEPRECATED_ADMIN_POLICY,
    ),
    policy.RuleDefault(
        name='project_reader_api',
        check_str='role:reader and project_id:%(project_id)s',
        description='Default rule for project level reader APIs.',
        deprecated_rule=DEPRECATED_ADMIN_POLICY,
    ),
    policy.RuleDefault(
        'admin_or_project_reader_or_service_api',
        'role:admin or rule:project_reader_api or role:service',
        description='Default rule for project level reader APIs.',
        scope_types=['project'],
        deprecated_rule=DEPRECATED_ADMIN_POLICY,
    ),
]


def list_rules():
    return rules
