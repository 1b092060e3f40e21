"""The ``openstack`` command of python-openstackclient, in the test process.

The executable spends seconds per command starting Python and loading
every installed client plugin before it sends a request. The tests call
its entry point, ``openstackclient.shell.main``, instead: the plugins
(osc-placement, python-ironicclient) load once per test process, and
each command still parses its arguments, builds its clients and talks to
the real server over HTTP as the executable does.

Each command starts as clean as a new process would: without the
clients an earlier command made, without ``OS_*`` variables from the
environment, and it leaves the process's logging and warning filters as
it found them.
"""

import collections
import contextlib
import io
import logging
import os
import warnings

import fixtures
from openstackclient import shell
from osc_lib import clientmanager

# The shape of subprocess.run()'s result.
Result = collections.namedtuple('Result', 'returncode stdout stderr')


class OpenStackClient(fixtures.Fixture):
    """Runs ``openstack <options> <args>``; ``run(*args)`` gives a Result.

    ``options`` are the global options of every command, for example
    ``--os-auth-type none --os-endpoint <url>``.
    """

    def __init__(self, *options):
        super().__init__()
        self.options = list(options)

    def _setUp(self):
        for name in list(os.environ):
            if name.startswith('OS_'):
                self.useFixture(fixtures.EnvironmentVariable(name))

    def run(self, *args):
        """Run one command: its exit code and what it wrote."""
        _forget_clients()
        out, err = io.StringIO(), io.StringIO()
        with _logging_restored(), warnings.catch_warnings(), \
                contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(err):
            try:
                code = shell.main(self.options + list(args))
            except SystemExit as exc:  # argparse rejects the arguments
                code = exc.code
        return Result(code, out.getvalue(), err.getvalue())


def _forget_clients():
    """Drop the clients of earlier commands.

    osc-lib caches the client of each plugin in a descriptor of the
    ClientManager class, not of the instance: in one process, every
    command would otherwise reuse the first command's endpoint and
    microversion.
    """
    for attribute in vars(clientmanager.ClientManager).values():
        if isinstance(attribute, clientmanager.ClientCache):
            attribute._handle = None


@contextlib.contextmanager
def _logging_restored():
    """Undo the command's logging set-up (root handlers, levels)."""
    root = logging.getLogger()
    handlers = list(root.handlers)
    levels = {name: logger.level for name, logger
              in logging.Logger.manager.loggerDict.items()
              if isinstance(logger, logging.Logger)}
    root_level = root.level
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(root_level)
        for name, logger in list(logging.Logger.manager.loggerDict.items()):
            level = levels.get(name, logging.NOTSET)
            if isinstance(logger, logging.Logger) and logger.level != level:
                logger.setLevel(level)
