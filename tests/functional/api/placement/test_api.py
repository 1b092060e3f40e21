"""Load every gabbi YAML file of ``gabbits/`` as a test suite.

Each file runs against an in-process application (wsgi-intercept, no
network) built over a fresh database; see ``fixtures.py``.
"""

import os

from gabbi import driver

from tests.functional.api.placement import fixtures

TESTS_DIR = 'gabbits'


def load_tests(loader, tests, pattern):
    test_dir = os.path.join(os.path.dirname(__file__), TESTS_DIR)
    return driver.build_tests(test_dir, loader, host=None,
                              test_loader_name=__name__,
                              intercept=fixtures.setup_app,
                              fixture_module=fixtures)
