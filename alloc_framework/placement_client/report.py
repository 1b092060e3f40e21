"""The report client: a Placement user's provider trees, read and flushed.

:class:`ReportClient` is what a service that reports resources to
Placement calls, after the report client of the upstream compute service
(its three methods have the same names and meanings):

* :meth:`~ReportClient.get_provider_tree_and_ensure_root` reads the whole
  tree of a provider (creating the provider first when it does not
  exist) into the client's cache and hands the caller a copy to edit;
* :meth:`~ReportClient.get_allocations_for_provider_tree` gathers the
  allocations of every consumer of a tree, for a reshape;
* :meth:`~ReportClient.update_from_provider_tree` flushes the edited copy
  back: only what differs from the cache is sent, and with
  ``allocations`` the inventories and allocations move together in one
  ``POST /reshaper``.

Any keystoneauth1 ``Adapter`` that does not raise on HTTP errors
(``raise_exc=False``) will do: over HTTP to our Placement or upstream's,
or our Placement in this process
(``alloc_framework.api.placement.direct.InProcessPlacement``). Every
request carries ``OpenStack-API-Version: placement 1.36``
(:data:`MICROVERSION`), whatever the adapter sends by default.

The cache. The client keeps every tree it has read (a
:class:`~alloc_framework.placement_client.provider_tree.ProviderTree`
with one root per tree) with the generation of each provider. A tree in
the cache is not read again: what the caller changes is compared with
it, and a change made meanwhile by someone else shows as a
``placement.concurrent_update`` conflict when the client writes with a
generation that is no longer current. Any failure of
:meth:`~ReportClient.update_from_provider_tree` drops the trees concerned
from the cache, so the next
:meth:`~ReportClient.get_provider_tree_and_ensure_root` reads them again;
:meth:`~ReportClient.clear_provider_cache` does so on demand.

Threads may share a client: one lock guards the cache, and the HTTP
requests are made outside it.

Like the rest of the package this module imports only the standard
library, third-party libraries and ``alloc_framework.common``.
"""

import collections
import copy
import threading

from keystoneauth1 import exceptions as ks_exc
from oslo_log import log as logging

from alloc_framework.placement_client import exception
from alloc_framework.placement_client import provider_tree

LOG = logging.getLogger(__name__)

# 1.30 brought POST /reshaper, 1.28 consumer generations, 1.20 the
# provider in the answer to its creation, 1.19 generations with
# aggregates; every Placement since Train serves 1.36, ours included.
MICROVERSION = 'placement 1.36'
_HEADERS = {'OpenStack-API-Version': MICROVERSION}

# Placement's stable error codes that the client branches on.
CONCURRENT_UPDATE = 'placement.concurrent_update'
DUPLICATE_NAME = 'placement.duplicate_name'

CUSTOM_PREFIX = 'CUSTOM_'

TreeDiff = collections.namedtuple('TreeDiff', (
    'created', 'renamed', 'removed', 'inventories', 'traits', 'aggregates',
    'resource_classes', 'custom_traits'))
TreeDiff.__doc__ = """What a flush must do to turn one tree into another.

Lists of provider uuids: ``created`` top-down (a parent before its
children), ``removed`` bottom-up (children before their parent),
``renamed`` those whose name or parent differ, and those whose
``inventories``, ``traits`` or ``aggregates`` differ (a new provider's
when it has any). ``resource_classes`` and ``custom_traits``: the custom
names the new tree sends that the old one does not use, sorted.
"""


def diff_trees(old, new):
    """The :class:`TreeDiff` from ``old`` to ``new`` (two ProviderTrees).

    Generations are not compared. Inventories compare as Placement stores
    them (an optional field left out equals its default).
    """
    old_order = old.get_provider_uuids()
    old_uuids = set(old_order)
    new_order = new.get_provider_uuids()
    created, renamed, inventories, traits, aggregates = [], [], [], [], []
    known_classes, known_traits = set(), set()
    for uuid in old_order:
        data = old.data(uuid)
        known_classes.update(data.inventory)
        known_traits.update(data.traits)
    classes, custom_traits = set(), set()
    for uuid in new_order:
        data = new.data(uuid)
        if uuid in old_uuids:
            before = old.data(uuid)
        else:
            created.append(uuid)
            before = provider_tree.ProviderData(
                uuid, data.name, None, data.parent_uuid, data.root_uuid, {},
                frozenset(), frozenset())
        if (before.name, before.parent_uuid) != (data.name, data.parent_uuid):
            renamed.append(uuid)
        if provider_tree.inventory_has_changed(before.inventory,
                                               data.inventory):
            inventories.append(uuid)
            classes.update(data.inventory)
        if before.traits != data.traits:
            traits.append(uuid)
            custom_traits.update(data.traits)
        if before.aggregates != data.aggregates:
            aggregates.append(uuid)
    new_uuids = set(new_order)
    removed = [uuid for uuid in reversed(old_order)
               if uuid not in new_uuids]
    return TreeDiff(
        created=created, renamed=renamed, removed=removed,
        inventories=inventories, traits=traits, aggregates=aggregates,
        resource_classes=sorted(
            rc for rc in classes - known_classes
            if rc.startswith(CUSTOM_PREFIX)),
        custom_traits=sorted(
            t for t in custom_traits - known_traits
            if t.startswith(CUSTOM_PREFIX)))


def _copy_providers(source, target, root_uuids, generations=None):
    """Add the trees of ``root_uuids`` in ``source`` to ``target``.

    :param target: a ProviderTree holding none of these providers.
    :param generations: ``{uuid: generation}`` to record instead of the
        source's.
    """
    generations = generations or {}
    for root_uuid in root_uuids:
        for uuid in source.get_provider_uuids(root_uuid):
            data = source.data(uuid)
            generation = generations.get(uuid, data.generation)
            if data.parent_uuid is None:
                target.new_root(data.name, uuid, generation)
            else:
                target.new_child(data.name, data.parent_uuid, uuid=uuid,
                                 generation=generation)
            target.update_inventory(uuid, data.inventory)
            target.update_traits(uuid, data.traits)
            target.update_aggregates(uuid, data.aggregates)


def _error_of(resp):
    """``(code, detail)`` of an error answer; either may be None."""
    try:
        errors = resp.json().get('errors') or [{}]
        first = errors[0]
        return first.get('code'), first.get('detail') or first.get('title')
    except (ValueError, AttributeError, IndexError, TypeError):
        return None, resp.text[:200]


class ReportClient:
    """Provider trees and allocations of a Placement user.

    :param adapter: a keystoneauth1 ``Adapter`` to Placement that does not
        raise on HTTP errors (``raise_exc=False``).
    :param tree_allocations: optional; a callable taking a root provider's
        uuid and returning what :meth:`get_allocations_for_provider_tree`
        returns for that tree, faster than HTTP can (the in-process
        Placement's ``InProcessPlacement.tree_allocations`` reads it in a
        constant number of database queries). Give it only with an
        adapter to the Placement of that same database.
    """

    def __init__(self, adapter, tree_allocations=None):
        self._adapter = adapter
        self._tree_allocations = tree_allocations
        self._lock = threading.Lock()
        self._cache = provider_tree.ProviderTree()

    # --- HTTP ---------------------------------------------------------------

    def _request(self, method, url, expected, body=None, params=None):
        """The answer to one request, when its status is in ``expected``.

        :raises: PlacementAPIError otherwise; the adapter's transport
            errors (keystoneauth1's ``ConnectFailure``, ...) as they are.
        """
        kwargs = {'headers': dict(_HEADERS)}
        if body is not None:
            kwargs['json'] = body
        if params:
            kwargs['params'] = params
        resp = self._adapter.request(url, method, **kwargs)
        if resp.status_code not in expected:
            code, detail = _error_of(resp)
            raise exception.PlacementAPIError(method, url, resp.status_code,
                                              code, detail)
        return resp

    def _read_tree(self, rp_uuid):
        """The tree holding ``rp_uuid`` in Placement, or None.

        One request for the providers, then three per provider
        (inventories, traits, aggregates). A provider's generation is the
        one of the first request: its data, read later, is at least as
        new, so a write made with that generation fails rather than
        overwrites a change it did not see.
        """
        providers = self._request(
            'GET', '/resource_providers', (200,),
            params={'in_tree': rp_uuid}).json()['resource_providers']
        if not providers:
            return None
        tree = provider_tree.ProviderTree()
        tree.populate_from_iterable(providers)
        for rp in providers:
            path = '/resource_providers/%s' % rp['uuid']
            tree.update_inventory(rp['uuid'], self._request(
                'GET', path + '/inventories', (200,)).json()['inventories'])
            tree.update_traits(rp['uuid'], self._request(
                'GET', path + '/traits', (200,)).json()['traits'])
            tree.update_aggregates(rp['uuid'], self._request(
                'GET', path + '/aggregates', (200,)).json()['aggregates'])
        return tree

    # --- the cache (call with the lock held) --------------------------------

    def _cached_uuid(self, uuid):
        """Whether the cache has a provider with this uuid (not name)."""
        try:
            return self._cache.data(uuid).uuid == uuid
        except provider_tree.ProviderNotFound:
            return False

    def _forget(self, uuids):
        """Drop from the cache the trees holding any of ``uuids``."""
        for uuid in uuids:
            if self._cached_uuid(uuid):
                self._cache.remove(self._cache.data(uuid).root_uuid)

    def _store(self, tree):
        """Put every tree of ``tree`` in the cache, replacing old copies.

        A cached tree holding one of their providers, or a name one of
        them now has, is stale (Placement's names are unique): dropped.
        """
        uuids = tree.get_provider_uuids()
        self._forget(uuids)
        for uuid in uuids:
            name = tree.data(uuid).name
            if self._cache.exists(name):
                self._cache.remove(self._cache.data(name).root_uuid)
        _copy_providers(tree, self._cache, tree.root_uuids)

    # --- reading ------------------------------------------------------------

    def get_provider_tree_and_ensure_root(self, context, rp_uuid, name=None,
                                          parent_provider_uuid=None):
        """A copy of the tree holding ``rp_uuid``, creating it if needed.

        A tree already in the cache is not read again. Otherwise it is
        read from Placement into the cache (providers, inventories,
        traits, aggregates, generations); when Placement has no provider
        ``rp_uuid``, it is created first: a root, or a child of
        ``parent_provider_uuid``.

        :param context: unused; the signature of the upstream compute
            service's report client.
        :param name: the name of the provider to create; ``rp_uuid`` when
            omitted. Not used when the provider exists.
        :returns: a ProviderTree holding every tree of the cache, the
            caller's to edit and to hand to
            :meth:`update_from_provider_tree`.
        :raises: PlacementAPIError, with code ``placement.duplicate_name``
            when another provider has the name; keystoneauth1's errors
            when Placement cannot be reached.
        """
        with self._lock:
            cached = self._cached_uuid(rp_uuid)
        if not cached:
            tree = self._read_tree(rp_uuid)
            if tree is None:
                tree = self._create(rp_uuid, name or rp_uuid,
                                    parent_provider_uuid)
            with self._lock:
                self._store(tree)
        with self._lock:
            return copy.deepcopy(self._cache)

    def _create(self, rp_uuid, name, parent_uuid):
        """Create a provider; the tree it is now in (as _read_tree)."""
        body = {'uuid': rp_uuid, 'name': name}
        if parent_uuid is not None:
            body['parent_provider_uuid'] = parent_uuid
        try:
            created = self._request('POST', '/resource_providers', (200,),
                                    body=body).json()
        except exception.PlacementAPIError as exc:
            # Created meanwhile by someone else (the same code covers a
            # uuid taken): then read it; a name taken by another provider
            # is the caller's to handle.
            tree = (self._read_tree(rp_uuid)
                    if exc.code == DUPLICATE_NAME else None)
            if tree is None:
                raise
            return tree
        LOG.info('Created resource provider %s (%s)', name, rp_uuid)
        if parent_uuid is not None:
            return self._read_tree(rp_uuid)
        tree = provider_tree.ProviderTree()
        tree.new_root(created['name'], created['uuid'],
                      created['generation'])
        return tree

    def get_allocations_for_consumer(self, context, consumer_uuid):
        """The allocations of one consumer, as ``GET /allocations/{uuid}``.

        ``{'allocations': {rp uuid: {'generation': g, 'resources': {rc:
        n}}}, 'project_id', 'user_id', 'consumer_generation'}``; only
        ``{'allocations': {}}`` for a consumer without allocations.

        :param context: unused (the upstream signature).
        """
        return self._request('GET', '/allocations/%s' % consumer_uuid,
                             (200,)).json()

    def get_allocations_for_provider_tree(self, context, nodename):
        """The allocations of every consumer of a tree of the cache.

        The consumers are those with allocations on any provider of the
        tree (``GET /resource_providers/{uuid}/allocations`` for each);
        then each one's allocations are read whole (``GET
        /allocations/{consumer}``), on sharing providers outside the tree
        too: at most N + C requests for N providers and C consumers. With
        ``tree_allocations`` given to the client, it answers instead.

        Blind spot (as in the upstream design): a consumer whose
        allocations are all on sharing providers (none on the tree itself)
        is not found, and so not in the result.

        :param context: unused (the upstream signature).
        :param nodename: the name or uuid of a root provider in the cache
            (read with :meth:`get_provider_tree_and_ensure_root`).
        :returns: ``{consumer uuid: allocation record}``, each record as
            :meth:`get_allocations_for_consumer` answers it, which is
            what a driver's ``update_provider_tree`` edits and what
            :meth:`update_from_provider_tree` takes.
        :raises: ValueError when ``nodename`` is not a root in the cache;
            PlacementAPIError.
        """
        with self._lock:
            try:
                root = self._cache.data(nodename)
            except provider_tree.ProviderNotFound:
                root = None
            if root is None or root.parent_uuid is not None:
                raise ValueError(
                    'No root provider %s in the report client\'s cache: '
                    'read it with get_provider_tree_and_ensure_root '
                    'first.' % nodename)
            uuids = self._cache.get_provider_uuids(root.uuid)
        if self._tree_allocations is not None:
            return self._tree_allocations(root.uuid)
        consumers = {}  # an ordered set
        for uuid in uuids:
            resp = self._request(
                'GET', '/resource_providers/%s/allocations' % uuid,
                (200, 404))
            if resp.status_code == 200:
                consumers.update(dict.fromkeys(resp.json()['allocations']))
        result = {}
        for consumer in consumers:
            record = self.get_allocations_for_consumer(context, consumer)
            # Gone meanwhile: nothing of it to move.
            if record.get('allocations'):
                result[consumer] = record
        return result

    # --- writing ------------------------------------------------------------

    def update_from_provider_tree(self, context, new_tree, allocations=None):
        """Make Placement hold ``new_tree``; send only what changed.

        ``new_tree`` is a copy from :meth:`get_provider_tree_and_ensure_root`
        that the caller edited; each of its roots must be in the cache.
        Compared with the cache, in this order:

        1. custom resource classes and traits it uses are created where
           missing (``PUT /resource_classes/CUSTOM_X``, ``PUT
           /traits/CUSTOM_X``);
        2. providers whose name changed are renamed, new providers are
           created, parents first;
        3. with ``allocations``, one ``POST /reshaper`` sends the changed
           inventories (an empty one for every removed provider that has
           some, so that its allocations can move) and every consumer of
           ``allocations`` with its generation, project and user: Placement
           moves them in one transaction;
        4. providers no longer in the tree are deleted, children first;
        5. the changed inventories (unless sent in 3), traits and
           aggregates are written, each with the provider's generation.

        The cache then holds ``new_tree`` with the generations Placement
        answered. Trees of the cache that ``new_tree`` does not hold are
        left alone (delete a whole tree with :meth:`delete_provider`).

        :param context: unused (the upstream signature).
        :param allocations: None, or ``{consumer uuid: allocation record}``
            as :meth:`get_allocations_for_provider_tree` returns, edited:
            the complete final allocations of each consumer in it
            (``{'allocations': {}}`` removes a consumer's). Each record
            needs ``project_id``, ``user_id`` and ``consumer_generation``.
        :raises: ValueError when a root of ``new_tree`` is not in the
            cache. ProviderUpdateConflict when Placement answered 409
            ``placement.concurrent_update``: re-read the tree, redo the
            change and retry, a bounded number of times. ReshapeFailed
            (``allocations`` given) or ProviderUpdateFailed (not) on any
            other failure. After any of these the trees concerned are no
            longer in the cache.
        """
        roots = new_tree.root_uuids
        with self._lock:
            unknown = [root for root in roots
                       if not self._cached_uuid(root)
                       or self._cache.data(root).parent_uuid is not None]
            if unknown:
                raise ValueError(
                    'Root provider(s) %s not in the report client\'s cache: '
                    'read them with get_provider_tree_and_ensure_root.'
                    % ', '.join(unknown))
            old = provider_tree.ProviderTree()
            _copy_providers(self._cache, old, roots)
        diff = diff_trees(old, new_tree)
        touched = set(roots)
        try:
            generations = self._flush(old, new_tree, diff, allocations,
                                      touched)
        except (exception.PlacementAPIError, ks_exc.ClientException) as exc:
            with self._lock:
                self._forget(touched)
            if getattr(exc, 'code', None) == CONCURRENT_UPDATE:
                raise exception.ProviderUpdateConflict(exc)
            if allocations is not None:
                raise exception.ReshapeFailed(exc)
            raise exception.ProviderUpdateFailed(exc)
        done = provider_tree.ProviderTree()
        _copy_providers(new_tree, done, roots, generations)
        with self._lock:
            # Providers outside these trees whose generations a reshape
            # changed: their cached trees are stale.
            self._forget(touched - set(roots))
            self._cache_replace(roots, done)

    def _cache_replace(self, roots, tree):
        """Replace the cached trees of ``roots`` by ``tree`` (lock held)."""
        for root in roots:
            if self._cached_uuid(root):
                self._cache.remove(root)
        self._store(tree)

    def _flush(self, old, new, diff, allocations, touched):
        """Send ``diff``; the providers' generations after it.

        :param touched: a set, extended with the providers outside the
            trees whose generations change (receivers of allocations).
        """
        generations = {uuid: old.data(uuid).generation
                       for uuid in old.get_provider_uuids()}
        for rc in diff.resource_classes:
            self._request('PUT', '/resource_classes/%s' % rc, (201, 204))
        for trait in diff.custom_traits:
            self._request('PUT', '/traits/%s' % trait, (201, 204))
        for uuid in diff.renamed:
            if uuid in diff.created:
                continue
            data = new.data(uuid)
            answer = self._request(
                'PUT', '/resource_providers/%s' % uuid, (200,),
                body={'name': data.name,
                      'parent_provider_uuid': data.parent_uuid}).json()
            generations[uuid] = answer['generation']
        for uuid in diff.created:
            data = new.data(uuid)
            body = {'uuid': uuid, 'name': data.name}
            if data.parent_uuid is not None:
                body['parent_provider_uuid'] = data.parent_uuid
            answer = self._request('POST', '/resource_providers', (200,),
                                   body=body).json()
            generations[uuid] = answer['generation']
        reshaped = False
        if allocations is not None:
            reshaped = self._reshape(old, new, diff, allocations,
                                     generations, touched)
        for uuid in diff.removed:
            self._request('DELETE', '/resource_providers/%s' % uuid,
                          (204, 404))
            generations.pop(uuid, None)
        for uuid in new.get_provider_uuids():
            data = new.data(uuid)
            path = '/resource_providers/%s' % uuid
            if uuid in diff.inventories and not reshaped:
                generations[uuid] = self._request(
                    'PUT', path + '/inventories', (200,), body={
                        'resource_provider_generation': generations[uuid],
                        'inventories': data.inventory,
                    }).json()['resource_provider_generation']
            if uuid in diff.traits:
                generations[uuid] = self._request(
                    'PUT', path + '/traits', (200,), body={
                        'resource_provider_generation': generations[uuid],
                        'traits': sorted(data.traits),
                    }).json()['resource_provider_generation']
            if uuid in diff.aggregates:
                generations[uuid] = self._request(
                    'PUT', path + '/aggregates', (200,), body={
                        'resource_provider_generation': generations[uuid],
                        'aggregates': sorted(data.aggregates),
                    }).json()['resource_provider_generation']
        return generations

    def _reshape(self, old, new, diff, allocations, generations, touched):
        """One ``POST /reshaper``; whether one was sent.

        Updates ``generations`` afterwards: a reshape changes them by
        amounts it does not answer, so the trees' providers are listed
        again (one request per tree).
        """
        inventories = {}
        for uuid in diff.inventories:
            inventories[uuid] = {
                'resource_provider_generation': generations[uuid],
                'inventories': new.data(uuid).inventory}
        for uuid in diff.removed:
            if old.data(uuid).inventory:
                inventories[uuid] = {
                    'resource_provider_generation': generations[uuid],
                    'inventories': {}}
        if not inventories and not allocations:
            return False
        payload = {'inventories': inventories, 'allocations': {}}
        for consumer, record in allocations.items():
            payload['allocations'][consumer] = {
                'allocations': {
                    rp: {'resources': dict(value['resources'])}
                    for rp, value in record['allocations'].items()},
                'project_id': record.get('project_id'),
                'user_id': record.get('user_id'),
                'consumer_generation': record.get('consumer_generation'),
            }
            touched.update(record['allocations'])
        self._request('POST', '/reshaper', (204,), body=payload)
        LOG.info('Reshaped the inventories of %d provider(s) and the '
                 'allocations of %d consumer(s)', len(inventories),
                 len(allocations))
        for root in new.root_uuids:
            listed = self._request(
                'GET', '/resource_providers', (200,),
                params={'in_tree': root}).json()['resource_providers']
            for rp in listed:
                generations[rp['uuid']] = rp['generation']
        return True

    # --- helpers ------------------------------------------------------------

    def clear_provider_cache(self, root_uuid=None):
        """Forget a tree (the one holding ``root_uuid``), or every tree.

        The next :meth:`get_provider_tree_and_ensure_root` reads it again.
        """
        with self._lock:
            if root_uuid is None:
                self._cache = provider_tree.ProviderTree()
            else:
                self._forget([root_uuid])

    def delete_provider(self, rp_uuid):
        """Delete a provider and its descendants, children first.

        The tree is read from Placement; its cached copy is dropped.

        :returns: whether Placement had the provider.
        :raises: PlacementAPIError, with code
            ``placement.resource_provider.inuse`` when one of them has
            allocations (those deleted before it stay deleted).
        """
        providers = self._request(
            'GET', '/resource_providers', (200,),
            params={'in_tree': rp_uuid}).json()['resource_providers']
        with self._lock:
            self._forget([rp['uuid'] for rp in providers])
        if not any(rp['uuid'] == rp_uuid for rp in providers):
            return False
        tree = provider_tree.ProviderTree()
        tree.populate_from_iterable(providers)
        for uuid in reversed(tree.get_provider_uuids(rp_uuid)):
            self._request('DELETE', '/resource_providers/%s' % uuid,
                          (204, 404))
        return True
