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
        from alloc_framework.common import context as af_context
        from alloc_framework.drivers.allocation import placement
        from alloc_framework.drivers.allocation import placement_drift

        if self.conf.allocation.backend != 'placement':
            print('Note: [allocation]backend is %s, not placement'
                  % self.conf.allocation.backend)
        context = af_context.get_admin_context()
        backend = placement.PlacementBackend(self.conf)
        backend.in_process_placement = _in_process_placement(self.conf)
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

    def migrate_compute_inventory(self):
        """Reshape the resource providers of this host's nodes, offline.

        For the nodes named with --node, else every node of this host's
        conductor group whose hardware type this host enables: the sync a
        conductor does when it starts, reshaping where a hardware type
        moves inventory that consumers hold, through our Placement on the
        configured database (no service needs to run). With --dry-run,
        print what would change and change nothing. Exit status 0 when
        done or when there was nothing to do, 1 when a node failed.
        """
        from alloc_framework.common import context as af_context
        from alloc_framework.common import exception
        from alloc_framework.drivers.allocation import placement
        from alloc_framework.objects import baremetal as objects

        conf = self.conf
        if conf.allocation.backend != 'placement':
            print('Note: [allocation]backend is %s, not placement'
                  % conf.allocation.backend)
        if not _in_process(conf):
            print('Note: [placement] names a remote Placement: it must be '
                  'running')
        context = af_context.get_admin_context()
        alive = objects.Conductor.list_alive(
            context, conf.conductor.heartbeat_timeout)
        if alive:
            print('Note: conductors are running (%s); their own start does '
                  'this for their nodes' % ', '.join(
                      sorted(c.hostname for c in alive)))
        named = conf.command.node or []
        nodes = []
        for ident in named:
            try:
                nodes.append(objects.Node.get(context, ident))
            except exception.NodeNotFound:
                print('ERROR: node %s not found' % ident, file=sys.stderr)
                return 1
        if not named:
            group = (conf.conductor.conductor_group or '').lower()
            enabled = set(conf.enabled_hardware_types)
            nodes = [n for n in objects.Node.list(context)
                     if (n.conductor_group or '').lower() == group
                     and n.driver in enabled]
        backend = placement.PlacementBackend(conf)
        backend.in_process_placement = _in_process_placement(conf)
        dry_run = conf.command.dry_run
        counts = {'reshaped': 0, 'updated': 0, 'unchanged': 0, 'failed': 0}
        for node in nodes:
            label = ('%s (%s)' % (node.uuid, node.name) if node.name
                     else node.uuid)
            try:
                if dry_run:
                    differs, providers, consumers = backend.plan(node)
                else:
                    differs = backend.sync_provider(node, startup=True)
            except Exception as exc:
                counts['failed'] += 1
                print('ERROR: node %s: %s' % (label, exc), file=sys.stderr)
                continue
            kind = ('reshaped' if 'reshape' in differs
                    else 'updated' if differs else 'unchanged')
            counts[kind] += 1
            if not differs:
                continue
            verb = 'would be ' if dry_run else ''
            print('node %s: %s%s (%s)' % (label, verb, kind,
                                          ', '.join(differs)))
            if dry_run:
                for rp_uuid, name, old, new in providers:
                    print('  provider %s (%s): %s -> %s'
                          % (rp_uuid, name, _inventory_words(old),
                             _inventory_words(new)))
                for consumer, old, new in consumers:
                    print('  consumer %s: %s -> %s'
                          % (consumer, _allocation_words(old),
                             _allocation_words(new)))
        if not nodes:
            print('No node to look at')
        elif not (counts['reshaped'] or counts['updated']
                  or counts['failed']):
            print('Nothing to do: the providers of %d nodes are up to date'
                  % len(nodes))
        else:
            print('%d nodes: %d %sreshaped, %d %supdated, %d up to date, '
                  '%d failed' % (
                      len(nodes), counts['reshaped'],
                      'to be ' if dry_run else '', counts['updated'],
                      'to be ' if dry_run else '', counts['unchanged'],
                      counts['failed']))
        return 1 if counts['failed'] else 0


def _in_process(conf):
    from alloc_framework.drivers.allocation import placement_client
    return placement_client.in_process_configured(conf)


def _in_process_placement(conf):
    from alloc_framework.api.placement import direct
    return direct.InProcessPlacement(conf)


def _inventory_words(inventory):
    if inventory is None:
        return '(none)'
    return ', '.join('%s:%d' % kv for kv in sorted(inventory.items())) \
        or '(empty)'


def _allocation_words(by_provider):
    return '; '.join('%s on %s' % (_inventory_words(r), rp)
                     for rp, r in sorted(by_provider.items())) or '(none)'


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
    doc = PlacementCommands.migrate_compute_inventory.__doc__
    migrate = placement_sub.add_parser(
        'migrate-compute-inventory', help=doc.splitlines()[0],
        description=doc)
    migrate.add_argument('--node', action='append', metavar='NODE',
                         help='A node (UUID or name) to look at; repeat '
                              'for several. Default: every node of this '
                              "host's conductor group with a hardware "
                              'type it enables.')
    migrate.add_argument('--dry-run', action='store_true',
                         help='Print each provider and consumer that '
                              'would change, before and after; change '
                              'nothing.')
    migrate.set_defaults(
        func=lambda: PlacementCommands(
            af_conf.CONF).migrate_compute_inventory())


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
