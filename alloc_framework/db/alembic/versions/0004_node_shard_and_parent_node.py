"""node shard and parent_node

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-25 12:00:00.000000
"""

from alembic import op
import sqlalchemy as sa

revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('nodes', schema=None) as batch_op:
        batch_op.add_column(sa.Column('shard', sa.String(length=255),
                                      nullable=True))
        batch_op.add_column(sa.Column('parent_node', sa.String(length=36),
                                      nullable=True))
        batch_op.create_index('nodes_shard_idx', ['shard'], unique=False)
        batch_op.create_index('nodes_parent_node_idx', ['parent_node'],
                              unique=False)
