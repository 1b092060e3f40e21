"""``alloc resource provider tree show``: a whole provider tree at once.

An operator compares a tree before and after a reshape: which providers
exist, where each inventory sits, how much of it is used, and the traits
and aggregates of each provider. Only the public Placement API is used
(``GET /resource_providers?in_tree=`` and each provider's
``inventories``, ``usages``, ``traits`` and ``aggregates``), so the
command works against any Placement, ours or upstream.
"""

from cliff import columns
from cliff import lister

from alloc_framework.cli import common
from alloc_framework.cli.placement import resource_provider

BASE_URL = resource_provider.BASE_URL
# Formatters that get the structured rows; the others get TABLE_FIELDS.
STRUCTURED_FORMATTERS = ('json', 'yaml')
FIELDS = ('uuid', 'name', 'parent_provider_uuid', 'depth', 'generation',
          'inventories', 'traits', 'aggregates')
TABLE_FIELDS = ('provider', 'uuid', 'generation', 'inventories', 'traits')
INDENT = '  '


def top_down(providers):
    """``[(depth, provider)]``: each provider after its parent, siblings
    by name, the root first.

    A provider whose parent is not in ``providers`` (the tree changed
    between two requests) is shown as a root rather than dropped.
    """
    by_uuid = {p['uuid']: p for p in providers}
    children = {}
    for p in providers:
        parent = p.get('parent_provider_uuid')
        children.setdefault(parent if parent in by_uuid else None,
                            []).append(p)
    ordered = []
    stack = [(0, p) for p in sorted(children.get(None, []),
                                    key=lambda p: p['name'], reverse=True)]
    while stack:
        depth, provider = stack.pop()
        ordered.append((depth, provider))
        stack.extend((depth + 1, child) for child in sorted(
            children.get(provider['uuid'], []), key=lambda p: p['name'],
            reverse=True))
    return ordered


class InventoriesColumn(columns.FormattableColumn):
    """One line per class in tables: ``VCPU: 2/8 (reserved 1)``."""

    def human_readable(self):
        lines = []
        for rc, inv in sorted(self._value.items()):
            notes = []
            if inv['reserved']:
                notes.append('reserved %d' % inv['reserved'])
            if inv['allocation_ratio'] != 1.0:
                notes.append('ratio %g' % inv['allocation_ratio'])
            if inv['used'] > inv['capacity']:
                notes.append('over capacity %d' % inv['capacity'])
            line = '%s: %d/%d' % (rc, inv['used'], inv['total'])
            if notes:
                line += ' (%s)' % ', '.join(notes)
            lines.append(line)
        return '\n'.join(lines)


class ShowResourceProviderTree(common.ProviderLookupMixin,
                               common.VersionMixin, lister.Lister):
    """Show the whole tree of a resource provider, from its root.

    One row per provider, top-down, the name indented by depth, with each
    inventory as ``CLASS: used/total`` (and its reserved amount, a ratio
    other than 1 and ``over capacity`` where they apply) and the traits.
    With ``-f json`` or ``-f yaml`` each provider is a record with its
    uuid, name, parent_provider_uuid, depth, generation, inventories
    (every field, with used and capacity), traits and aggregates.
    """

    min_version = '1.14'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            'uuid', metavar='<provider>',
            help='Name or UUID of any resource provider of the tree (a '
                 'bare metal node\'s provider has the node\'s name and '
                 'UUID).')
        return parser

    def take_action(self, parsed_args):
        api = self.client()
        providers = api.get(BASE_URL, params={
            'in_tree': parsed_args.uuid})['resource_providers']
        if not providers:
            raise common.CommandError(
                'No resource provider with the name or UUID %r'
                % parsed_args.uuid)
        records = [self._record(api, depth, provider)
                   for depth, provider in top_down(providers)]
        if parsed_args.formatter in STRUCTURED_FORMATTERS:
            return FIELDS, [common.get_properties(r, FIELDS)
                            for r in records]
        return TABLE_FIELDS, [
            (INDENT * r['depth'] + r['name'], r['uuid'], r['generation'],
             InventoriesColumn(r['inventories']),
             ', '.join(r['traits']))
            for r in records]

    @staticmethod
    def _record(api, depth, provider):
        url = BASE_URL + '/' + provider['uuid']
        return {
            'uuid': provider['uuid'],
            'name': provider['name'],
            'parent_provider_uuid': provider.get('parent_provider_uuid'),
            'depth': depth,
            'generation': provider['generation'],
            'inventories': resource_provider.inventories_with_usage(
                api, provider['uuid']),
            'traits': sorted(api.get(url + '/traits')['traits']),
            'aggregates': sorted(api.get(url + '/aggregates')['aggregates']),
        }
