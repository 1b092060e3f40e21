"""Inventories: what a resource provider offers, per resource class.

Every change bumps the provider generation (compare-and-swap against the
generation the caller read) before anything else, which also serialises
it against allocation writers of the same provider.

A class that is allocated cannot be removed. It may shrink below what is
allocated from it, as in upstream Placement: the provider is then *over
capacity* for that class (a WARNING says so once the change commits) and
no new allocation of the class fits on it until enough allocations go.
Every writer then marks the provider's classes over capacity
(:func:`usage.mark_over_capacity`), so that the readers of "providers
over capacity" need not group every allocation.
"""

import math

from oslo_log import log as logging
import sqlalchemy as sa

from alloc_framework.db import api as db_api
from alloc_framework.db.sqlalchemy import models
from alloc_framework.objects.placement import attribute_cache
from alloc_framework.objects.placement import exception
from alloc_framework.objects.placement import resource_provider as rp_obj
from alloc_framework.objects.placement import usage as usage_obj

LOG = logging.getLogger(__name__)
INV_TBL = models.Inventory.__table__
# Largest value of the integer columns; also the default max_unit.
MAX_INT = 2147483647
DEFAULTS = {
    'reserved': 0,
    'min_unit': 1,
    'max_unit': MAX_INT,
    'step_size': 1,
    'allocation_ratio': 1.0,
}
FIELDS = ('total', 'reserved', 'min_unit', 'max_unit', 'step_size',
          'allocation_ratio')


class Inventory:
    """One resource class's inventory on one provider."""

    def __init__(self, resource_class, total, reserved=0, min_unit=1,
                 max_unit=MAX_INT, step_size=1, allocation_ratio=1.0,
                 created_at=None, updated_at=None):
        self.resource_class = resource_class
        self.total = total
        self.reserved = reserved
        self.min_unit = min_unit
        self.max_unit = max_unit
        self.step_size = step_size
        self.allocation_ratio = float(allocation_ratio)
        self.created_at = created_at
        self.updated_at = updated_at

    def __repr__(self):
        return '<Inventory %s total=%s>' % (self.resource_class, self.total)

    @property
    def capacity(self):
        """How much can be allocated in all: (total - reserved) * ratio."""
        return int((self.total - self.reserved) * self.allocation_ratio)

    def as_dict(self):
        return {field: getattr(self, field) for field in FIELDS}


def validate(inventories, rp, reserved_can_be_total=True):
    """Check values that depend on each other.

    The capacity must be positive; with ``reserved_can_be_total``
    (microversion 1.26 and later) it may also be zero, i.e. ``reserved``
    may equal ``total``. ``min_unit`` may not exceed ``max_unit``.

    :raises InvalidInventoryCapacity: reserved too high.
    :raises InvalidInventory: min_unit above max_unit, or a ratio that
        is not a finite number.
    """
    for inv in inventories:
        # JSON parsers accept NaN and -Infinity, which no bound excludes.
        if not math.isfinite(inv.allocation_ratio):
            raise exception.InvalidInventory(
                "Invalid inventory for '%(rc)s' on resource provider "
                "'%(rp)s': allocation_ratio must be a finite number."
                % {'rc': inv.resource_class, 'rp': rp.uuid})
        if inv.reserved > inv.total or inv.capacity < 0 or (
                inv.capacity == 0 and not reserved_can_be_total):
            # From 1.26 reserved may equal total, so the message says so.
            error = (exception.InvalidInventoryCapacityReservedCanBeTotal
                     if reserved_can_be_total
                     else exception.InvalidInventoryCapacity)
            raise error(resource_class=inv.resource_class,
                        resource_provider=rp.uuid)
        if inv.min_unit > inv.max_unit:
            raise exception.InvalidInventory(
                "Invalid inventory for '%(rc)s' on resource provider "
                "'%(rp)s': min_unit (%(min)d) is greater than max_unit "
                "(%(max)d)." % {'rc': inv.resource_class, 'rp': rp.uuid,
                                'min': inv.min_unit, 'max': inv.max_unit})


@db_api.reader
def get_all_by_resource_provider(context, rp):
    """The inventories of ``rp``, sorted by resource class name."""
    rows = context.session.execute(
        sa.select(INV_TBL).where(
            INV_TBL.c.resource_provider_id == rp.id)).all()
    result = [_from_row(context, row) for row in rows]
    return sorted(result, key=lambda inv: inv.resource_class)


def _from_row(context, row):
    return Inventory(
        resource_class=attribute_cache.rc_name(context,
                                               row.resource_class_id),
        total=row.total, reserved=row.reserved, min_unit=row.min_unit,
        max_unit=row.max_unit, step_size=row.step_size,
        allocation_ratio=row.allocation_ratio,
        created_at=row.created_at, updated_at=row.updated_at)


def find(inventories, resource_class):
    """The inventory of ``resource_class`` in a list, or None."""
    for inv in inventories:
        if inv.resource_class == resource_class:
            return inv
    return None


def _values(inv):
    return {field: getattr(inv, field) for field in FIELDS}


def _check_usage(context, rp, by_rc_id, usages, deleted):
    """Refuse to remove allocated classes; find the ones left over capacity.

    The classes are named in class id order (standard classes first, in
    their defined order), as upstream Placement names them.

    :raises InventoryInUse: a class in ``deleted`` is allocated.
    :returns: ``[(resource class, used, new capacity)]`` of the classes
        whose new capacity is below what is allocated from them.
    """
    in_use = [attribute_cache.rc_name(context, rc_id)
              for rc_id in sorted(deleted) if usages.get(rc_id, 0) > 0]
    if in_use:
        raise exception.InventoryInUse(
            resource_classes=', '.join(in_use), resource_provider=rp.uuid)
    return [(by_rc_id[rc_id].resource_class, usages[rc_id],
             by_rc_id[rc_id].capacity)
            for rc_id in sorted(by_rc_id)
            if usages.get(rc_id, 0) > by_rc_id[rc_id].capacity]


def _warn_over_capacity(context, rp, exceeded):
    """Log a WARNING per class of ``exceeded`` when the transaction commits.

    The inventory write may sit inside a larger transaction (a reshape)
    that can still roll back, so the warning waits for the commit.
    """
    if not exceeded:
        return
    rp_uuid = rp.uuid

    def _log(session):
        for rc, used, capacity in exceeded:
            LOG.warning('Resource provider %(uuid)s is now over capacity '
                        'for %(rc)s: %(used)d used, new capacity '
                        '%(capacity)d. No allocation of %(rc)s fits on it '
                        'until enough of them are removed.',
                        {'uuid': rp_uuid, 'rc': rc, 'used': used,
                         'capacity': capacity})

    sa.event.listen(context.session, 'after_commit', _log, once=True)


@rp_obj.keep_generation_on_error
@db_api.writer
def set_inventories(context, rp, inventories, check_usage=True):
    """Replace all inventories of ``rp`` with ``inventories``.

    Classes not listed are removed. Bumps ``rp.generation``. A class
    whose new capacity is below its usage is accepted with a warning (see
    the module docstring).

    :param check_usage: false skips the usage checks, the warning and
        the marks of the classes over capacity: the interim inventory of
        a reshape, whose allocations move in the same transaction before
        the final inventory is checked (and marked).
    :raises ResourceClassNotFound: an unknown resource class.
    :raises ResourceProviderConcurrentUpdateDetected: stale generation.
    :raises InventoryInUse: a removed class is allocated (unless
        ``check_usage`` is false).
    """
    by_rc_id = {attribute_cache.rc_id(context, inv.resource_class): inv
                for inv in inventories}
    rp_obj.increment_generation(context, rp)
    existing = {row.resource_class_id for row in context.session.execute(
        sa.select(INV_TBL.c.resource_class_id).where(
            INV_TBL.c.resource_provider_id == rp.id))}
    deleted = existing - set(by_rc_id)
    if check_usage:
        usages = rp_obj.usages_by_class(context, rp.id)
        _warn_over_capacity(
            context, rp, _check_usage(context, rp, by_rc_id, usages, deleted))
    if deleted:
        context.session.execute(INV_TBL.delete().where(
            INV_TBL.c.resource_provider_id == rp.id,
            INV_TBL.c.resource_class_id.in_(sorted(deleted))))
    for rc_id, inv in by_rc_id.items():
        if rc_id in existing:
            context.session.execute(INV_TBL.update().where(
                INV_TBL.c.resource_provider_id == rp.id,
                INV_TBL.c.resource_class_id == rc_id).values(**_values(inv)))
        else:
            context.session.execute(INV_TBL.insert().values(
                resource_provider_id=rp.id, resource_class_id=rc_id,
                **_values(inv)))
    if check_usage:
        usage_obj.mark_over_capacity(context, rp.id)
    return get_all_by_resource_provider(context, rp)


@rp_obj.keep_generation_on_error
@db_api.writer
def add_inventory(context, rp, inv):
    """Add the inventory of a class ``rp`` has none of yet.

    :raises InventoryExists: ``rp`` already has this class.
    :raises ResourceClassNotFound: unknown resource class.
    :raises ResourceProviderConcurrentUpdateDetected: stale generation.
    """
    rc_id = attribute_cache.rc_id(context, inv.resource_class)
    rp_obj.increment_generation(context, rp)
    if _row(context, rp, rc_id) is not None:
        raise exception.InventoryExists(resource_class=inv.resource_class,
                                        resource_provider=rp.uuid)
    context.session.execute(INV_TBL.insert().values(
        resource_provider_id=rp.id, resource_class_id=rc_id,
        **_values(inv)))
    usage_obj.mark_over_capacity(context, rp.id)
    return _from_row(context, _row(context, rp, rc_id))


@rp_obj.keep_generation_on_error
@db_api.writer
def update_inventory(context, rp, inv):
    """Replace the inventory of one class that ``rp`` already has.

    A new capacity below the usage is accepted with a warning (see the
    module docstring).

    :raises InventoryWithResourceClassNotFound: ``rp`` has no inventory
        of this class.
    :raises ResourceClassNotFound: unknown resource class.
    :raises ResourceProviderConcurrentUpdateDetected: stale generation.
    """
    rc_id = attribute_cache.rc_id(context, inv.resource_class)
    rp_obj.increment_generation(context, rp)
    if _row(context, rp, rc_id) is None:
        raise exception.InventoryWithResourceClassNotFound(
            resource_class=inv.resource_class)
    usages = rp_obj.usages_by_class(context, rp.id)
    _warn_over_capacity(
        context, rp, _check_usage(context, rp, {rc_id: inv}, usages, ()))
    context.session.execute(INV_TBL.update().where(
        INV_TBL.c.resource_provider_id == rp.id,
        INV_TBL.c.resource_class_id == rc_id).values(**_values(inv)))
    usage_obj.mark_over_capacity(context, rp.id)
    return _from_row(context, _row(context, rp, rc_id))


@rp_obj.keep_generation_on_error
@db_api.writer
def delete_inventory(context, rp, resource_class):
    """Remove the inventory of one class from ``rp``.

    :raises NotFound: ``rp`` has no inventory of this class (or the class
        does not exist).
    :raises InventoryInUse: it is allocated.
    :raises ResourceProviderConcurrentUpdateDetected: stale generation.
    """
    try:
        rc_id = attribute_cache.rc_id(context, resource_class)
    except exception.ResourceClassNotFound:
        raise exception.InventoryWithResourceClassNotFound(
            resource_class=resource_class)
    rp_obj.increment_generation(context, rp)
    if _row(context, rp, rc_id) is None:
        raise exception.InventoryWithResourceClassNotFound(
            resource_class=resource_class)
    if rp_obj.has_allocations(context, rp.id, rc_id):
        raise exception.InventoryInUse(resource_classes=resource_class,
                                       resource_provider=rp.uuid)
    context.session.execute(INV_TBL.delete().where(
        INV_TBL.c.resource_provider_id == rp.id,
        INV_TBL.c.resource_class_id == rc_id))
    usage_obj.mark_over_capacity(context, rp.id)


def _row(context, rp, rc_id):
    return context.session.execute(sa.select(INV_TBL).where(
        INV_TBL.c.resource_provider_id == rp.id,
        INV_TBL.c.resource_class_id == rc_id)).first()
