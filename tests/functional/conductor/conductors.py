"""Start and stop real conductors inside a test, and wait for their work.

The waits poll from the test thread until a conductor's workers are done.
"""

import datetime

from alloc_framework.conductor import manager as manager_mod
from alloc_framework.db import api as db_api
from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects import baremetal as objects
from alloc_framework.objects.baremetal import allocation as alloc_obj
from alloc_framework.objects.baremetal import base as obj_base
from tests import base


def start(test, host, **kw):
    """A started ``ConductorManager`` named ``host``, stopped at cleanup."""
    manager = manager_mod.ConductorManager(host, test.conf, **kw)
    manager.init_host()
    test.addCleanup(manager.del_host)
    return manager


def stop(manager, unregister=True):
    """Stop a conductor; ``unregister=False`` leaves it looking online.

    Without unregistering, the conductor row keeps ``online`` and only its
    heartbeat ages, as when a conductor process is killed.
    """
    if unregister:
        manager.del_host()
        return
    conductor = manager.conductor

    # del_host() marks the row offline; a killed process never does.
    original = conductor.unregister
    conductor.unregister = lambda *a, **k: None
    try:
        manager.del_host()
    finally:
        conductor.unregister = original


def kill_heartbeat(conductor_id, seconds=3600):
    """Make a conductor look dead: its last heartbeat is long ago."""
    engine = db_api.get_engine()
    past = obj_base.utcnow() - datetime.timedelta(seconds=seconds)
    with engine.begin() as conn:
        conn.execute(models.Conductor.__table__.update()
                     .where(models.Conductor.__table__.c.id == conductor_id)
                     .values(updated_at=past))


def wait_unlocked(ctx, node_id, timeout=30):
    """The node once its lock is released: the worker is done.

    Power and provisioning calls return while their worker still holds
    the node lock, which it releases when the work ends.
    """
    def unlocked():
        node = objects.Node.get_by_id(ctx, node_id)
        return node if node.reservation is None else None
    return base.wait_for(unlocked, 'node %s to be unlocked' % node_id,
                         timeout=timeout)


def wait_allocation(ctx, allocation_id, timeout=60):
    """The allocation once it left ``allocating``."""
    def processed():
        allocation = objects.Allocation.get_by_id(ctx, allocation_id)
        return (allocation if allocation.state != alloc_obj.ALLOCATING
                else None)
    return base.wait_for(processed, 'allocation %s to be processed'
                         % allocation_id, timeout=timeout)


def wait_processed(ctx, count, stall=60):
    """All allocations, once there are ``count`` and none is allocating.

    However long the whole takes, the wait fails only when no allocation
    was added or processed for ``stall`` seconds: how fast a busy machine
    gets through a backlog varies several-fold, whereas a stuck conductor
    makes no progress at all.
    """
    seen = []

    def processed():
        items = objects.Allocation.list(ctx)
        seen[:] = [(len(items),
                    sum(a.state != alloc_obj.ALLOCATING for a in items))]
        if seen[0] == (count, count):
            return items

    return base.wait_for(processed, '%d allocations to be processed (seen, '
                         'processed)' % count, timeout=stall, interval=0.05,
                         progress=lambda: seen[0] if seen else None)
