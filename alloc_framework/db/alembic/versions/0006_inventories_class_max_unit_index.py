"""index of inventories by class and max_unit

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-25 13:30:00.000000

The search of allocation candidates reads the inventories of one class
that can take an amount (``max_unit >= amount``) as one index range.
"""

from alembic import op

revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade():
    op.create_index('inventories_resource_class_id_max_unit_idx',
                    'inventories', ['resource_class_id', 'max_unit'])
