"""Policy enforcement of the bare metal API (oslo.policy).

As in the upstream bare metal service, rules are only enforced with
``auth_strategy = keystone``: ``noauth`` and ``http_basic`` trust every
request that got through (``http_basic`` users are operators).
"""

import sys

from oslo_policy import policy as oslo_policy

from alloc_framework.api.baremetal import errors
from alloc_framework.api.baremetal import policies
from alloc_framework import conf as af_conf

# The project whose ``service`` role holders are treated as services.
SERVICE_PROJECT_NAME = 'service'


class Policy:
    """An enforcer bound to one configuration."""

    def __init__(self, conf):
        self.conf = conf
        self.enabled = conf.auth_strategy == 'keystone'
        self.enforcer = make_enforcer(conf)

    def _target(self, context, target):
        full = {'project_id': context.project_id,
                'config.service_project_name': SERVICE_PROJECT_NAME}
        full.update(target or {})
        return full

    def check(self, context, rule, target=None):
        """True when ``rule`` allows the request (never raises)."""
        if not self.enabled:
            return True
        return self.enforcer.enforce(rule, self._target(context, target),
                                     context, do_raise=False)

    def authorize(self, context, rule, target=None):
        """Raise a 403 unless ``rule`` allows the request."""
        if not self.check(context, rule, target):
            raise errors.HTTPError(
                403, '%s is disallowed by policy' % rule,
                errors.POLICY_FORBIDDEN)


def make_enforcer(conf):
    enforcer = oslo_policy.Enforcer(conf)
    enforcer.register_defaults(policies.list_rules())
    return enforcer


def get_oslo_policy_enforcer():
    """Entry point of the oslo.policy command line tools.

    Their own options (``--namespace``, ``--output-file``) are dropped from
    the command line before our configuration parses it.
    """
    args = []
    argv = iter(sys.argv[1:])
    for arg in argv:
        name = arg.lstrip('-').split('=')[0]
        if name in ('namespace', 'output-file'):
            if '=' not in arg:
                next(argv, None)
            continue
        args.append(arg)
    af_conf.CONF(args, project='alloc_framework')
    return make_enforcer(af_conf.CONF)


def node_target(node):
    return {'node.owner': node.owner, 'node.lessee': node.lessee}


def allocation_target(allocation):
    return {'allocation.owner': allocation.owner}
