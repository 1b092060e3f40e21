"""``alloc resource provider usage show`` and ``alloc resource usage show``.
"""

from cliff import lister

from alloc_framework.cli import common

PROVIDER_URL = '/resource_providers/{uuid}/usages'
USAGES_URL = '/usages'
FIELDS = ('resource_class', 'usage')


class ShowUsage(common.ProviderLookupMixin,
                common.VersionMixin, lister.Lister):
    """Show the usage of each resource class of a provider."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('uuid', metavar='<provider>',
                            help='Name or UUID of the resource provider.')
        return parser

    def take_action(self, parsed_args):
        usages = self.client().get(PROVIDER_URL.format(
            uuid=parsed_args.uuid))['usages']
        return FIELDS, [(rc, usages[rc]) for rc in sorted(usages)]


class ResourceShowUsage(common.VersionMixin, lister.Lister):
    """Show the usage of a project (and optionally a user) per class.

    From microversion 1.38 the usage is grouped by consumer type, with a
    consumer count per type.
    """

    min_version = '1.9'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('project_id', metavar='<project-id>',
                            help='ID of the project.')
        parser.add_argument('--user-id', metavar='<user-id>',
                            help='ID of the user.')
        parser.add_argument(
            '--consumer-type', metavar='<consumer_type>',
            help='Only consumers of this type, or all / unknown (1.38).')
        return parser

    def take_action(self, parsed_args):
        params = {'project_id': parsed_args.project_id}
        if parsed_args.user_id:
            params['user_id'] = parsed_args.user_id
        if parsed_args.consumer_type:
            self.require_version('1.38', '--consumer-type')
            params['consumer_type'] = parsed_args.consumer_type
        usages = self.client().get(USAGES_URL, params=params)['usages']
        if not self.supports('1.38'):
            return FIELDS, [(rc, usages[rc]) for rc in sorted(usages)]
        fields = ('consumer_type', 'resource_class', 'usage',
                  'consumer_count')
        rows = []
        for ctype in sorted(usages):
            group = usages[ctype]
            count = group.get('consumer_count')
            for rc in sorted(k for k in group if k != 'consumer_count'):
                rows.append((ctype, rc, group[rc], count))
        return fields, rows
