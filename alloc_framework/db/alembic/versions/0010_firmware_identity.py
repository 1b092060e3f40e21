"""vendor, model and serial number of firmware components

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-27 05:20:00.000000

What the hardware says of the device whose firmware a component row
records (bare metal API 1.114); null when the hardware does not tell.
"""

from alembic import op
import sqlalchemy as sa

revision = '0010'
down_revision = '0009'
branch_labels = None
depends_on = None


def upgrade():
    for name in ('vendor', 'model', 'serial_number'):
        op.add_column('firmware_information',
                      sa.Column(name, sa.String(255), nullable=True))
