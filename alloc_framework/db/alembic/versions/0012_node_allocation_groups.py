"""node allocation groups

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-27 07:45:00.000000

All-or-nothing groups of node allocations (an extension of ours): the
request (``members``, ``spread``), the state and the UUIDs of the
ordinary allocations made for the group once it is active.
"""

from alembic import op
from oslo_db.sqlalchemy import types as db_types
import sqlalchemy as sa

revision = '0012'
down_revision = '0011'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'node_allocation_groups',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('uuid', sa.String(length=36), nullable=False),
        sa.Column('name', sa.String(length=255), nullable=True),
        sa.Column('owner', sa.String(length=255), nullable=True),
        sa.Column('state', sa.String(length=15), nullable=False),
        sa.Column('last_error', sa.Text(), nullable=True),
        sa.Column('members', db_types.JsonEncodedList(), nullable=True),
        sa.Column('spread', db_types.JsonEncodedDict(), nullable=True),
        sa.Column('allocations', db_types.JsonEncodedList(), nullable=True),
        sa.Column('conductor_affinity', sa.Integer(), nullable=True),
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('name', name='uniq_node_allocation_groups0name'),
        sa.UniqueConstraint('uuid', name='uniq_node_allocation_groups0uuid'),
        mysql_charset='utf8mb4',
        mysql_engine='InnoDB')
    with op.batch_alter_table('node_allocation_groups') as batch_op:
        batch_op.create_index('node_allocation_groups_state_idx', ['state'],
                              unique=False)
        batch_op.create_index('node_allocation_groups_affinity_idx',
                              ['conductor_affinity'], unique=False)
