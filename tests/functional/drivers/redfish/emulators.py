"""Redfish BMCs for tests, each its own process on its own loopback port.

* :class:`SushyEmulator`: sushy-tools' ``sushy-emulator --fake`` (one fake
  system, HTTP basic authentication, power changes applied after a random
  delay of up to ~11 s, as real BMCs do).
* :class:`FirmwareBMC`: :mod:`.firmware_bmc`, a BMC that updates firmware
  and boots ISOs from virtual media with one-time boot overrides.
* :class:`SilentBMC`: a socket that accepts connections and never answers.

Each fixture waits until its BMC answers and kills the process at
clean-up. ``address`` is the ``redfish_address`` of its nodes.
"""

import os
import socket
import subprocess
import sys

import bcrypt
import fixtures
import requests

from tests import base

USERNAME = 'admin'
PASSWORD = 'Redfish-secret-0'
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__))))))


class _Process(fixtures.Fixture):
    """A BMC process on a free port; ``argv(port, workdir)`` builds it."""

    def argv(self, port, workdir):
        raise NotImplementedError

    # Ports tried: a free port can be taken by another test's server
    # between free_port() and the BMC's bind.
    _PORT_ATTEMPTS = 3

    def _setUp(self):
        self.workdir = self.useFixture(fixtures.TempDir()).path
        self.log_path = os.path.join(self.workdir, 'bmc.log')
        for attempt in range(self._PORT_ATTEMPTS):
            self.port = base.free_port()
            self.address = 'http://127.0.0.1:%d' % self.port
            log = open(self.log_path, 'wb')
            self.addCleanup(log.close)
            self.process = subprocess.Popen(
                self.argv(self.port, self.workdir), stdout=log,
                stderr=subprocess.STDOUT, cwd=ROOT)
            self.addCleanup(self._stop, self.process)
            try:
                base.wait_for(self._ready,
                              'the Redfish BMC on port %d' % self.port,
                              timeout=60, interval=0.1)
                return
            except AssertionError as exc:
                if (attempt == self._PORT_ATTEMPTS - 1
                        or 'Address already in use' not in str(exc)):
                    raise

    def _ready(self):
        if self.process.poll() is not None:
            with open(self.log_path) as f:
                raise AssertionError('The BMC process exited (%s): %s'
                                     % (self.process.returncode, f.read()))
        try:
            return requests.get(self.address + '/redfish/v1/',
                                timeout=2).status_code == 200
        except requests.ConnectionError:
            return False

    @staticmethod
    def _stop(process):
        process.kill()
        process.wait(timeout=30)

    def driver_info(self, **extra):
        info = {'redfish_address': self.address,
                'redfish_username': USERNAME,
                'redfish_password': PASSWORD}
        info.update(extra)
        return info


class SushyEmulator(_Process):
    """``sushy-emulator --fake`` with basic authentication."""

    def argv(self, port, workdir):
        htpasswd = os.path.join(workdir, 'htpasswd')
        with open(htpasswd, 'w') as f:
            f.write('%s:%s\n' % (USERNAME, bcrypt.hashpw(
                PASSWORD.encode(), bcrypt.gensalt(4)).decode()))
        config = os.path.join(workdir, 'emulator.conf')
        with open(config, 'w') as f:
            # Its own state directory: the fake systems are otherwise
            # shared by every emulator of the machine.
            f.write('SUSHY_EMULATOR_LISTEN_IP = %r\n'
                    'SUSHY_EMULATOR_STATE_DIR = %r\n'
                    'SUSHY_EMULATOR_AUTH_FILE = %r\n'
                    % ('127.0.0.1', os.path.join(workdir, 'state'),
                       htpasswd))
        return [sys.executable, '-m', 'sushy_tools.emulator.main', '--fake',
                '--config', config, '--port', str(port)]

    def system_path(self):
        """The path of the emulator's one system."""
        got = requests.get(self.address + '/redfish/v1/Systems',
                           auth=(USERNAME, PASSWORD), timeout=10).json()
        return got['Members'][0]['@odata.id']


class FirmwareBMC(_Process):
    """:mod:`.firmware_bmc` with the given options.

    :param processors: None (the system has no Processors collection) or
        the ``ProcessorType`` of each member, ``'GPU:Absent'`` for one
        whose ``Status.State`` is not ``Enabled``.
    :param processors_error: the Processors resources answer 500.
    :param systems: how many systems, each with its Manager and
        inventory members (``fw-system-<k>``, k from 1, when several).
    :param firmware_links: how inventory members are tied to their
        owner: ``none``, ``related`` or ``active`` (see the module).
    :param inventory_versions_only: only the inventory tells versions.
    :param empty_inventory: the FirmwareInventory lists no member.
    :param refuse_media: every virtual media insertion answers 400.
    :param cd_media: whether a virtual media device takes CDs.
    """

    def __init__(self, task_polls=2, bmc_reset=2.0, power_delay=0.0,
                 processors=None, processors_error=False, systems=1,
                 firmware_links=None, inventory_versions_only=False,
                 empty_inventory=False, refuse_media=False, cd_media=True):
        super().__init__()
        self.options = ['--task-polls', str(task_polls),
                        '--bmc-reset', str(bmc_reset),
                        '--power-delay', str(power_delay),
                        '--systems', str(systems),
                        '--username', USERNAME, '--password', PASSWORD]
        if firmware_links:
            self.options.append('--firmware-links=%s' % firmware_links)
        if inventory_versions_only:
            self.options.append('--inventory-versions-only')
        if empty_inventory:
            self.options.append('--empty-inventory')
        if refuse_media:
            self.options.append('--refuse-media')
        if not cd_media:
            self.options.append('--no-cd-media')
        if processors is not None:
            self.options.append('--processors=%s' % ','.join(processors))
        if processors_error:
            self.options.append('--processors-error')

    def argv(self, port, workdir):
        # Run as a script: importing the test packages would cost the
        # process seconds of start-up.
        return [sys.executable, os.path.join(os.path.dirname(
            os.path.abspath(__file__)), 'firmware_bmc.py'),
            '--port', str(port)] + self.options

    def counters(self):
        return requests.get(self.address + '/_emulator', timeout=10).json()


class SilentBMC(fixtures.Fixture):
    """Accepts TCP connections (the kernel does) and never answers."""

    def _setUp(self):
        self.sock = socket.socket()
        self.sock.bind(('127.0.0.1', 0))
        self.sock.listen(16)
        self.addCleanup(self.sock.close)
        self.address = 'http://127.0.0.1:%d' % self.sock.getsockname()[1]
