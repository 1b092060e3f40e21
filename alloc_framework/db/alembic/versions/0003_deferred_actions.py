"""deferred actions

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-25 10:40:00.000000
"""

from alembic import op
from oslo_db.sqlalchemy import types as db_types
import sqlalchemy as sa

revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('deferred_actions',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('uuid', sa.String(length=36), nullable=False),
    sa.Column('node_id', sa.Integer(), nullable=False),
    sa.Column('state', sa.String(length=15), nullable=False),
    sa.Column('parent_action', sa.Integer(), nullable=True),
    sa.Column('start_after', sa.DateTime(), nullable=True),
    sa.Column('call', sa.String(length=255), nullable=False),
    sa.Column('arguments', db_types.JsonEncodedDict(), nullable=True),
    sa.Column('retry_remaining', sa.Integer(), nullable=False),
    sa.Column('created_by', sa.String(length=255), nullable=True),
    sa.Column('result', sa.Text(), nullable=True),
    sa.Column('request_id', sa.String(length=255), nullable=True),
    sa.Column('user_id', sa.String(length=255), nullable=True),
    sa.Column('reschedule_count', sa.Integer(), nullable=False),
    sa.Column('deadline', sa.DateTime(), nullable=True),
    sa.Column('conductor', sa.String(length=255), nullable=True),
    sa.Column('deleted_at', sa.DateTime(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['node_id'], ['nodes.id'], ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['parent_action'], ['deferred_actions.id'],
                            ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('uuid', name='uniq_deferred_actions0uuid'),
    mysql_charset='utf8mb4',
    mysql_engine='InnoDB'
    )
    with op.batch_alter_table('deferred_actions', schema=None) as batch_op:
        batch_op.create_index('deferred_actions_node_id_idx', ['node_id'],
                              unique=False)
        batch_op.create_index('deferred_actions_start_after_idx',
                              ['start_after'], unique=False)
        batch_op.create_index('deferred_actions_state_idx', ['state'],
                              unique=False)
