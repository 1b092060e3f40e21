"""The deprecated aliases of moved modules (``common/moved.py``)."""

import importlib
import sys
import types
import warnings

import testtools

from alloc_framework.common import exception
from alloc_framework.common import loader
from alloc_framework.common import moved
from alloc_framework.common import states

# Old path -> new home, for one release.
ALIASES = {
    'alloc_framework.objects.baremetal.exception': exception,
    'alloc_framework.objects.baremetal.states': states,
    'alloc_framework.drivers.loader': loader,
}


class AliasTestCase(testtools.TestCase):

    def _import_fresh(self, name):
        # The warning is emitted when the alias is first imported.
        saved = sys.modules.pop(name, None)
        if saved is not None:
            self.addCleanup(sys.modules.__setitem__, name, saved)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            module = importlib.import_module(name)
        return module, caught

    def test_old_paths_warn_and_forward(self):
        for name, new in ALIASES.items():
            module, caught = self._import_fresh(name)
            deprecations = [w for w in caught
                            if issubclass(w.category, DeprecationWarning)
                            and name in str(w.message)]
            self.assertEqual(1, len(deprecations), name)
            self.assertIn(new.__name__, str(deprecations[0].message))
            # The same objects: except old.X catches what new raises.
            for attr in [a for a in dir(new) if not a.startswith('__')]:
                self.assertIs(getattr(new, attr), getattr(module, attr))

    def test_from_import_of_a_moved_class(self):
        self._import_fresh('alloc_framework.objects.baremetal.exception')
        from alloc_framework.objects.baremetal.exception import NodeLocked
        self.assertIs(exception.NodeLocked, NodeLocked)

    def test_alias_helper(self):
        new = types.ModuleType('new_home')
        new.thing = object()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            getattr_, dir_ = moved.alias('old_home', new)
        self.assertEqual([DeprecationWarning],
                         [w.category for w in caught])
        self.assertIn('new_home', str(caught[0].message))
        self.assertIs(new.thing, getattr_('thing'))
        self.assertRaises(AttributeError, getattr_, 'missing')
        self.assertIn('thing', dir_())
