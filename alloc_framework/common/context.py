"""Request context shared by the APIs, the conductor and the objects."""

from oslo_context import context
from oslo_db.sqlalchemy import enginefacade


@enginefacade.transaction_context_provider
class RequestContext(context.RequestContext):
    """An oslo.context request context that carries DB transactions."""

    def to_policy_values(self):
        values = super().to_policy_values()
        values['project_id'] = self.project_id
        return values


def get_admin_context():
    """A context for internal work: admin, no user, no project."""
    return RequestContext(is_admin=True, roles=['admin'],
                          overwrite=False)
