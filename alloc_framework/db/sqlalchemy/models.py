"""SQLAlchemy models of every table.

Bare metal tables follow the upstream bare metal service (``nodes``,
``conductors``, ...; its ``allocations`` table is ``node_allocations`` here),
Placement tables follow upstream Placement (``resource_providers``,
``inventories``, ``allocations``, ...). Schema changes go through alembic
migrations in ``alloc_framework/db/alembic/versions``; a unit test keeps the
models and the migrations in sync.
"""

from oslo_db.sqlalchemy import models
from oslo_db.sqlalchemy import types as db_types
import sqlalchemy as sa
from sqlalchemy import orm


class Base(models.TimestampMixin, models.ModelBase):
    """Every table has created_at and updated_at."""


BASE = orm.declarative_base(cls=Base)
# InnoDB and utf8mb4 on MySQL; harmless elsewhere.
TABLE_ARGS = {'mysql_engine': 'InnoDB', 'mysql_charset': 'utf8mb4'}


# --- bare metal --------------------------------------------------------------

class Conductor(BASE):
    """A conductor service; ``updated_at`` is its heartbeat."""

    __tablename__ = 'conductors'
    __table_args__ = (sa.UniqueConstraint('hostname',
                                          name='uniq_conductors0hostname'),
                      TABLE_ARGS)
    id = sa.Column(sa.Integer, primary_key=True)
    hostname = sa.Column(sa.String(255), nullable=False)
    online = sa.Column(sa.Boolean, nullable=False, default=True)
    conductor_group = sa.Column(sa.String(255), nullable=False, default='')
    drivers = sa.Column(db_types.JsonEncodedList)
    # The token of the process that registered the row: only that process
    # heartbeats and unregisters it (see objects.baremetal.conductor).
    registration = sa.Column(sa.String(36), nullable=True)


class Node(BASE):
    """A bare metal node."""

    __tablename__ = 'nodes'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_nodes0uuid'),
        sa.UniqueConstraint('name', name='uniq_nodes0name'),
        sa.UniqueConstraint('instance_uuid', name='uniq_nodes0instance_uuid'),
        # Allocation samples free nodes of a resource class in id order
        # from a random id: the index answers that without a table scan.
        sa.Index('nodes_alloc_idx', 'provision_state', 'resource_class',
                 'instance_uuid', 'id'),
        sa.Index('nodes_reservation_idx', 'reservation'),
        sa.Index('nodes_conductor_group_idx', 'conductor_group'),
        sa.Index('nodes_shard_idx', 'shard'),
        sa.Index('nodes_parent_node_idx', 'parent_node'),
        TABLE_ARGS)
    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=False)
    name = sa.Column(sa.String(255), nullable=True)
    description = sa.Column(sa.Text, nullable=True)
    driver = sa.Column(sa.String(255), nullable=False)
    driver_info = sa.Column(db_types.JsonEncodedDict)
    driver_internal_info = sa.Column(db_types.JsonEncodedDict)
    properties = sa.Column(db_types.JsonEncodedDict)
    extra = sa.Column(db_types.JsonEncodedDict)
    instance_info = sa.Column(db_types.JsonEncodedDict)
    instance_uuid = sa.Column(sa.String(36), nullable=True)
    resource_class = sa.Column(sa.String(80), nullable=True)
    power_state = sa.Column(sa.String(15), nullable=True)
    target_power_state = sa.Column(sa.String(15), nullable=True)
    provision_state = sa.Column(sa.String(15), nullable=True)
    target_provision_state = sa.Column(sa.String(15), nullable=True)
    provision_updated_at = sa.Column(sa.DateTime, nullable=True)
    maintenance = sa.Column(sa.Boolean, nullable=False, default=False)
    maintenance_reason = sa.Column(sa.Text, nullable=True)
    fault = sa.Column(sa.String(255), nullable=True)
    last_error = sa.Column(sa.Text, nullable=True)
    clean_step = sa.Column(db_types.JsonEncodedDict)
    deploy_step = sa.Column(db_types.JsonEncodedDict)
    service_step = sa.Column(db_types.JsonEncodedDict)
    # Hostname of the conductor holding the exclusive node lock.
    reservation = sa.Column(sa.String(255), nullable=True)
    conductor_affinity = sa.Column(sa.Integer,
                                   sa.ForeignKey('conductors.id',
                                                 name='nodes_conductor_'
                                                      'affinity_fk'),
                                   nullable=True)
    conductor_group = sa.Column(sa.String(255), nullable=False, default='')
    allocation_id = sa.Column(sa.Integer, nullable=True)
    owner = sa.Column(sa.String(255), nullable=True)
    lessee = sa.Column(sa.String(255), nullable=True)
    power_interface = sa.Column(sa.String(255), nullable=True)
    deploy_interface = sa.Column(sa.String(255), nullable=True)
    management_interface = sa.Column(sa.String(255), nullable=True)
    boot_interface = sa.Column(sa.String(255), nullable=True)
    bios_interface = sa.Column(sa.String(255), nullable=True)
    firmware_interface = sa.Column(sa.String(255), nullable=True)
    automated_clean = sa.Column(sa.Boolean, nullable=True)
    protected = sa.Column(sa.Boolean, nullable=False, default=False)
    protected_reason = sa.Column(sa.Text, nullable=True)
    retired = sa.Column(sa.Boolean, nullable=True, default=False)
    retired_reason = sa.Column(sa.Text, nullable=True)
    # Operator-defined group of nodes that one client instance serves.
    shard = sa.Column(sa.String(255), nullable=True)
    # UUID of the node this node is a part of (a child node: a DPU, a
    # BMC-managed card): not a foreign key, as upstream keeps it.
    parent_node = sa.Column(sa.String(36), nullable=True)
    # The service never powers the node off (reboots instead).
    disable_power_off = sa.Column(sa.Boolean, nullable=False,
                                  default=False, server_default=sa.false())
    # Human-readable name of the instance; mirrors
    # instance_info['display_name'].
    instance_name = sa.Column(sa.String(255), nullable=True)
    # Health the BMC last reported: OK, Warning, Critical or NULL.
    health = sa.Column(sa.String(15), nullable=True)


class NodeTrait(BASE):
    __tablename__ = 'node_traits'
    __table_args__ = (sa.Index('node_traits_idx', 'trait'), TABLE_ARGS)
    node_id = sa.Column(sa.Integer,
                        sa.ForeignKey('nodes.id', ondelete='CASCADE'),
                        primary_key=True, nullable=False)
    trait = sa.Column(sa.String(255), primary_key=True, nullable=False)


class NodeAllocation(BASE):
    """A request for a node (the bare metal API's *Allocation*)."""

    __tablename__ = 'node_allocations'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_node_allocations0uuid'),
        sa.UniqueConstraint('name', name='uniq_node_allocations0name'),
        sa.Index('node_allocations_state_idx', 'state'),
        sa.Index('node_allocations_affinity_idx', 'conductor_affinity'),
        TABLE_ARGS)
    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=False)
    name = sa.Column(sa.String(255), nullable=True)
    node_id = sa.Column(sa.Integer,
                        sa.ForeignKey('nodes.id', ondelete='SET NULL',
                                      name='node_allocations_node_fk'),
                        nullable=True)
    state = sa.Column(sa.String(15), nullable=False)
    owner = sa.Column(sa.String(255), nullable=True)
    last_error = sa.Column(sa.Text, nullable=True)
    resource_class = sa.Column(sa.String(80), nullable=True)
    candidate_nodes = sa.Column(db_types.JsonEncodedList)
    extra = sa.Column(db_types.JsonEncodedDict)
    # Id of the conductor processing the allocation (see the take-over).
    conductor_affinity = sa.Column(sa.Integer, nullable=True)


class NodeAllocationGroup(BASE):
    """All or none of several node allocations (an extension of ours)."""

    __tablename__ = 'node_allocation_groups'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_node_allocation_groups0uuid'),
        sa.UniqueConstraint('name', name='uniq_node_allocation_groups0name'),
        sa.Index('node_allocation_groups_state_idx', 'state'),
        sa.Index('node_allocation_groups_affinity_idx',
                 'conductor_affinity'),
        TABLE_ARGS)
    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=False)
    name = sa.Column(sa.String(255), nullable=True)
    owner = sa.Column(sa.String(255), nullable=True)
    state = sa.Column(sa.String(15), nullable=False)
    last_error = sa.Column(sa.Text, nullable=True)
    # The request: [{count, resource_class, traits, candidate_nodes}].
    members = sa.Column(db_types.JsonEncodedList)
    spread = sa.Column(db_types.JsonEncodedDict, nullable=True)
    # UUIDs of the member allocations, written when the group is active.
    allocations = sa.Column(db_types.JsonEncodedList)
    conductor_affinity = sa.Column(sa.Integer, nullable=True)


class NodeAllocationTrait(BASE):
    __tablename__ = 'node_allocation_traits'
    __table_args__ = (TABLE_ARGS,)
    allocation_id = sa.Column(sa.Integer,
                              sa.ForeignKey('node_allocations.id',
                                            ondelete='CASCADE'),
                              primary_key=True, nullable=False)
    trait = sa.Column(sa.String(255), primary_key=True, nullable=False)


class NodeHistory(BASE):
    """Events (mostly errors) in the life of a node."""

    __tablename__ = 'node_history'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_node_history0uuid'),
        sa.Index('node_history_node_id_idx', 'node_id'),
        TABLE_ARGS)
    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=False)
    node_id = sa.Column(sa.Integer,
                        sa.ForeignKey('nodes.id', ondelete='CASCADE'),
                        nullable=False)
    conductor = sa.Column(sa.String(255), nullable=True)
    event_type = sa.Column(sa.String(255), nullable=True)
    severity = sa.Column(sa.String(255), nullable=True)
    event = sa.Column(sa.Text, nullable=True)
    user = sa.Column(sa.String(255), nullable=True)
    # Project of the request that caused the event.
    project = sa.Column(sa.String(80), nullable=True)
    # The node's provision state and target when the event was recorded;
    # for a change of provision state, the seconds spent in the state left.
    state = sa.Column(sa.String(255), nullable=True)
    target_provision_state = sa.Column(sa.String(255), nullable=True)
    duration_seconds = sa.Column(sa.Integer, nullable=True)


class DeferredAction(BASE):
    """A call a conductor makes later, on a worker, under the node lock.

    ``state`` is the lock of the action: a conductor launches it only by
    moving it from a launchable state to RUNNING with a conditional
    UPDATE (see ``objects/baremetal/deferred_action.py``).
    """

    __tablename__ = 'deferred_actions'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_deferred_actions0uuid'),
        sa.Index('deferred_actions_state_idx', 'state'),
        sa.Index('deferred_actions_start_after_idx', 'start_after'),
        sa.Index('deferred_actions_node_id_idx', 'node_id'),
        TABLE_ARGS)
    id = sa.Column(sa.Integer, primary_key=True)
    uuid = sa.Column(sa.String(36), nullable=False)
    node_id = sa.Column(sa.Integer,
                        sa.ForeignKey('nodes.id', ondelete='CASCADE'),
                        nullable=False)
    state = sa.Column(sa.String(15), nullable=False)
    parent_action = sa.Column(sa.Integer,
                              sa.ForeignKey('deferred_actions.id',
                                            ondelete='SET NULL'),
                              nullable=True)
    start_after = sa.Column(sa.DateTime, nullable=True)
    call = sa.Column(sa.String(255), nullable=False)
    arguments = sa.Column(db_types.JsonEncodedDict, nullable=True)
    retry_remaining = sa.Column(sa.Integer, nullable=False, default=0)
    created_by = sa.Column(sa.String(255), nullable=True)
    result = sa.Column(sa.Text, nullable=True)
    # Beyond the specification's fields: what FAILED reports (the
    # originating request and user), what stops endless rescheduling, who
    # runs the action, and the soft deletion of the clean-up.
    request_id = sa.Column(sa.String(255), nullable=True)
    user_id = sa.Column(sa.String(255), nullable=True)
    reschedule_count = sa.Column(sa.Integer, nullable=False, default=0)
    deadline = sa.Column(sa.DateTime, nullable=True)
    conductor = sa.Column(sa.String(255), nullable=True)
    deleted_at = sa.Column(sa.DateTime, nullable=True)
    # The provisioning flow (``clean``, ``service``) waiting for the
    # action; None for an action no flow waits for.
    flow = sa.Column(sa.String(15), nullable=True)


class FirmwareComponent(BASE):
    """A firmware component of a node and its versions."""

    __tablename__ = 'firmware_information'
    __table_args__ = (
        sa.UniqueConstraint('node_id', 'component',
                            name='uniq_firmware_information0node_id0'
                                 'component'),
        TABLE_ARGS)
    id = sa.Column(sa.Integer, primary_key=True)
    node_id = sa.Column(sa.Integer,
                        sa.ForeignKey('nodes.id', ondelete='CASCADE'),
                        nullable=False)
    component = sa.Column(sa.String(255), nullable=False)
    initial_version = sa.Column(sa.String(255), nullable=False)
    current_version = sa.Column(sa.String(255), nullable=True)
    last_version_flashed = sa.Column(sa.String(255), nullable=True)
    # What the hardware says of the device (null when it does not tell).
    vendor = sa.Column(sa.String(255), nullable=True)
    model = sa.Column(sa.String(255), nullable=True)
    serial_number = sa.Column(sa.String(255), nullable=True)


# --- placement ---------------------------------------------------------------

class ResourceProvider(BASE):
    __tablename__ = 'resource_providers'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_resource_providers0uuid'),
        sa.UniqueConstraint('name', name='uniq_resource_providers0name'),
        sa.Index('resource_providers_root_provider_id_idx',
                 'root_provider_id'),
        sa.Index('resource_providers_parent_provider_id_idx',
                 'parent_provider_id'),
        TABLE_ARGS)
    id = sa.Column(sa.Integer, primary_key=True, nullable=False)
    uuid = sa.Column(sa.String(36), nullable=False)
    name = sa.Column(sa.Unicode(200), nullable=True)
    generation = sa.Column(sa.Integer, nullable=False, default=0)
    root_provider_id = sa.Column(sa.Integer,
                                 sa.ForeignKey('resource_providers.id'),
                                 nullable=True)
    parent_provider_id = sa.Column(sa.Integer,
                                   sa.ForeignKey('resource_providers.id'),
                                   nullable=True)


class Inventory(BASE):
    __tablename__ = 'inventories'
    __table_args__ = (
        sa.UniqueConstraint('resource_provider_id', 'resource_class_id',
                            name='uniq_inventories0resource_provider_'
                                 'resource_class'),
        # Covers the per-class sums of the capacity view (capacity.py):
        # MariaDB otherwise reads every row through an index of the class
        # alone, one primary key look-up each.
        sa.Index('inventories_resource_class_id_capacity_idx',
                 'resource_class_id', 'total', 'reserved',
                 'allocation_ratio'),
        sa.Index('inventories_resource_class_id_max_unit_idx',
                 'resource_class_id', 'max_unit'),
        TABLE_ARGS)
    id = sa.Column(sa.Integer, primary_key=True, nullable=False)
    resource_provider_id = sa.Column(sa.Integer, nullable=False)
    resource_class_id = sa.Column(sa.Integer, nullable=False)
    total = sa.Column(sa.Integer, nullable=False)
    reserved = sa.Column(sa.Integer, nullable=False)
    min_unit = sa.Column(sa.Integer, nullable=False)
    max_unit = sa.Column(sa.Integer, nullable=False)
    step_size = sa.Column(sa.Integer, nullable=False)
    allocation_ratio = sa.Column(sa.Float, nullable=False)


class Allocation(BASE):
    """A consumer's use of one resource class on one provider."""

    __tablename__ = 'allocations'
    __table_args__ = (
        sa.Index('allocations_resource_provider_class_used_idx',
                 'resource_provider_id', 'resource_class_id', 'used'),
        # Covers the per-class sums of the usage (capacity.py); see the
        # inventories' index.
        sa.Index('allocations_resource_class_id_used_idx',
                 'resource_class_id', 'used'),
        sa.Index('allocations_consumer_id_idx', 'consumer_id'),
        TABLE_ARGS)
    id = sa.Column(sa.Integer, primary_key=True, nullable=False)
    resource_provider_id = sa.Column(sa.Integer, nullable=False)
    consumer_id = sa.Column(sa.String(36), nullable=False)
    resource_class_id = sa.Column(sa.Integer, nullable=False)
    used = sa.Column(sa.Integer, nullable=False)


class OverCapacityMark(BASE):
    """A provider's class whose inventory was last written below its usage.

    Claims are checked against capacity, so a provider can only be over
    capacity of a class after its inventory of that class shrank below
    what is allocated from it (or a reshape left it so). The inventory
    writers keep one row per such (provider, class); the readers of
    "providers over capacity" re-check only these rows against the
    allocations, instead of grouping every allocation. A row whose
    allocations have gone since is harmless (re-checked, not counted)
    and goes at the next inventory write of its provider. Claims never
    touch this table.
    """

    __tablename__ = 'over_capacity_marks'
    __table_args__ = (TABLE_ARGS,)
    resource_provider_id = sa.Column(sa.Integer, primary_key=True,
                                     nullable=False, autoincrement=False)
    resource_class_id = sa.Column(sa.Integer, primary_key=True,
                                  nullable=False, autoincrement=False)


class Project(BASE):
    __tablename__ = 'projects'
    __table_args__ = (
        sa.UniqueConstraint('external_id', name='uniq_projects0external_id'),
        TABLE_ARGS)
    id = sa.Column(sa.Integer, primary_key=True, nullable=False)
    external_id = sa.Column(sa.String(255), nullable=False)


class User(BASE):
    __tablename__ = 'users'
    __table_args__ = (
        sa.UniqueConstraint('external_id', name='uniq_users0external_id'),
        TABLE_ARGS)
    id = sa.Column(sa.Integer, primary_key=True, nullable=False)
    external_id = sa.Column(sa.String(255), nullable=False)


class ConsumerType(BASE):
    __tablename__ = 'consumer_types'
    __table_args__ = (
        sa.UniqueConstraint('name', name='uniq_consumer_types0name'),
        TABLE_ARGS)
    id = sa.Column(sa.Integer, primary_key=True, nullable=False)
    name = sa.Column(sa.Unicode(255), nullable=False)


class Consumer(BASE):
    __tablename__ = 'consumers'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_consumers0uuid'),
        sa.Index('consumers_project_id_user_id_uuid_idx',
                 'project_id', 'user_id', 'uuid'),
        TABLE_ARGS)
    id = sa.Column(sa.Integer, primary_key=True, nullable=False)
    uuid = sa.Column(sa.String(36), nullable=False)
    project_id = sa.Column(sa.Integer, nullable=False)
    user_id = sa.Column(sa.Integer, nullable=False)
    generation = sa.Column(sa.Integer, nullable=False, default=0)
    consumer_type_id = sa.Column(sa.Integer, nullable=True)


class ResourceClass(BASE):
    __tablename__ = 'resource_classes'
    __table_args__ = (
        sa.UniqueConstraint('name', name='uniq_resource_classes0name'),
        TABLE_ARGS)
    id = sa.Column(sa.Integer, primary_key=True, nullable=False)
    name = sa.Column(sa.String(255), nullable=False)


class Trait(BASE):
    __tablename__ = 'traits'
    __table_args__ = (
        sa.UniqueConstraint('name', name='uniq_traits0name'),
        TABLE_ARGS)
    id = sa.Column(sa.Integer, primary_key=True, nullable=False)
    name = sa.Column(sa.Unicode(255), nullable=False)


class ResourceProviderTrait(BASE):
    __tablename__ = 'resource_provider_traits'
    __table_args__ = (
        sa.Index('resource_provider_traits_resource_provider_trait_idx',
                 'resource_provider_id', 'trait_id'),
        TABLE_ARGS)
    trait_id = sa.Column(sa.Integer, sa.ForeignKey('traits.id'),
                         primary_key=True, nullable=False)
    resource_provider_id = sa.Column(sa.Integer,
                                     sa.ForeignKey('resource_providers.id'),
                                     primary_key=True, nullable=False)


class PlacementAggregate(BASE):
    __tablename__ = 'placement_aggregates'
    __table_args__ = (
        sa.UniqueConstraint('uuid', name='uniq_placement_aggregates0uuid'),
        TABLE_ARGS)
    id = sa.Column(sa.Integer, primary_key=True, autoincrement=True)
    uuid = sa.Column(sa.String(36), nullable=False)


class ResourceProviderAggregate(BASE):
    __tablename__ = 'resource_provider_aggregates'
    __table_args__ = (
        sa.Index('resource_provider_aggregates_aggregate_id_idx',
                 'aggregate_id'),
        TABLE_ARGS)
    resource_provider_id = sa.Column(sa.Integer, primary_key=True,
                                     nullable=False)
    aggregate_id = sa.Column(sa.Integer, primary_key=True, nullable=False)
