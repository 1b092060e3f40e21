"""``alloc-manage``: administrative commands (schema, Placement drift)."""

import sys

from oslo_config import cfg

from alloc_framework.cmd import service_setup
from alloc_framework import conf as af_conf
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


class PlacementCommands:
    """alloc-manage placement ..."""

    def __init__(self, conf):
        self.conf = conf

    def drift(self):
        """Report drift between nodes and their Placement providers.

        Exit status 0 when there is none; 3 when there is some and
        --heal was not given; with --heal, 0 when everything was healed,
        1 otherwise.
        """
        from alloc_framework.api.placement import direct
        from alloc_framework.common import context as af_context
        from alloc_framework.drivers.allocation import placement
        from alloc_framework.drivers.allocation import placement_drift

        if self.conf.allocation.backend != 'placement':
            print('Note: [allocation]backend is %s, not placement'
                  % self.conf.allocation.backend)
        context = af_context.get_admin_context()
        backend = placement.PlacementBackend(self.conf)
        backend.in_process_placement = direct.InProcessPlacement(self.conf)
        drifts = placement_drift.find(context, backend)
        if not drifts:
            print('No drift between nodes and Placement')
            return 0
        if not self.conf.command.heal:
            for drift in drifts:
                print('%s: %s' % (drift.kind, drift.detail))
            print('%d differences (heal them with --heal)' % len(drifts))
            return 3
        failed = 0
        for drift, error in placement_drift.heal(context, backend, drifts):
            if error is None:
                print('healed %s: %s' % (drift.kind, drift.detail))
            else:
                failed += 1
                print('NOT healed %s: %s: %s' % (drift.kind, drift.detail,
                                                 error))
        print('%d of %d differences healed'
              % (len(drifts) - failed, len(drifts)))
        return 1 if failed else 0


def add_command_parsers(subparsers):
    db = subparsers.add_parser('db', help='Database schema management.')
    db_sub = db.add_subparsers(dest='action', metavar='<action>')
    db_sub.required = True
    for name, func in (('sync', DBCommands().sync),
                       ('version', DBCommands().version)):
        parser = db_sub.add_parser(name, help=func.__doc__.splitlines()[0])
        parser.set_defaults(func=func)

    placement = subparsers.add_parser(
        'placement', help='The placement node allocation backend.')
    placement_sub = placement.add_subparsers(dest='action',
                                             metavar='<action>')
    placement_sub.required = True
    drift = placement_sub.add_parser(
        'drift', help=PlacementCommands.drift.__doc__.splitlines()[0],
        description=PlacementCommands.drift.__doc__)
    drift.add_argument('--heal', action='store_true',
                       help='Repair what differs: create missing '
                            'providers, update stale ones, delete '
                            'providers without a node and claims without '
                            'an allocation, claim nodes for their '
                            'allocations.')
    drift.set_defaults(
        func=lambda: PlacementCommands(af_conf.CONF).drift())


command_opt = cfg.SubCommandOpt('command',
                                title='Commands',
                                help='Available commands',
                                handler=add_command_parsers)


def main(argv=None):
    conf = af_conf.CONF
    conf.register_cli_opt(command_opt)
    # db sync is what a schema that is behind needs.
    service_setup.prepare_service(argv, conf, check_schema=False)
    try:
        return conf.command.func() or 0
    except Exception as exc:  # report, do not dump a traceback at operators
        print('ERROR: %s' % exc, file=sys.stderr)
        return 1


if __name__ == '__main__':
    sys.exit(main())
