"""The modules of alloc_framework import one another without cycles, and
only downwards through the floors of :data:`FLOORS`.

The graph is read from the source, not from ``sys.modules``: every
``import`` and ``from ... import`` of a module counts, also those inside
functions (a cycle dodged by a function-level import is still a cycle).
An edge goes to the module named, to the submodule when ``from pkg
import name`` names one, and relative imports are resolved against the
importing module's package.

The floors, top down, are the one table of the direction rule
(:data:`FLOORS`, described in ``doc/source/contributor.rst``): a module
imports from its own floor and the floors below, never from one above.
The command-line client talks HTTP only (:data:`CLI_MAY_IMPORT`), and no
server module imports it. The Placement client library
(``placement_client/``) sits on the CLI's floor, just above the ground:
like the CLI it imports only ``common/`` (:data:`ONLY_IMPORT`), so that
any Placement user can load it without the server, but the server may
import it.
"""

import ast
import os

import fixtures
import testtools

import alloc_framework

PACKAGE_DIR = os.path.dirname(os.path.abspath(alloc_framework.__file__))

# The floors of the package, top down: the first folder under the package
# of every module. A module may import from its own floor and from the
# floors below it. common/ and conf/ are the ground: they import nothing
# of the package but each other. periodics/ holds the periodic-task
# machinery that the conductor and drivers declare and run their tasks
# with, so it sits under drivers/; it may use objects/ and below.
# placement_client/ is the library any Placement user can call (the
# provider tree, the report client): it stands on the floor the CLI
# would have, right above the ground, and :data:`ONLY_IMPORT` narrows
# it further to common/, as the CLI is.
FLOORS = (
    ('cmd', 'wsgi'),
    ('api',),
    ('conductor',),
    ('drivers',),
    ('periodics',),
    ('objects',),
    ('db',),
    ('placement_client',),
    ('common', 'conf'),
)
# Modules of the package root that any module may import: the package
# itself and its version.
LEAVES = ('', 'version')
# The command-line client is a side of its own: an HTTP client that must
# not load the server. Besides itself it imports only these.
CLI = 'cli'
CLI_MAY_IMPORT = ('common',)
# Folders of a floor that import fewer floors than their rank allows:
# besides themselves, only these (the package's leaves always).
ONLY_IMPORT = {
    'placement_client': CLI_MAY_IMPORT,
}


def module_files(package_dir, package_name):
    """``{dotted module name: file path}`` of every module under a dir."""
    modules = {}
    for dirpath, dirnames, filenames in os.walk(package_dir):
        dirnames.sort()
        rel = os.path.relpath(dirpath, package_dir)
        parts = [package_name] + ([] if rel == '.' else rel.split(os.sep))
        for filename in sorted(filenames):
            if not filename.endswith('.py'):
                continue
            if filename == '__init__.py':
                name = '.'.join(parts)
            else:
                name = '.'.join(parts + [filename[:-3]])
            modules[name] = os.path.join(dirpath, filename)
    return modules


def _base_package(module, is_package, level):
    """The package a relative import of ``level`` dots starts from."""
    parts = module.split('.')
    if not is_package:
        parts = parts[:-1]
    if level > 1:
        parts = parts[:len(parts) - (level - 1)]
    return '.'.join(parts)


def imports_of(module, path, known):
    """The modules of ``known`` that ``module`` (at ``path``) imports."""
    with open(path, encoding='utf-8') as f:
        tree = ast.parse(f.read(), filename=path)
    is_package = os.path.basename(path) == '__init__.py'
    targets = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                targets.add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = _base_package(module, is_package, node.level)
                source = '.'.join(p for p in (base, node.module) if p)
            else:
                source = node.module
            for alias in node.names:
                submodule = '%s.%s' % (source, alias.name)
                targets.add(submodule if submodule in known else source)
    return {t for t in targets if t in known and t != module}


def build_graph(package_dir, package_name):
    """``{module: set of the package's modules it imports}``."""
    files = module_files(package_dir, package_name)
    return {name: imports_of(name, path, files)
            for name, path in files.items()}


def find_cycle(graph):
    """One import cycle as a path ``[a, b, ..., a]``, or None."""
    done = set()
    for start in sorted(graph):
        if start in done:
            continue
        # Iterative depth-first search; ``path`` is the current chain.
        path = [start]
        on_path = {start}
        stack = [iter(sorted(graph.get(start, ())))]
        while stack:
            for target in stack[-1]:
                if target in on_path:
                    return path[path.index(target):] + [target]
                if target not in done:
                    path.append(target)
                    on_path.add(target)
                    stack.append(iter(sorted(graph.get(target, ()))))
                    break
            else:
                stack.pop()
                finished = path.pop()
                on_path.discard(finished)
                done.add(finished)
    return None


def _folder(module, package_name):
    """The first folder of ``module`` under the package ('' for the root,
    the module's name for a module of the root such as ``version``)."""
    parts = module.split('.')
    return parts[1] if parts[0] == package_name and len(parts) > 1 else ''


def wrong_arrows(graph, package_name, floors=FLOORS):
    """The imports that break the direction rule, as sorted strings.

    Each is ``'importer -> imported (why)'``: an import from a higher
    floor, by or of the command-line client beyond what it may import,
    by a folder of :data:`ONLY_IMPORT` beyond its list, or by or of a
    folder that is in no floor (a new folder must be given its floor in
    :data:`FLOORS`).
    """
    rank = {folder: level for level, names in enumerate(floors)
            for folder in names}
    wrong = []
    for importer in sorted(graph):
        source = _folder(importer, package_name)
        for imported in sorted(graph[importer]):
            target = _folder(imported, package_name)
            if target in LEAVES or source == target:
                continue
            if source == CLI or target == CLI:
                if source == CLI and target in CLI_MAY_IMPORT:
                    continue
                why = 'the CLI talks HTTP only'
            elif source in LEAVES:
                # The package root and version.py are leaves.
                why = '%s is a leaf' % (source or 'the package root')
            elif source not in rank or target not in rank:
                why = '%s is in no floor' % (
                    source if source not in rank else target)
            elif rank[target] < rank[source]:
                why = '%s/ is above %s/' % (target, source)
            elif (source in ONLY_IMPORT
                    and target not in ONLY_IMPORT[source]):
                why = '%s/ imports only %s' % (
                    source, ', '.join('%s/' % f for f in ONLY_IMPORT[source]))
            else:
                continue
            wrong.append('%s -> %s (%s)' % (importer, imported, why))
    return wrong


class ImportGraphTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.graph = build_graph(PACKAGE_DIR, 'alloc_framework')

    def test_no_cycle(self):
        cycle = find_cycle(self.graph)
        self.assertIsNone(
            cycle, 'import cycle: %s' % ' -> '.join(cycle or []))

    def test_imports_go_down_the_floors(self):
        wrong = wrong_arrows(self.graph, 'alloc_framework')
        self.assertEqual([], wrong, 'imports against the floors:\n%s'
                         % '\n'.join(wrong))

    def test_every_folder_has_a_floor(self):
        folders = {_folder(m, 'alloc_framework') for m in self.graph}
        placed = {f for names in FLOORS for f in names}
        self.assertEqual(set(), folders - placed - set(LEAVES) - {CLI})

    def test_known_edges(self):
        placement = 'alloc_framework.api.placement'
        # from alloc_framework.api.placement import response
        self.assertIn('%s.response' % placement,
                      self.graph['%s.microversion_middleware' % placement])
        # from alloc_framework.api.placement.handlers import helpers
        self.assertIn('%s.handlers.helpers' % placement,
                      self.graph['%s.handlers.inventory' % placement])
        # microversion.py imports nothing of the package.
        self.assertEqual(set(), self.graph['%s.microversion' % placement])


class FinderTestCase(testtools.TestCase):
    """The walker and the finder on synthetic packages."""

    def _package(self, files):
        root = self.useFixture(fixtures.TempDir()).path
        for name, source in files.items():
            path = os.path.join(root, *name.split('/'))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, 'w', encoding='utf-8') as f:
                f.write(source)
        return build_graph(root, 'pkg')

    def test_synthetic_cycle_is_found(self):
        graph = self._package({
            '__init__.py': '',
            'a.py': 'from pkg import b\n',
            'b.py': 'import pkg.sub.c\n',
            'sub/__init__.py': '',
            # Relative, and inside a function: still an edge.
            'sub/c.py': 'def f():\n    from .. import a\n',
            'd.py': 'from pkg.a import something\n',
        })
        self.assertEqual({'pkg.b'}, graph['pkg.a'])
        self.assertEqual({'pkg.sub.c'}, graph['pkg.b'])
        self.assertEqual({'pkg.a'}, graph['pkg.sub.c'])
        self.assertEqual({'pkg.a'}, graph['pkg.d'])
        self.assertEqual(['pkg.a', 'pkg.b', 'pkg.sub.c', 'pkg.a'],
                         find_cycle(graph))

    def test_no_cycle_in_a_tree(self):
        graph = self._package({
            '__init__.py': '',
            'a.py': 'from . import b\nfrom .sub import c\n',
            'b.py': 'from pkg.sub import c\n',
            'sub/__init__.py': '',
            'sub/c.py': 'import os\n',
        })
        self.assertEqual({'pkg.b', 'pkg.sub.c'}, graph['pkg.a'])
        self.assertIsNone(find_cycle(graph))

    def test_two_module_cycle(self):
        self.assertEqual(['x', 'y', 'x'],
                         find_cycle({'x': {'y'}, 'y': {'x'}}))


class FloorsTestCase(testtools.TestCase):
    """The direction rule on synthetic graphs."""

    def test_wrong_arrows_are_named(self):
        graph = {
            'pkg': set(),
            'pkg.version': set(),
            'pkg.cmd.run': {'pkg.api.app', 'pkg.common.exc', 'pkg.version'},
            'pkg.api.app': {'pkg.objects.node', 'pkg.conf.opts'},
            'pkg.objects.node': {'pkg.db.api', 'pkg.common.exc'},
            'pkg.db.api': {'pkg.conf.opts'},
            'pkg.conf.opts': {'pkg.common.exc'},
            # Wrong: the ground imports an upper floor.
            'pkg.common.exc': {'pkg.objects.node'},
            # Wrong: drivers/ builds the API.
            'pkg.drivers.backend': {'pkg.api.app', 'pkg.periodics'},
            'pkg.periodics': {'pkg.objects.node'},
            # Wrong: the CLI loads the object model; common/ is allowed.
            'pkg.cli.shell': {'pkg.objects.node', 'pkg.common.exc',
                              'pkg.version'},
        }
        self.assertEqual([
            'pkg.cli.shell -> pkg.objects.node (the CLI talks HTTP only)',
            'pkg.common.exc -> pkg.objects.node (objects/ is above common/)',
            'pkg.drivers.backend -> pkg.api.app (api/ is above drivers/)',
        ], wrong_arrows(graph, 'pkg'))

    def test_server_importing_the_cli_is_wrong(self):
        graph = {'pkg.cmd.run': {'pkg.cli.shell'}, 'pkg.cli.shell': set()}
        self.assertEqual(
            ['pkg.cmd.run -> pkg.cli.shell (the CLI talks HTTP only)'],
            wrong_arrows(graph, 'pkg'))

    def test_placement_client_imports_only_common(self):
        graph = {
            'pkg.placement_client.tree': {'pkg.common.exc', 'pkg.conf.opts',
                                          'pkg.objects.node', 'pkg.version'},
            # The server may use the library.
            'pkg.conductor.sync': {'pkg.placement_client.tree'},
            'pkg.common.exc': set(),
            'pkg.conf.opts': set(),
            'pkg.objects.node': set(),
        }
        self.assertEqual([
            'pkg.placement_client.tree -> pkg.conf.opts '
            '(placement_client/ imports only common/)',
            'pkg.placement_client.tree -> pkg.objects.node '
            '(objects/ is above placement_client/)',
        ], wrong_arrows(graph, 'pkg'))

    def test_a_folder_in_no_floor_is_wrong(self):
        graph = {'pkg.extra.x': {'pkg.common.exc'}, 'pkg.common.exc': set()}
        self.assertEqual(
            ['pkg.extra.x -> pkg.common.exc (extra is in no floor)'],
            wrong_arrows(graph, 'pkg'))

    def test_wrong_arrow_found_in_source(self):
        # From source to verdict: a function-level import counts too.
        root = self.useFixture(fixtures.TempDir()).path
        for name, source in {
                '__init__.py': '',
                'conf/__init__.py': '',
                'conf/hardware.py': 'def opts():\n'
                                    '    from pkg.drivers import base\n',
                'drivers/__init__.py': '',
                'drivers/base.py': 'from pkg.conf import hardware\n',
        }.items():
            path = os.path.join(root, *name.split('/'))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, 'w', encoding='utf-8') as f:
                f.write(source)
        self.assertEqual(
            ['pkg.conf.hardware -> pkg.drivers.base '
             '(drivers/ is above conf/)'],
            wrong_arrows(build_graph(root, 'pkg'), 'pkg'))
