"""provision state and duration of a node history event

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-27 05:21:00.000000

The node's provision state and target when an event was recorded, and
for an event that records a change of provision state the seconds the
node spent in the state it left (bare metal API 1.115).
"""

from alembic import op
import sqlalchemy as sa

revision = '0011'
down_revision = '0010'
branch_labels = None
depends_on = None


def upgrade():
    op.add_column('node_history',
                  sa.Column('state', sa.String(255), nullable=True))
    op.add_column('node_history',
                  sa.Column('target_provision_state', sa.String(255),
                            nullable=True))
    op.add_column('node_history',
                  sa.Column('duration_seconds', sa.Integer, nullable=True))
