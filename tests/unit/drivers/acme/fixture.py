"""Installing the ``acme`` plugin package for the time of a test.

The package is made visible as an installed distribution (a
``.dist-info`` directory with its entry points, on ``sys.path``), which
is how ``pip install`` makes a plugin known to the service.
"""

import os
import sys

import fixtures

ENTRY_POINTS = {
    'alloc_framework.hardware.opts': {
        'acme': 'tests.unit.drivers.acme:list_opts'},
    'alloc_framework.hardware.types': {
        'acme-hardware': 'tests.unit.drivers.acme:AcmeHardware'},
    'alloc_framework.hardware.interfaces.power': {
        'acme': 'tests.unit.drivers.acme:AcmePower'},
}


class Installed(fixtures.Fixture):
    """The ``acme`` plugin distribution, with ``entry_points`` to use
    instead of ``ENTRY_POINTS``."""

    def __init__(self, entry_points=None):
        super().__init__()
        self.entry_points = entry_points or ENTRY_POINTS

    def _setUp(self):
        path = self.useFixture(fixtures.TempDir()).path
        info = os.path.join(path, 'acme_alloc_plugin-1.0.dist-info')
        os.mkdir(info)
        with open(os.path.join(info, 'METADATA'), 'w') as f:
            f.write('Metadata-Version: 2.1\nName: acme-alloc-plugin\n'
                    'Version: 1.0\n')
        with open(os.path.join(info, 'entry_points.txt'), 'w') as f:
            for group, entries in self.entry_points.items():
                f.write('[%s]\n' % group)
                for name, target in entries.items():
                    f.write('%s = %s\n' % (name, target))
        self.useFixture(fixtures.MonkeyPatch('sys.path', [path] + sys.path))
        # stevedore caches what it found per namespace for the process.
        self.useFixture(fixtures.MonkeyPatch(
            'stevedore.extension.ExtensionManager.ENTRY_POINT_CACHE', {}))
        self.path = path
