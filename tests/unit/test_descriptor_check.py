"""The base test case fails a test that leaves descriptors open."""

import os
import unittest

import testtools

from tests import base


class DescriptorCheckTestCase(testtools.TestCase):

    def _run(self, leak):
        opened = []
        self.addCleanup(lambda: [os.close(fd) for fd in opened])

        class Inner(base.TestCase):
            def test_it(inner):
                opened.extend(os.open(os.devnull, os.O_RDONLY)
                              for _ in range(leak))

        result = unittest.TestResult()
        Inner('test_it').run(result)
        return result

    def test_a_leaking_test_fails_naming_the_count(self):
        result = self._run(base.MAX_DESCRIPTORS + 10)
        self.assertEqual(1, len(result.failures), result.errors)
        self.assertIn('file descriptors after this test',
                      result.failures[0][1])

    def test_a_few_descriptors_are_fine(self):
        result = self._run(3)
        self.assertTrue(result.wasSuccessful(),
                        result.failures + result.errors)
