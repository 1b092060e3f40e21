"""marks of the providers' classes written below their usage

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-27 10:40:00.000000

``over_capacity_marks``: the (provider, resource class) pairs whose
inventory was last written below what is allocated from it, the only
pairs that can be over capacity (claims are checked against capacity).
The readers of "providers over capacity" re-check these rows instead of
grouping every allocation. The upgrade marks every pair over capacity
now (and the allocations of a class the provider has no inventory of,
which only damaged data has), with a margin of one unit: a mark too
many is re-checked and not counted, a mark too few would hide a
provider.
"""

from alembic import op
import sqlalchemy as sa

revision = '0013'
down_revision = '0012'
branch_labels = None
depends_on = None


def upgrade():
    marks = op.create_table(
        'over_capacity_marks',
        sa.Column('created_at', sa.DateTime(), nullable=True),
        sa.Column('updated_at', sa.DateTime(), nullable=True),
        sa.Column('resource_provider_id', sa.Integer(), nullable=False,
                  autoincrement=False),
        sa.Column('resource_class_id', sa.Integer(), nullable=False,
                  autoincrement=False),
        sa.PrimaryKeyConstraint('resource_provider_id', 'resource_class_id'),
        mysql_charset='utf8mb4',
        mysql_engine='InnoDB')
    alloc = sa.table('allocations', sa.column('resource_provider_id'),
                     sa.column('resource_class_id'), sa.column('used'))
    inv = sa.table('inventories', sa.column('resource_provider_id'),
                   sa.column('resource_class_id'), sa.column('total'),
                   sa.column('reserved'), sa.column('allocation_ratio'))
    usage = sa.select(
        alloc.c.resource_provider_id, alloc.c.resource_class_id,
        sa.func.sum(alloc.c.used).label('used'),
    ).group_by(alloc.c.resource_provider_id,
               alloc.c.resource_class_id).subquery('usage')
    over = sa.select(
        usage.c.resource_provider_id, usage.c.resource_class_id,
    ).select_from(usage.outerjoin(inv, sa.and_(
        inv.c.resource_provider_id == usage.c.resource_provider_id,
        inv.c.resource_class_id == usage.c.resource_class_id,
    ))).where(usage.c.used > 0, sa.or_(
        inv.c.total.is_(None),
        usage.c.used + 1 >
        (inv.c.total - inv.c.reserved) * inv.c.allocation_ratio))
    op.execute(marks.insert().from_select(
        ['resource_provider_id', 'resource_class_id'], over))
