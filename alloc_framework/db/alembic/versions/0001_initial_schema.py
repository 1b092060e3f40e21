"""initial schema

Revision ID: 0001
Revises:
Create Date: 2026-11-22 11:17:30.413341
"""

from alembic import op
from oslo_db.sqlalchemy import types as db_types
import sqlalchemy as sa

revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('allocations',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('resource_provider_id', sa.Integer(), nullable=False),
    sa.Column('consumer_id', sa.String(length=36), nullable=False),
    sa.Column('resource_class_id', sa.Integer(), nullable=False),
    sa.Column('used', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.PrimaryKeyConstraint('id'),
    mysql_charset='utf8mb4',
    mysql_engine='InnoDB'
    )
    with op.batch_alter_table('allocations', schema=None) as batch_op:
        batch_op.create_index('allocations_consumer_id_idx', ['consumer_id'], unique=False)
        batch_op.create_index('allocations_resource_class_id_idx', ['resource_class_id'], unique=False)
        batch_op.create_index('allocations_resource_provider_class_used_idx', ['resource_provider_id', 'resource_class_id', 'used'], unique=False)

    op.create_table('conductors',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('hostname', sa.String(length=255), nullable=False),
    sa.Column('online', sa.Boolean(), nullable=False),
    sa.Column('conductor_group', sa.String(length=255), nullable=False),
    sa.Column('drivers', db_types.JsonEncodedList(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('hostname', name='uniq_conductors0hostname'),
    mysql_charset='utf8mb4',
    mysql_engine='InnoDB'
    )
    op.create_table('consumer_types',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.Unicode(length=255), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('name', name='uniq_consumer_types0name'),
    mysql_charset='utf8mb4',
    mysql_engine='InnoDB'
    )
    op.create_table('consumers',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('uuid', sa.String(length=36), nullable=False),
    sa.Column('project_id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('generation', sa.Integer(), nullable=False),
    sa.Column('consumer_type_id', sa.Integer(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('uuid', name='uniq_consumers0uuid'),
    mysql_charset='utf8mb4',
    mysql_engine='InnoDB'
    )
    with op.batch_alter_table('consumers', schema=None) as batch_op:
        batch_op.create_index('consumers_project_id_user_id_uuid_idx', ['project_id', 'user_id', 'uuid'], unique=False)

    op.create_table('inventories',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('resource_provider_id', sa.Integer(), nullable=False),
    sa.Column('resource_class_id', sa.Integer(), nullable=False),
    sa.Column('total', sa.Integer(), nullable=False),
    sa.Column('reserved', sa.Integer(), nullable=False),
    sa.Column('min_unit', sa.Integer(), nullable=False),
    sa.Column('max_unit', sa.Integer(), nullable=False),
    sa.Column('step_size', sa.Integer(), nullable=False),
    sa.Column('allocation_ratio', sa.Float(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('resource_provider_id', 'resource_class_id', name='uniq_inventories0resource_provider_resource_class'),
    mysql_charset='utf8mb4',
    mysql_engine='InnoDB'
    )
    with op.batch_alter_table('inventories', schema=None) as batch_op:
        batch_op.create_index('inventories_resource_class_id_idx', ['resource_class_id'], unique=False)

    op.create_table('placement_aggregates',
    sa.Column('id', sa.Integer(), autoincrement=True, nullable=False),
    sa.Column('uuid', sa.String(length=36), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('uuid', name='uniq_placement_aggregates0uuid'),
    mysql_charset='utf8mb4',
    mysql_engine='InnoDB'
    )
    op.create_table('projects',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('external_id', sa.String(length=255), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('external_id', name='uniq_projects0external_id'),
    mysql_charset='utf8mb4',
    mysql_engine='InnoDB'
    )
    op.create_table('resource_classes',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('name', name='uniq_resource_classes0name'),
    mysql_charset='utf8mb4',
    mysql_engine='InnoDB'
    )
    op.create_table('resource_provider_aggregates',
    sa.Column('resource_provider_id', sa.Integer(), nullable=False),
    sa.Column('aggregate_id', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.PrimaryKeyConstraint('resource_provider_id', 'aggregate_id'),
    mysql_charset='utf8mb4',
    mysql_engine='InnoDB'
    )
    with op.batch_alter_table('resource_provider_aggregates', schema=None) as batch_op:
        batch_op.create_index('resource_provider_aggregates_aggregate_id_idx', ['aggregate_id'], unique=False)

    op.create_table('resource_providers',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('uuid', sa.String(length=36), nullable=False),
    sa.Column('name', sa.Unicode(length=200), nullable=True),
    sa.Column('generation', sa.Integer(), nullable=False),
    sa.Column('root_provider_id', sa.Integer(), nullable=True),
    sa.Column('parent_provider_id', sa.Integer(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['parent_provider_id'], ['resource_providers.id'], ),
    sa.ForeignKeyConstraint(['root_provider_id'], ['resource_providers.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('name', name='uniq_resource_providers0name'),
    sa.UniqueConstraint('uuid', name='uniq_resource_providers0uuid'),
    mysql_charset='utf8mb4',
    mysql_engine='InnoDB'
    )
    with op.batch_alter_table('resource_providers', schema=None) as batch_op:
        batch_op.create_index('resource_providers_parent_provider_id_idx', ['parent_provider_id'], unique=False)
        batch_op.create_index('resource_providers_root_provider_id_idx', ['root_provider_id'], unique=False)

    op.create_table('traits',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('name', sa.Unicode(length=255), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('name', name='uniq_traits0name'),
    mysql_charset='utf8mb4',
    mysql_engine='InnoDB'
    )
    op.create_table('users',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('external_id', sa.String(length=255), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('external_id', name='uniq_users0external_id'),
    mysql_charset='utf8mb4',
    mysql_engine='InnoDB'
    )
    op.create_table('nodes',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('uuid', sa.String(length=36), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=True),
    sa.Column('description', sa.Text(), nullable=True),
    sa.Column('driver', sa.String(length=255), nullable=False),
    sa.Column('driver_info', db_types.JsonEncodedDict(), nullable=True),
    sa.Column('driver_internal_info', db_types.JsonEncodedDict(), nullable=True),
    sa.Column('properties', db_types.JsonEncodedDict(), nullable=True),
    sa.Column('extra', db_types.JsonEncodedDict(), nullable=True),
    sa.Column('instance_info', db_types.JsonEncodedDict(), nullable=True),
    sa.Column('instance_uuid', sa.String(length=36), nullable=True),
    sa.Column('resource_class', sa.String(length=80), nullable=True),
    sa.Column('power_state', sa.String(length=15), nullable=True),
    sa.Column('target_power_state', sa.String(length=15), nullable=True),
    sa.Column('provision_state', sa.String(length=15), nullable=True),
    sa.Column('target_provision_state', sa.String(length=15), nullable=True),
    sa.Column('provision_updated_at', sa.DateTime(), nullable=True),
    sa.Column('maintenance', sa.Boolean(), nullable=False),
    sa.Column('maintenance_reason', sa.Text(), nullable=True),
    sa.Column('fault', sa.String(length=255), nullable=True),
    sa.Column('last_error', sa.Text(), nullable=True),
    sa.Column('clean_step', db_types.JsonEncodedDict(), nullable=True),
    sa.Column('deploy_step', db_types.JsonEncodedDict(), nullable=True),
    sa.Column('reservation', sa.String(length=255), nullable=True),
    sa.Column('conductor_affinity', sa.Integer(), nullable=True),
    sa.Column('conductor_group', sa.String(length=255), nullable=False),
    sa.Column('allocation_id', sa.Integer(), nullable=True),
    sa.Column('owner', sa.String(length=255), nullable=True),
    sa.Column('lessee', sa.String(length=255), nullable=True),
    sa.Column('power_interface', sa.String(length=255), nullable=True),
    sa.Column('deploy_interface', sa.String(length=255), nullable=True),
    sa.Column('management_interface', sa.String(length=255), nullable=True),
    sa.Column('automated_clean', sa.Boolean(), nullable=True),
    sa.Column('protected', sa.Boolean(), nullable=False),
    sa.Column('protected_reason', sa.Text(), nullable=True),
    sa.Column('retired', sa.Boolean(), nullable=True),
    sa.Column('retired_reason', sa.Text(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['conductor_affinity'], ['conductors.id'], name='nodes_conductor_affinity_fk'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('instance_uuid', name='uniq_nodes0instance_uuid'),
    sa.UniqueConstraint('name', name='uniq_nodes0name'),
    sa.UniqueConstraint('uuid', name='uniq_nodes0uuid'),
    mysql_charset='utf8mb4',
    mysql_engine='InnoDB'
    )
    with op.batch_alter_table('nodes', schema=None) as batch_op:
        batch_op.create_index('nodes_alloc_idx', ['provision_state', 'resource_class', 'instance_uuid', 'id'], unique=False)
        batch_op.create_index('nodes_conductor_group_idx', ['conductor_group'], unique=False)
        batch_op.create_index('nodes_reservation_idx', ['reservation'], unique=False)

    op.create_table('resource_provider_traits',
    sa.Column('trait_id', sa.Integer(), nullable=False),
    sa.Column('resource_provider_id', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['resource_provider_id'], ['resource_providers.id'], ),
    sa.ForeignKeyConstraint(['trait_id'], ['traits.id'], ),
    sa.PrimaryKeyConstraint('trait_id', 'resource_provider_id'),
    mysql_charset='utf8mb4',
    mysql_engine='InnoDB'
    )
    with op.batch_alter_table('resource_provider_traits', schema=None) as batch_op:
        batch_op.create_index('resource_provider_traits_resource_provider_trait_idx', ['resource_provider_id', 'trait_id'], unique=False)

    op.create_table('node_allocations',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('uuid', sa.String(length=36), nullable=False),
    sa.Column('name', sa.String(length=255), nullable=True),
    sa.Column('node_id', sa.Integer(), nullable=True),
    sa.Column('state', sa.String(length=15), nullable=False),
    sa.Column('owner', sa.String(length=255), nullable=True),
    sa.Column('last_error', sa.Text(), nullable=True),
    sa.Column('resource_class', sa.String(length=80), nullable=True),
    sa.Column('candidate_nodes', db_types.JsonEncodedList(), nullable=True),
    sa.Column('extra', db_types.JsonEncodedDict(), nullable=True),
    sa.Column('conductor_affinity', sa.Integer(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['node_id'], ['nodes.id'], name='node_allocations_node_fk', ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('name', name='uniq_node_allocations0name'),
    sa.UniqueConstraint('uuid', name='uniq_node_allocations0uuid'),
    mysql_charset='utf8mb4',
    mysql_engine='InnoDB'
    )
    with op.batch_alter_table('node_allocations', schema=None) as batch_op:
        batch_op.create_index('node_allocations_affinity_idx', ['conductor_affinity'], unique=False)
        batch_op.create_index('node_allocations_state_idx', ['state'], unique=False)

    op.create_table('node_history',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('uuid', sa.String(length=36), nullable=False),
    sa.Column('node_id', sa.Integer(), nullable=False),
    sa.Column('conductor', sa.String(length=255), nullable=True),
    sa.Column('event_type', sa.String(length=255), nullable=True),
    sa.Column('severity', sa.String(length=255), nullable=True),
    sa.Column('event', sa.Text(), nullable=True),
    sa.Column('user', sa.String(length=255), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['node_id'], ['nodes.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('uuid', name='uniq_node_history0uuid'),
    mysql_charset='utf8mb4',
    mysql_engine='InnoDB'
    )
    with op.batch_alter_table('node_history', schema=None) as batch_op:
        batch_op.create_index('node_history_node_id_idx', ['node_id'], unique=False)

    op.create_table('node_traits',
    sa.Column('node_id', sa.Integer(), nullable=False),
    sa.Column('trait', sa.String(length=255), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['node_id'], ['nodes.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('node_id', 'trait'),
    mysql_charset='utf8mb4',
    mysql_engine='InnoDB'
    )
    with op.batch_alter_table('node_traits', schema=None) as batch_op:
        batch_op.create_index('node_traits_idx', ['trait'], unique=False)

    op.create_table('node_allocation_traits',
    sa.Column('allocation_id', sa.Integer(), nullable=False),
    sa.Column('trait', sa.String(length=255), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=True),
    sa.Column('updated_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['allocation_id'], ['node_allocations.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('allocation_id', 'trait'),
    mysql_charset='utf8mb4',
    mysql_engine='InnoDB'
    )
