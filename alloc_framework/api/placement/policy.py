"""Policy enforcement for the Placement API (oslo.policy).

Each application owns an ``Enforcer`` built from the ``ConfigOpts`` it was
loaded with (``[oslo_policy]`` options: policy file,
``enforce_new_defaults`` and, on oslo.policy releases that have it,
``enforce_scope``); the rules' defaults are in ``policies/``.
"""

from oslo_log import log as logging
from oslo_policy import opts as policy_opts
from oslo_policy import policy as oslo_policy

from alloc_framework.api.placement import policies
from alloc_framework.objects.placement import exception

LOG = logging.getLogger(__name__)


def get_enforcer(conf):
    """A new enforcer over ``conf`` with every Placement rule registered."""
    # set_defaults registers [oslo_policy] on conf when needed.
    policy_opts.set_defaults(conf)
    enforcer = oslo_policy.Enforcer(conf)
    # Every process (and test) builds an enforcer: warn about the changed
    # defaults in the documentation, not once per build.
    enforcer.suppress_default_change_warnings = True
    enforcer.register_defaults(policies.list_rules())
    enforcer.load_rules()
    return enforcer


def get_oslo_policy_enforcer():
    """Entry point for the oslopolicy-* tools (oslo.policy.enforcer)."""
    from alloc_framework import conf as af_conf
    conf = af_conf.CONF
    # The tools parse their own command line; an empty one here lets
    # oslo.config find the default configuration files.
    conf([], project='alloc_framework')
    return get_enforcer(conf)


def authorize(enforcer, context, action, target, do_raise=True):
    """Check ``action`` for ``context`` on ``target`` with ``enforcer``.

    :raises exception.PolicyNotAuthorized: denied (also for a token of the
        wrong scope when ``enforce_scope`` is on) and ``do_raise``.
    """
    try:
        return enforcer.authorize(
            action, target, context, do_raise=do_raise,
            exc=exception.PolicyNotAuthorized, action=action)
    except oslo_policy.PolicyNotRegistered:
        LOG.exception('Policy rule %s is not registered', action)
        raise
    except oslo_policy.InvalidScope:
        LOG.debug('Policy check for %s failed: token scope', action)
        if do_raise:
            raise exception.PolicyNotAuthorized(action=action)
        return False
