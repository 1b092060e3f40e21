"""Policy enforcement for the Placement API (oslo.policy).

Each application owns an ``Enforcer`` built from the ``ConfigOpts`` it was
loaded with (``[oslo_policy]`` options: policy file,
``enforce_new_defaults`` and, on oslo.policy releases that have it,
``enforce_scope``); the rules' defaults are in ``policies/``.

``DecisionCache`` keeps, per application, the decisions the enforcer
took for [placement_api]policy_cache_seconds: oslo.policy looks for the
policy file and its directories and inspects each check's signature on
every call, about an eighth of the CPU of a ``PUT /allocations``. The
same credentials asking the same rule on the same target get the same
answer within that time; a changed policy file applies once the kept
decisions expire.
"""

import threading
import time

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


def _frozen(value):
    """``value`` as something hashable (mappings and lists included)."""
    if isinstance(value, (str, int, float, bool, type(None))):
        return value
    if isinstance(value, (list, tuple, set, frozenset)):
        return tuple(_frozen(item) for item in value)
    if hasattr(value, 'items'):
        return tuple(sorted((key, _frozen(item))
                            for key, item in value.items()))
    raise TypeError('%s cannot be part of a cache key' % type(value))


class DecisionCache:
    """An enforcer whose decisions are kept for ``seconds``.

    ``authorize`` takes the arguments of ``oslo_policy.Enforcer.authorize``
    and answers the same; a decision is keyed by the rule, the credentials
    (``to_policy_values()`` of the request context) and the target, and
    the decisions are all dropped ``seconds`` after the first of them was
    taken, so that a changed policy file (or a check asking another
    service, such as ``http:``) is consulted again within that time.
    With ``seconds`` 0 every call goes to the enforcer. Refusals are kept
    too (a token of the wrong scope is refused with ``exc`` like any
    other refusal); errors (an unregistered rule) are not.
    """

    # A bound on the decisions kept between two expiries: distinct users
    # and projects beyond it are checked by the enforcer itself.
    max_decisions = 4096

    def __init__(self, enforcer, seconds):
        self.enforcer = enforcer
        self.seconds = seconds
        self._decisions = {}
        self._expires = 0.0
        self._lock = threading.Lock()

    def _current(self):
        """The decisions still valid (a new, empty set once expired)."""
        now = time.monotonic()
        if now >= self._expires:
            with self._lock:
                if now >= self._expires:
                    self._decisions = {}
                    self._expires = now + self.seconds
        return self._decisions

    def authorize(self, rule, target, creds, do_raise=False, exc=None,
                  *args, **kwargs):
        if self.seconds <= 0:
            return self.enforcer.authorize(rule, target, creds, do_raise,
                                           exc, *args, **kwargs)
        try:
            values = (creds.to_policy_values()
                      if hasattr(creds, 'to_policy_values') else creds)
            key = (rule, _frozen(values), _frozen(target))
            hash(key)
        except TypeError:
            return self.enforcer.authorize(rule, target, creds, do_raise,
                                           exc, *args, **kwargs)
        decisions = self._current()
        try:
            result = decisions[key]
        except KeyError:
            # Without do_raise, a token of the wrong scope is a refusal
            # like any other rather than InvalidScope.
            result = self.enforcer.authorize(rule, target, creds)
            if len(decisions) < self.max_decisions:
                decisions[key] = result
        if do_raise and not result:
            if exc:
                raise exc(*args, **kwargs)
            raise oslo_policy.PolicyNotAuthorized(rule, target, creds)
        return result


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
