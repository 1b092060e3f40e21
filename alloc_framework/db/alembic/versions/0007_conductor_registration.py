"""registration token of a conductor

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-02 10:00:00.000000

A conductor row names the process that registered it: the token that
process wrote. A process only heartbeats and unregisters the row while
the token is its own, and another process takes the row over only once
its heartbeat is older than the dead-conductor timeout.
"""

from alembic import op
import sqlalchemy as sa

revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade():
    op.add_column('conductors',
                  sa.Column('registration', sa.String(36), nullable=True))
