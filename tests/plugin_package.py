"""Make a plugin package of the test tree importable with its entry points.

``PluginPackage`` does what installing a package does for the entry point
machinery, without pip: it writes a throwaway ``<name>.dist-info``
(``METADATA`` and ``entry_points.txt``, taken from the package's own
``setup.cfg``) in a temporary directory and puts that directory and the
package's source on ``sys.path``. ``importlib.metadata`` and stevedore
then find the package's entry points like those of an installed one;
nothing in alloc_framework is patched.

stevedore remembers the entry points of each namespace for the life of
the process (a service sees a newly installed package once restarted):
the fixture forgets them when it starts and when it ends, as a new
process would.
"""

import configparser
import os
import sys

import fixtures
from stevedore import extension

PLUGINS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                           'plugins')


class PluginPackage(fixtures.Fixture):
    """The plugin package ``tests/plugins/<directory>``, importable.

    :param directory: the package's directory under ``tests/plugins``.
    """

    def __init__(self, directory):
        super().__init__()
        self.source = os.path.join(PLUGINS_DIR, directory)

    def _setUp(self):
        cfg = configparser.ConfigParser(interpolation=None)
        cfg.read(os.path.join(self.source, 'setup.cfg'), encoding='utf-8')
        name = cfg['metadata']['name']
        version = cfg['metadata']['version']
        packages = cfg['options']['packages'].split()
        site = self.useFixture(fixtures.TempDir()).path
        dist_info = os.path.join(
            site, '%s-%s.dist-info' % (name.replace('-', '_'), version))
        os.mkdir(dist_info)
        with open(os.path.join(dist_info, 'METADATA'), 'w',
                  encoding='utf-8') as stream:
            stream.write('Metadata-Version: 2.1\nName: %s\nVersion: %s\n'
                         % (name, version))
        entry_points = configparser.ConfigParser(interpolation=None)
        entry_points.optionxform = str
        for group, text in cfg['options.entry_points'].items():
            entry_points[group] = dict(
                (part.strip() for part in line.split('=', 1))
                for line in text.splitlines() if line.strip())
        with open(os.path.join(dist_info, 'entry_points.txt'), 'w',
                  encoding='utf-8') as stream:
            entry_points.write(stream)
        self.addCleanup(self._forget_modules, packages)
        self.addCleanup(extension.ExtensionManager.ENTRY_POINT_CACHE.clear)
        self.useFixture(fixtures.PythonPathEntry(site))
        self.useFixture(fixtures.PythonPathEntry(self.source))
        extension.ExtensionManager.ENTRY_POINT_CACHE.clear()

    @staticmethod
    def _forget_modules(packages):
        for module in list(sys.modules):
            if module.split('.')[0] in packages:
                del sys.modules[module]
