"""``alloc baremetal shard list``."""

from cliff import lister

from alloc_framework.cli.baremetal import base
from alloc_framework.cli import common


class ListShard(base.BaremetalMixin, lister.Lister):
    """List the shards and how many nodes each has (nodes without a shard
    count under "None")."""

    min_version = '1.82'

    def take_action(self, parsed_args):
        shards = self.client().get('/shards')['shards']
        columns = ('name', 'count')
        return columns, [common.get_properties(s, columns) for s in shards]
