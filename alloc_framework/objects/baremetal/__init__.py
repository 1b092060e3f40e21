"""Versioned objects of the bare metal side.

One module per entity (``node``, ``allocation``, ``allocation_group``,
``conductor``,
``node_history``, ``deferred_action``, ``firmware``; ``trait`` and
``node_reservation`` hold the SQL that node traits and node
reservations share), beside the side's domain exceptions
(``exception``), provision state machine (``states``) and versioned
notifications (``notification``).

Importing this package registers every object class, so that
``AllocObjectSerializer`` can rebuild them from RPC payloads.
"""

from alloc_framework.objects.baremetal import allocation
from alloc_framework.objects.baremetal import allocation_group
from alloc_framework.objects.baremetal import conductor
from alloc_framework.objects.baremetal import deferred_action
from alloc_framework.objects.baremetal import firmware
from alloc_framework.objects.baremetal import node
from alloc_framework.objects.baremetal import node_history
from alloc_framework.objects.baremetal import notification

Allocation = allocation.Allocation
AllocationGroup = allocation_group.AllocationGroup
Conductor = conductor.Conductor
DeferredAction = deferred_action.DeferredAction
FirmwareComponent = firmware.FirmwareComponent
Node = node.Node
NodeHistory = node_history.NodeHistory
AllocationCRUDNotification = notification.AllocationCRUDNotification
DeferredActionNotification = notification.DeferredActionNotification
