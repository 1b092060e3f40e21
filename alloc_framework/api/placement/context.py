"""The request context of Placement handlers.

Built for every request by ``auth.PlacementKeystoneContext`` from the
identity headers (keystonemiddleware or noauth) and stored in
``environ['placement.context']``. ``can()`` checks a policy rule with the
enforcer of the application the request runs in.
"""

from alloc_framework.api.placement import policy
from alloc_framework.common import context as common_context


class RequestContext(common_context.RequestContext):
    """A request context that can check Placement policy rules."""

    def __init__(self, *args, **kwargs):
        self.enforcer = kwargs.pop('enforcer', None)
        super().__init__(*args, **kwargs)

    def can(self, action, target=None, fatal=True):
        """Whether the context may perform ``action`` on ``target``.

        :param target: a dict of the entity; by default the context's own
            project and user, which is what project-scoped rules compare.
        :param fatal: raise instead of returning False.
        :raises exception.PolicyNotAuthorized: denied and ``fatal``.
        """
        if target is None:
            target = {'project_id': self.project_id,
                      'user_id': self.user_id}
        return policy.authorize(self.enforcer, self, action, target,
                                do_raise=fatal)
