"""The modules of alloc_framework import one another without cycles.

The graph is read from the source, not from ``sys.modules``: every
``import`` and ``from ... import`` of a module counts, also those inside
functions (a cycle dodged by a function-level import is still a cycle).
An edge goes to the module named, to the submodule when ``from pkg
import name`` names one, and relative imports are resolved against the
importing module's package.
"""

import ast
import os

import fixtures
import testtools

import alloc_framework

PACKAGE_DIR = os.path.dirname(os.path.abspath(alloc_framework.__file__))


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


class ImportGraphTestCase(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.graph = build_graph(PACKAGE_DIR, 'alloc_framework')

    def test_no_cycle(self):
        cycle = find_cycle(self.graph)
        self.assertIsNone(
            cycle, 'import cycle: %s' % ' -> '.join(cycle or []))

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
