"""servicing and firmware components

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-25 12:00:00.000000

The firmware components of nodes (``firmware_information``), the step of
a node being serviced (``nodes.service_step``), and the flow a deferred
action belongs to (``deferred_actions.flow``).
"""

from alembic import op
from oslo_db.sqlalchemy import types as db_types
import sqlalchemy as sa

revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('firmware_information',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('node_id', sa.Integer(), nullable=False),
    sa.Column('component', sa.String(length=255), nullable=False),
    sa.Column('initial_version', sa.String(length=255), nullable=False),
    sa.Column('current_version', sa.String(length=255), nullable=True),
    sa.Column('last_version_flashed', sa.String(length=255),
              nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['node_id'], ['nodes.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('node_id', 'component',
                        name='uniq_firmware_information0node_id0component'),
    mysql_charset='utf8mb4',
    mysql_engine='InnoDB'
    )
    with op.batch_alter_table('nodes', schema=None) as batch_op:
        batch_op.add_column(sa.Column('service_step',
                                      db_types.JsonEncodedDict(),
                                      nullable=True))
    with op.batch_alter_table('deferred_actions', schema=None) as batch_op:
        batch_op.add_column(sa.Column('flow', sa.String(length=15),
                                      nullable=True))
