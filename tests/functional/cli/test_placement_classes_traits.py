"""``alloc resource class ...`` and ``alloc trait ...`` end to end."""

from tests.functional.cli import base


class TestResourceClassCommands(base.PlacementCLITestCase):

    def test_lifecycle(self):
        names = [r['name'] for r in self.alloc('resource', 'class', 'list')]
        self.assertIn('VCPU', names)
        self.assertNotIn('CUSTOM_GOLD', names)

        self.alloc('resource', 'class', 'create', 'CUSTOM_GOLD', fmt=None)
        self.assertEqual({'name': 'CUSTOM_GOLD'},
                         self.alloc('resource', 'class', 'show',
                                    'CUSTOM_GOLD'))
        # Set is create-or-check: succeeds on an existing class too.
        self.alloc('resource', 'class', 'set', 'CUSTOM_GOLD', fmt=None)
        self.alloc('resource', 'class', 'set', 'CUSTOM_SILVER', fmt=None)
        names = [r['name'] for r in self.alloc('resource', 'class', 'list')]
        self.assertIn('CUSTOM_GOLD', names)
        self.assertIn('CUSTOM_SILVER', names)

        self.alloc('resource', 'class', 'delete', 'CUSTOM_GOLD', fmt=None)
        err = self.alloc_fails('resource', 'class', 'show', 'CUSTOM_GOLD')
        self.assertIn('(HTTP 404)', err)
        self.assertIn('CUSTOM_GOLD', err)

    def test_errors_carry_server_message(self):
        err = self.alloc_fails('resource', 'class', 'create', 'GOLD')
        self.assertIn('(HTTP 400)', err)
        err = self.alloc_fails('resource', 'class', 'delete', 'VCPU')
        self.assertIn('(HTTP 400)', err)
        self.alloc('resource', 'class', 'create', 'CUSTOM_A', fmt=None)
        err = self.alloc_fails('resource', 'class', 'create', 'CUSTOM_A')
        self.assertIn('(HTTP 409)', err)
        self.assertIn('(code: placement.', err)

    def test_set_needs_1_7(self):
        err = self.alloc_fails('--os-placement-api-version', '1.6',
                               'resource', 'class', 'set', 'CUSTOM_B')
        self.assertIn('requires --os-placement-api-version 1.7', err)


class TestTraitCommands(base.PlacementCLITestCase):

    def test_lifecycle(self):
        self.alloc('trait', 'create', 'CUSTOM_FAST', fmt=None)
        self.assertEqual({'name': 'CUSTOM_FAST'},
                         self.alloc('trait', 'show', 'CUSTOM_FAST'))
        listed = self.alloc('trait', 'list', '--name', 'startswith:CUSTOM_')
        self.assertEqual([{'name': 'CUSTOM_FAST'}], listed)
        standard = self.alloc('trait', 'list', '--name',
                              'in:HW_CPU_X86_AVX,CUSTOM_FAST')
        self.assertEqual([{'name': 'CUSTOM_FAST'},
                          {'name': 'HW_CPU_X86_AVX'}], standard)
        self.assertEqual([], self.alloc('trait', 'list', '--associated'))

        self.alloc('trait', 'delete', 'CUSTOM_FAST', fmt=None)
        err = self.alloc_fails('trait', 'show', 'CUSTOM_FAST')
        self.assertIn('(HTTP 404)', err)

    def test_bad_names(self):
        err = self.alloc_fails('trait', 'create', 'FAST')
        self.assertIn('(HTTP 400)', err)
        err = self.alloc_fails('trait', 'delete', 'HW_CPU_X86_AVX')
        self.assertIn('(HTTP 400)', err)
