"""A local picture of resource provider trees, as a Placement user keeps it.

:class:`ProviderTree` holds one or more trees of resource providers (a
root per node or host, children below) with what a Placement user
reports about each: inventories, traits, aggregates and the generation
last seen. It behaves as the provider tree of the upstream compute
service, the one Placement users know:

* One lock per tree: every public method holds it for its whole run, so
  threads may share a tree; a reader never sees a half-done change.
* A provider is named by its name or its uuid wherever a method takes
  ``name_or_uuid``; uuids are looked up first. Names and uuids are unique
  in the whole :class:`ProviderTree` (all its roots), as they are in
  Placement. An unknown provider raises :class:`ProviderNotFound`, a name
  or uuid already used raises :class:`DuplicateProvider`; both are
  ``ValueError`` and name the provider.
* :meth:`ProviderTree.data` returns a :class:`ProviderData` snapshot: a
  namedtuple whose inventory is a deep copy and whose traits and
  aggregates are frozensets, so nothing done to it changes the tree.
* ``update_inventory``, ``update_traits`` and ``update_aggregates`` (and
  the ``add_``/``remove_`` helpers) return whether the provider's data
  changed. A ``generation`` given with them is recorded whether or not the
  data changed, and is not itself counted as a change.
* Inventories compare as Placement stores them: an optional field left
  out equals its default (``min_unit`` 1, ``max_unit`` 2147483647,
  ``step_size`` 1, ``reserved`` 0, ``allocation_ratio`` 1.0).
* Walks are top-down: :meth:`ProviderTree.get_provider_uuids` lists a
  provider before its descendants, children in the order they were added,
  so creating providers in that order never meets a missing parent, and
  removing them in the reverse order never removes a parent first.

It imports only the standard library, third-party libraries and
``alloc_framework.common``: any Placement user can load it without the
server.
"""

import collections
import copy
import threading

import os_traits
from oslo_utils import uuidutils

# The optional fields of an inventory record and their default values in
# Placement (ours and upstream's alike).
INVENTORY_DEFAULTS = {
    'min_unit': 1,
    'max_unit': 2147483647,
    'step_size': 1,
    'reserved': 0,
    'allocation_ratio': 1.0,
}


class ProviderTreeError(ValueError):
    """Base of the errors of a provider tree."""


class ProviderNotFound(ProviderTreeError):
    """No provider of the tree has this name or uuid."""

    def __init__(self, name_or_uuid):
        self.name_or_uuid = name_or_uuid
        super().__init__(
            'No resource provider with name or uuid %s in the provider '
            'tree.' % name_or_uuid)


class DuplicateProvider(ProviderTreeError):
    """A provider of the tree already has this name or uuid."""

    def __init__(self, field, value):
        self.field = field
        self.value = value
        super().__init__(
            'A resource provider with %s %s is already in the provider '
            'tree.' % (field, value))


ProviderData = collections.namedtuple('ProviderData', (
    'uuid', 'name', 'generation', 'parent_uuid', 'root_uuid', 'inventory',
    'traits', 'aggregates'))
ProviderData.__doc__ = """A read-only snapshot of one provider.

``inventory`` is a deep copy ``{resource class: record}``, ``traits`` and
``aggregates`` are frozensets: changing them never changes the tree.
"""


def _normalized_record(record):
    """An inventory record with its left-out optional fields filled in."""
    full = dict(INVENTORY_DEFAULTS)
    full.update(record)
    return full


def inventory_has_changed(current, new):
    """Whether ``new`` differs from ``current`` as Placement would store it.

    Both are ``{resource class: record}``; a record's optional fields left
    out compare equal to their defaults (:data:`INVENTORY_DEFAULTS`).
    """
    if set(current) != set(new):
        return True
    return any(_normalized_record(current[rc]) != _normalized_record(new[rc])
               for rc in current)


class _Provider(object):
    """One provider of the tree; used under the tree's lock only."""

    def __init__(self, name, uuid, generation=None, parent=None):
        self.name = name
        self.uuid = uuid
        self.generation = generation
        self.parent = parent
        self.children = {}  # uuid -> _Provider, in the order added
        self.inventory = {}
        self.traits = set()
        self.aggregates = set()

    @property
    def root(self):
        provider = self
        while provider.parent is not None:
            provider = provider.parent
        return provider

    def walk(self):
        """This provider, then its descendants, top-down (pre-order)."""
        stack = [self]
        while stack:
            provider = stack.pop()
            yield provider
            stack.extend(reversed(list(provider.children.values())))

    def set_generation(self, generation):
        if generation is not None:
            self.generation = generation

    def snapshot(self):
        return ProviderData(
            uuid=self.uuid, name=self.name, generation=self.generation,
            parent_uuid=self.parent.uuid if self.parent else None,
            root_uuid=self.root.uuid,
            inventory=copy.deepcopy(self.inventory),
            traits=frozenset(self.traits),
            aggregates=frozenset(self.aggregates))


class ProviderTree(object):
    """Trees of resource providers with their data; thread safe.

    See the module's docstring for the contract.
    """

    def __init__(self):
        self._lock = threading.RLock()
        self._roots = {}  # uuid -> _Provider, in the order added
        self._by_uuid = {}
        self._by_name = {}

    def __deepcopy__(self, memo):
        """A copy with its own lock, taken under this tree's lock."""
        with self._lock:
            other = ProviderTree()
            for root in self._roots.values():
                for provider in root.walk():
                    parent = (other._by_uuid[provider.parent.uuid]
                              if provider.parent else None)
                    twin = other._add(provider.name, provider.uuid,
                                      provider.generation, parent)
                    twin.inventory = copy.deepcopy(provider.inventory)
                    twin.traits = set(provider.traits)
                    twin.aggregates = set(provider.aggregates)
            return other

    # --- internals, called with the lock held -------------------------------

    def _find(self, name_or_uuid):
        provider = self._by_uuid.get(name_or_uuid)
        if provider is None:
            provider = self._by_name.get(name_or_uuid)
        if provider is None:
            raise ProviderNotFound(name_or_uuid)
        return provider

    def _check_new(self, name, uuid):
        if not name or not isinstance(name, str):
            raise ProviderTreeError(
                'A resource provider needs a name, not %r.' % (name,))
        if not uuidutils.is_uuid_like(uuid):
            raise ProviderTreeError(
                'Resource provider %s: %r is not a uuid.' % (name, uuid))
        if uuid in self._by_uuid:
            raise DuplicateProvider('uuid', uuid)
        if name in self._by_name:
            raise DuplicateProvider('name', name)

    def _add(self, name, uuid, generation, parent):
        self._check_new(name, uuid)
        provider = _Provider(name, uuid, generation, parent)
        if parent is None:
            self._roots[uuid] = provider
        else:
            parent.children[uuid] = provider
        self._by_uuid[uuid] = provider
        self._by_name[name] = provider
        return provider

    # --- shape of the tree --------------------------------------------------

    def new_root(self, name, uuid, generation=None):
        """Add a root provider; return its uuid.

        :raises: DuplicateProvider when the name or uuid is taken,
            ProviderTreeError when either is not valid.
        """
        with self._lock:
            return self._add(name, uuid, generation, None).uuid

    def new_child(self, name, parent, uuid=None, generation=None):
        """Add a child of ``parent`` (a name or uuid); return its uuid.

        :param uuid: the child's uuid; a new one is made when omitted.
        :raises: ProviderNotFound when the parent is unknown,
            DuplicateProvider when the name or uuid is taken.
        """
        with self._lock:
            parent_provider = self._find(parent)
            if uuid is None:
                uuid = uuidutils.generate_uuid()
            return self._add(name, uuid, generation, parent_provider).uuid

    def remove(self, name_or_uuid):
        """Remove a provider and all its descendants.

        :raises: ProviderNotFound when the provider is unknown.
        """
        with self._lock:
            provider = self._find(name_or_uuid)
            for gone in list(provider.walk()):
                del self._by_uuid[gone.uuid]
                del self._by_name[gone.name]
            if provider.parent is None:
                del self._roots[provider.uuid]
            else:
                del provider.parent.children[provider.uuid]
                provider.parent = None

    def exists(self, name_or_uuid):
        """Whether a provider has this name or uuid."""
        with self._lock:
            return (name_or_uuid in self._by_uuid
                    or name_or_uuid in self._by_name)

    def data(self, name_or_uuid):
        """A :class:`ProviderData` snapshot of the provider.

        :raises: ProviderNotFound when the provider is unknown.
        """
        with self._lock:
            return self._find(name_or_uuid).snapshot()

    @property
    def roots(self):
        """Snapshots of the root providers, in the order added."""
        with self._lock:
            return [root.snapshot() for root in self._roots.values()]

    @property
    def root_uuids(self):
        """The uuids of the root providers, in the order added."""
        with self._lock:
            return list(self._roots)

    def get_provider_uuids(self, name_or_uuid=None):
        """The uuids of a provider and its descendants, top-down.

        Without ``name_or_uuid``, those of every provider of every tree,
        root by root. A provider always comes before its descendants.

        :raises: ProviderNotFound when the provider is unknown.
        """
        with self._lock:
            if name_or_uuid is None:
                starts = list(self._roots.values())
            else:
                starts = [self._find(name_or_uuid)]
            return [p.uuid for start in starts for p in start.walk()]

    def get_provider_uuids_in_tree(self, name_or_uuid):
        """The uuids of the whole tree the provider is in, top-down.

        :raises: ProviderNotFound when the provider is unknown.
        """
        with self._lock:
            return [p.uuid for p in self._find(name_or_uuid).root.walk()]

    def populate_from_iterable(self, provider_dicts):
        """Add or refresh providers as Placement lists them.

        Each dict is a provider of ``GET /resource_providers``: ``uuid``,
        ``name``, ``generation``, ``parent_provider_uuid`` (None for a
        root) and optionally ``root_provider_uuid``. They may come in any
        order; every parent must be among them or already in the tree. A
        provider already in the tree (by uuid) gets the name and
        generation given and keeps its inventory, traits, aggregates and
        children. Nothing changes unless the whole input is valid.

        :raises: ProviderTreeError (a ValueError) naming the provider when
            a parent is unknown, a parent is not the one already in the
            tree, the parents loop, the given root is not the provider's
            root, or a name or uuid is used twice.
        """
        dicts = list(provider_dicts)
        with self._lock:
            by_uuid = {}
            for pd in dicts:
                if pd['uuid'] in by_uuid:
                    raise DuplicateProvider('uuid', pd['uuid'])
                by_uuid[pd['uuid']] = pd
            self._check_populate(by_uuid)
            # Top-down: a provider after its parent.
            ordered = []
            placed = set()

            def place(pd):
                parent_uuid = pd.get('parent_provider_uuid')
                if parent_uuid in by_uuid and parent_uuid not in placed:
                    place(by_uuid[parent_uuid])
                placed.add(pd['uuid'])
                ordered.append(pd)

            for pd in dicts:
                if pd['uuid'] not in placed:
                    place(pd)
            # Renames first, all at once, so that names may move between
            # providers and a new provider may take a name let go.
            renamed = [self._by_uuid[pd['uuid']] for pd in ordered
                       if pd['uuid'] in self._by_uuid
                       and self._by_uuid[pd['uuid']].name != pd['name']]
            for provider in renamed:
                del self._by_name[provider.name]
            for provider in renamed:
                provider.name = by_uuid[provider.uuid]['name']
                self._by_name[provider.name] = provider
            for pd in ordered:
                existing = self._by_uuid.get(pd['uuid'])
                if existing is not None:
                    existing.set_generation(pd.get('generation'))
                    continue
                parent_uuid = pd.get('parent_provider_uuid')
                parent = self._by_uuid[parent_uuid] if parent_uuid else None
                self._add(pd['name'], pd['uuid'], pd.get('generation'),
                          parent)

    def _check_populate(self, by_uuid):
        """Raise the first reason why ``by_uuid`` cannot be populated."""
        names = {}
        for uuid, pd in by_uuid.items():
            name = pd['name']
            if name in names:
                raise DuplicateProvider('name', name)
            names[name] = uuid
            owner = self._by_name.get(name)
            if owner is not None and owner.uuid != uuid and (
                    owner.uuid not in by_uuid
                    or by_uuid[owner.uuid]['name'] == name):
                raise DuplicateProvider('name', name)
            if uuid not in self._by_uuid and (
                    not uuidutils.is_uuid_like(uuid)
                    or not name or not isinstance(name, str)):
                raise ProviderTreeError(
                    'Resource provider %r (%r) needs a name and a uuid.'
                    % (name, uuid))
            parent_uuid = pd.get('parent_provider_uuid')
            if parent_uuid is not None and parent_uuid not in by_uuid and (
                    parent_uuid not in self._by_uuid):
                raise ProviderTreeError(
                    'Resource provider %s (%s) has parent %s, which is '
                    'neither given nor in the provider tree.'
                    % (name, uuid, parent_uuid))
            existing = self._by_uuid.get(uuid)
            if existing is not None:
                known = existing.parent.uuid if existing.parent else None
                if known != parent_uuid:
                    raise ProviderTreeError(
                        'Resource provider %s (%s) has parent %s, not %s as '
                        'in the provider tree.'
                        % (name, uuid, parent_uuid, known))

        def root_of(uuid):
            seen = set()
            while True:
                if uuid in seen:
                    raise ProviderTreeError(
                        'Resource provider %s is its own ancestor.' % uuid)
                seen.add(uuid)
                if uuid in by_uuid:
                    parent_uuid = by_uuid[uuid].get('parent_provider_uuid')
                else:
                    return self._by_uuid[uuid].root.uuid
                if parent_uuid is None:
                    return uuid
                uuid = parent_uuid

        for uuid, pd in by_uuid.items():
            root = root_of(uuid)
            given = pd.get('root_provider_uuid')
            if given is not None and given != root:
                raise ProviderTreeError(
                    'Resource provider %s (%s) has root %s, but its parents '
                    'lead to %s.' % (pd['name'], uuid, given, root))

    # --- data of a provider -------------------------------------------------

    def has_inventory_changed(self, name_or_uuid, inventory):
        """Whether ``inventory`` differs from the provider's.

        Optional fields left out compare equal to their defaults.

        :raises: ProviderNotFound when the provider is unknown.
        """
        with self._lock:
            return inventory_has_changed(
                self._find(name_or_uuid).inventory, inventory)

    def update_inventory(self, name_or_uuid, inventory, generation=None):
        """Set the provider's inventory; return whether it changed.

        :param inventory: ``{resource class: record}``, copied.
        :param generation: the provider's generation, when known.
        :raises: ProviderNotFound when the provider is unknown.
        """
        with self._lock:
            provider = self._find(name_or_uuid)
            provider.set_generation(generation)
            if not inventory_has_changed(provider.inventory, inventory):
                return False
            provider.inventory = copy.deepcopy(dict(inventory))
            return True

    def has_traits(self, name_or_uuid, traits):
        """Whether the provider has every one of ``traits``."""
        with self._lock:
            return set(traits) <= self._find(name_or_uuid).traits

    def update_traits(self, name_or_uuid, traits, generation=None):
        """Set the provider's traits; return whether they changed."""
        return self._update_set(name_or_uuid, 'traits', set(traits),
                                generation)

    def add_traits(self, name_or_uuid, *traits):
        """Add traits to the provider's; return whether they changed."""
        return self._update_set(name_or_uuid, 'traits',
                                lambda cur: cur | set(traits))

    def remove_traits(self, name_or_uuid, *traits):
        """Remove traits from the provider's; return whether they changed."""
        return self._update_set(name_or_uuid, 'traits',
                                lambda cur: cur - set(traits))

    def in_aggregates(self, name_or_uuid, aggregates):
        """Whether the provider is in every one of ``aggregates``."""
        with self._lock:
            return set(aggregates) <= self._find(name_or_uuid).aggregates

    def update_aggregates(self, name_or_uuid, aggregates, generation=None):
        """Set the provider's aggregates; return whether they changed."""
        return self._update_set(name_or_uuid, 'aggregates', set(aggregates),
                                generation)

    def add_aggregates(self, name_or_uuid, *aggregates):
        """Add aggregates to the provider's; return whether they changed."""
        return self._update_set(name_or_uuid, 'aggregates',
                                lambda cur: cur | set(aggregates))

    def remove_aggregates(self, name_or_uuid, *aggregates):
        """Remove aggregates; return whether the provider's changed."""
        return self._update_set(name_or_uuid, 'aggregates',
                                lambda cur: cur - set(aggregates))

    def _update_set(self, name_or_uuid, field, new, generation=None):
        """Replace a set field (or apply ``new(current)``); say if changed."""
        with self._lock:
            provider = self._find(name_or_uuid)
            provider.set_generation(generation)
            current = getattr(provider, field)
            if callable(new):
                new = new(current)
            if new == current:
                return False
            setattr(provider, field, new)
            return True

    def has_sharing_provider(self, resource_class):
        """Whether a sharing provider has inventory of ``resource_class``.

        A sharing provider has the trait ``MISC_SHARES_VIA_AGGREGATE``.
        """
        with self._lock:
            return any(
                os_traits.MISC_SHARES_VIA_AGGREGATE in provider.traits
                and resource_class in provider.inventory
                for provider in self._by_uuid.values())
