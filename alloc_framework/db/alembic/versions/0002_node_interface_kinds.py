"""node boot, bios and firmware interfaces

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-25 10:30:00.000000
"""

from alembic import op
import sqlalchemy as sa

revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('nodes', schema=None) as batch_op:
        for kind in ('boot', 'bios', 'firmware'):
            batch_op.add_column(sa.Column('%s_interface' % kind,
                                          sa.String(length=255),
                                          nullable=True))
