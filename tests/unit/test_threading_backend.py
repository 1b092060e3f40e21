"""The project runs on native threads: oslo.service's threading backend."""

import os
import re
import sys

from oslo_service import backend

import alloc_framework
from tests import base


class TestThreadingBackend(base.TestCase):

    def test_threading_backend_selected_on_import(self):
        self.assertEqual(backend.BackendType.THREADING,
                         backend.get_backend_type())

    def test_eventlet_cannot_be_imported(self):
        # Libraries that probe for eventlet (futurist) must find it absent.
        self.assertIsNone(sys.modules.get('eventlet'))
        self.assertRaises(ImportError, __import__, 'eventlet')

    def test_no_module_uses_eventlet(self):
        pattern = re.compile(r'^\s*(import|from)\s+eventlet|monkey_patch',
                             re.MULTILINE)
        root = os.path.dirname(alloc_framework.__file__)
        offenders = []
        for dirpath, _dirs, files in os.walk(root):
            for name in files:
                if name.endswith('.py'):
                    path = os.path.join(dirpath, name)
                    with open(path, encoding='utf-8') as f:
                        if pattern.search(f.read()):
                            offenders.append(path)
        self.assertEqual([], offenders)
