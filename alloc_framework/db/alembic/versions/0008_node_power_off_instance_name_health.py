"""node disable_power_off, instance_name and health

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-27 05:00:00.000000

Three node fields of the bare metal API: ``disable_power_off`` (the
service never powers the node off), ``instance_name`` (kept in step with
``instance_info['display_name']``) and ``health`` (the health the BMC
last reported).
"""

from alembic import op
import sqlalchemy as sa

revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('nodes', schema=None) as batch_op:
        batch_op.add_column(sa.Column('disable_power_off', sa.Boolean(),
                                      nullable=False,
                                      server_default=sa.false()))
        batch_op.add_column(sa.Column('instance_name', sa.String(255),
                                      nullable=True))
        batch_op.add_column(sa.Column('health', sa.String(15),
                                      nullable=True))
