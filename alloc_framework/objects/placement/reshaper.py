"""The reshaper: move inventories and their allocations in one transaction.

Inventory cannot be removed while allocated and allocations cannot be made
against inventory that does not exist yet, so the move happens in three
steps inside one ``@db_api.writer`` transaction:

1. every named provider gets an *interim* inventory: its current classes
   plus the requested ones (requested values win);
2. the allocations of every named consumer are replaced (capacity checked
   against the interim inventory);
3. every named provider gets exactly its requested inventory; a class that
   goes away while still allocated fails the whole reshape, a class left
   below its usage is accepted with a warning (as any inventory update).

Any failure rolls everything back.
"""

from oslo_db import exception as db_exc
from oslo_log import log as logging

from alloc_framework.db import api as db_api
from alloc_framework.objects.placement import allocation as alloc_obj
from alloc_framework.objects.placement import exception
from alloc_framework.objects.placement import inventory as inv_obj
from alloc_framework.objects.placement import resource_provider as rp_obj

LOG = logging.getLogger(__name__)


class ProviderInventories:
    """The desired full inventory of one provider in a reshape.

    :param rp_uuid: the provider.
    :param generation: the provider generation the client last saw.
    :param inventories: list of ``inventory.Inventory``; empty deletes all
        of the provider's inventory.
    """

    def __init__(self, rp_uuid, generation, inventories):
        self.rp_uuid = rp_uuid
        self.generation = generation
        self.inventories = inventories


def reshape(context, inventories, allocations):
    """Atomically replace inventories and allocations.

    :param inventories: list of :class:`ProviderInventories`.
    :param allocations: list of ``allocation.ConsumerAllocations``.
    :raises: ResourceProviderNotFound (a provider in ``inventories`` or
        ``allocations`` does not exist), ResourceClassNotFound,
        ResourceProviderConcurrentUpdateDetected (a given generation is
        stale, or a concurrent writer won), ConsumerGenerationConflict,
        InventoryInUse, InvalidInventoryCapacity, InvalidInventory and its
        allocation subclasses.
    """
    rc_ids = alloc_obj.resolve_resource_classes(context, allocations)
    try:
        _reshape(context, inventories, allocations, rc_ids)
    except (db_exc.DBDuplicateEntry, db_exc.DBDeadlock) as exc:
        # A reshape is not retried: the caller computed it from a state
        # that is gone (a consumer created meanwhile, ...), so it must look
        # again.
        LOG.info('Reshape lost a race: %s', exc)
        raise exception.ConcurrentUpdateDetected()


@db_api.writer
def _reshape(context, inventories, allocations, rc_ids):
    providers = rp_obj.get_by_uuids(
        context, [pi.rp_uuid for pi in inventories])
    missing = sorted({pi.rp_uuid for pi in inventories} - set(providers))
    if missing:
        raise exception.ResourceProviderNotFound(
            'No such resource provider(s): %s.' % ', '.join(missing),
            uuids=missing)

    for pi in inventories:
        rp = providers[pi.rp_uuid]
        if pi.generation != rp.generation:
            raise exception.ResourceProviderConcurrentUpdateDetected(
                'resource provider generation conflict for provider '
                '%(rp)s: actual: %(actual)s, given: %(given)s' %
                {'rp': rp.uuid, 'actual': rp.generation,
                 'given': pi.generation})
        inv_obj.validate(pi.inventories, rp)

    for pi in inventories:
        if not pi.inventories:
            # Nothing to add; the final step removes what is there.
            continue
        rp = providers[pi.rp_uuid]
        interim = {inv.resource_class: inv for inv in
                   inv_obj.get_all_by_resource_provider(context, rp)}
        interim.update({inv.resource_class: inv for inv in pi.inventories})
        LOG.debug('reshape: interim inventory of %s: %s', rp.uuid,
                  sorted(interim))
        inv_obj.set_inventories(context, rp, list(interim.values()),
                                check_usage=False)

    alloc_obj.write_allocations(context, allocations, rc_ids)

    for pi in inventories:
        # The allocation write bumped generations of providers it touched.
        rp = rp_obj.get_by_uuid(context, pi.rp_uuid)
        LOG.debug('reshape: final inventory of %s: %s', rp.uuid,
                  [inv.resource_class for inv in pi.inventories])
        inv_obj.set_inventories(context, rp, pi.inventories,
                                check_usage=True)
