"""project of a node history event

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-27 05:00:00.000000

The project of the request that caused a node history event (bare metal
API 1.113), beside its user.
"""

from alembic import op
import sqlalchemy as sa

revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade():
    op.add_column('node_history',
                  sa.Column('project', sa.String(80), nullable=True))
