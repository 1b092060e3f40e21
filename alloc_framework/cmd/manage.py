"""``alloc-manage``: administrative commands (database schema and the like)."""

import sys

from oslo_config import cfg

from alloc_framework import conf as af_conf
from alloc_framework.common import service_setup
from alloc_framework.db import migration


class DBCommands:
    """alloc-manage db ..."""

    def sync(self):
        """Create or upgrade the database schema to the newest version."""
        migration.upgrade('head')
        print('Database schema is at revision %s' % migration.version())

    def version(self):
        """Print the current schema revision ("None" when empty)."""
        print(migration.version())


def add_command_parsers(subparsers):
    db = subparsers.add_parser('db', help='Database schema management.')
    db_sub = db.add_subparsers(dest='action', metavar='<action>')
    db_sub.required = True
    for name, func in (('sync', DBCommands().sync),
                       ('version', DBCommands().version)):
        parser = db_sub.add_parser(name, help=func.__doc__.splitlines()[0])
        parser.set_defaults(func=func)


command_opt = cfg.SubCommandOpt('command',
                                title='Commands',
                                help='Available commands',
                                handler=add_command_parsers)


def main(argv=None):
    conf = af_conf.CONF
    conf.register_cli_opt(command_opt)
    service_setup.prepare_service(argv, conf)
    try:
        conf.command.func()
    except Exception as exc:  # report, do not dump a traceback at operators
        print('ERROR: %s' % exc, file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
