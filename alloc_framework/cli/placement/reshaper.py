"""``alloc resource reshape``: POST /reshaper (1.30+).

The request body (``inventories`` and ``allocations``, as the Placement
API reference describes it) is read from a JSON file, because a reshape
moves inventory and allocations of a whole provider tree at once and does
not fit in command line options.
"""

from cliff import command

from alloc_framework.cli import common


class ReshapeResource(common.VersionMixin, command.Command):
    """Atomically replace inventories and allocations of a provider tree.

    The server's default policy allows this to the ``service`` role only.

    Example::

        alloc resource reshape --file reshape.json
    """

    min_version = '1.30'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        common.add_file_argument(parser, 'reshaper request body')
        return parser

    def take_action(self, parsed_args):
        body = common.load_json_file(parsed_args.file)
        self.client().post('/reshaper', body)
