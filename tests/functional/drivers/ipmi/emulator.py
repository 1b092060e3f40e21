"""An IPMI 2.0 BMC on a UDP port, built on ``pyghmi.ipmi.bmc.Bmc``.

Run as a process of its own by :class:`tests.functional.drivers.ipmi.
fixture.BMC`::

    python -m tests.functional.drivers.ipmi.emulator --state-file F \
        [--user U --password P] [--silent] [--stuck-power]
        [--power-delay SECONDS]

It binds a free port on 127.0.0.1, prints ``port <n>`` and then answers
IPMI forever; after each request it writes what it holds (power, boot
device, firmware revision, HPM.1 upload) as JSON to the state file, so
tests can check the BMC side without asking it over IPMI. ``--silent``
binds the port and never answers; ``--stuck-power`` accepts power
changes and never makes them; ``--power-delay`` makes a power change
show in Get Chassis Status only that many seconds after the command, as
real BMCs do.

Besides chassis power and boot flags (virtualbmc's subset) it answers
the PICMG HPM.1 commands of a firmware upgrade of component 1: prepare
and Finish Firmware Upload and Activate Firmware are long-duration
commands (completion code 0x80 first, then Get Upgrade Status), the
self-test takes one more query, and Get Device ID reports the new
revision once it passed. A test image is ``b'HPMTEST'``, the major and
minor (BCD) revision bytes, a payload and a last byte making the sum of
all bytes 0 modulo 256; any other image fails Finish Firmware Upload's
integrity check (completion code 0x82).
"""

import argparse
import json
import os
import socket
import sys
import time

from pyghmi.ipmi import bmc as pyghmi_bmc
from pyghmi.ipmi.private import serversession

MAGIC = b'HPMTEST'
COMPONENT_MASK = 0b10  # component 1: the operational firmware

# RMCP+ open session request: auth, integrity and confidentiality
# payloads start at these offsets; the algorithm is their 5th byte.
_AUTH_ALGO, _INTEGRITY_ALGO = 12, 20
_NO_CIPHER_SUITE_MATCH = 0x11


class ServerSession(serversession.ServerSession):
    """pyghmi 1.6's server side, answering only what it can do.

    The stock server session accepts every proposal of an RMCP+ open
    session request but always computes RAKP with HMAC-SHA1 (cipher
    suite 3). pyghmi's client proposes SHA-256 (suite 17) first, takes
    the acceptance at its word and then fails on the 20-byte RAKP 2 key
    exchange code ("pack expected 32 items for packing (got 20)").
    Refusing anything but suite 3 with status 0x11 makes the client fall
    back to suite 3, as a real suite-3-only BMC would.
    """

    def create_open_session_response(self, request):
        request = bytearray(request)
        if (len(request) >= 32 and (request[_AUTH_ALGO] != 1
                                    or request[_INTEGRITY_ALGO] != 1)):
            self.clientsessionid = request[4:8]
            self.managedsessionid = bytearray(4)
            return (bytearray([request[0], _NO_CIPHER_SUITE_MATCH, 0, 0])
                    + self.clientsessionid)
        return super().create_open_session_response(request)


# The stock IpmiServer creates serversession.ServerSession by name.
serversession.ServerSession = ServerSession


def checksum_ok(image):
    return image.startswith(MAGIC) and len(image) > 9 and sum(image) % 256 == 0


def make_image(major, minor, payload=b''):
    """A test image that this BMC accepts (revision ``major.minor``)."""
    body = MAGIC + bytes([major, minor]) + payload
    return body + bytes([(-sum(body)) % 256])


class EmulatedBMC(pyghmi_bmc.Bmc):

    def __init__(self, authdata, state_file, stuck_power=False,
                 power_delay=0.0, **kwargs):
        super().__init__(authdata, **kwargs)
        self.stuck_power = stuck_power
        self.power_delay = power_delay
        # (state, monotonic time it shows) of a change not shown yet.
        self.pending_power = None
        # Sessions are filed under the port: make it the one bound.
        self.port = self.serversocket.getsockname()[1]
        self.state_file = state_file
        self.power = 'off'
        self.bootdev = 'default'
        self.persistent = False
        self.firmwaremajor, self.firmwareminor = 1, 0x00
        self.uploading = False
        self.image = bytearray()
        self.next_block = 0
        self.uploaded = None  # a complete image, checked
        self.pending = None  # [command, polls before done, final code]
        self.selftest_polls = 0
        self.activated = None
        self.counts = {}
        self.save()

    # --- chassis (what virtualbmc implements) -----------------------------

    def get_power_state(self):
        if (self.pending_power is not None
                and time.monotonic() >= self.pending_power[1]):
            self.power, self.pending_power = self.pending_power[0], None
        return self.power

    def _request_power(self, state):
        if self.stuck_power:
            return
        if self.power_delay <= 0:
            self.power, self.pending_power = state, None
        else:
            self.pending_power = (state,
                                  time.monotonic() + self.power_delay)

    def power_on(self):
        self._request_power('on')

    def power_off(self):
        self._request_power('off')

    def power_shutdown(self):
        self.power = 'off'

    def power_reset(self):
        pass

    def power_cycle(self):
        self.power = 'on'

    def get_boot_device(self):
        return self.bootdev

    def set_boot_device(self, bootdevice):
        self.bootdev = bootdevice

    def get_system_boot_options(self, request, session):
        if request['data'][0] != 5:
            return session.send_ipmi_response(code=0x80)
        if self.bootdev == 'default':
            flags, device = 0, 0
        else:
            flags = 0x80 | (0x40 if self.persistent else 0)
            device = pyghmi_bmc.ipmicommand.boot_devices[self.bootdev]
        session.send_ipmi_response(data=[1, 5, flags, device, 0, 0, 0])

    def set_system_boot_options(self, request, session):
        data = request['data']
        if data[0] == 5:
            self.persistent = bool(data[1] & 0x40)
        return super().set_system_boot_options(request, session)

    # --- PICMG HPM.1 ------------------------------------------------------

    def _answer(self, session, data=(), code=0):
        session.send_ipmi_response(data=[0x00] + list(data), code=code)

    def _long(self, session, command, polls, code):
        self.pending = [command, polls, code]
        session.send_ipmi_response(code=0x80)

    def hpm(self, request, session):
        command, data = request['command'], bytearray(request['data'])
        self.counts[hex(command)] = self.counts.get(hex(command), 0) + 1
        if not data or data[0] != 0x00:
            return session.send_ipmi_response(code=0xcc)
        if command == 0x2e:  # Get Target Upgrade Capabilities
            return self._answer(session, [0x00, 0x00, 1, 1, 1, 1,
                                          COMPONENT_MASK])
        if command == 0x30:  # Abort Firmware Upgrade
            self.uploading, self.uploaded, self.pending = False, None, None
            return self._answer(session)
        if command == 0x31:  # Initiate Upgrade Action
            mask, action = data[1], data[2]
            if mask & ~COMPONENT_MASK or not mask:
                return session.send_ipmi_response(code=0x81)
            if action == 0x01:  # prepare
                return self._long(session, command, 1, 0)
            if action == 0x02:  # upload for upgrade
                self.uploading, self.image, self.next_block = (
                    True, bytearray(), 0)
                self.uploaded = None
                return self._answer(session)
            return session.send_ipmi_response(code=0xcc)
        if command == 0x32:  # Upload Firmware Block
            if not self.uploading or data[1] != self.next_block:
                return session.send_ipmi_response(code=0xd5)
            self.image += data[2:]
            self.next_block = (self.next_block + 1) % 256
            return self._answer(session)
        if command == 0x33:  # Finish Firmware Upload
            size = int.from_bytes(bytes(data[2:6]), 'little')
            self.uploading = False
            if size != len(self.image):
                return session.send_ipmi_response(code=0x81)
            good = checksum_ok(bytes(self.image))
            self.uploaded = bytes(self.image) if good else None
            return self._long(session, command, 1, 0 if good else 0x82)
        if command == 0x34:  # Get Upgrade Status
            if self.pending is None:
                return self._answer(session, [0x00, 0x00])
            if self.pending[1] > 0:
                self.pending[1] -= 1
                return self._answer(session, [self.pending[0], 0x80])
            command, _, code = self.pending
            self.pending = None
            return self._answer(session, [command, code])
        if command == 0x35:  # Activate Firmware
            if self.uploaded is None:
                return session.send_ipmi_response(code=0xd5)
            self.activated, self.uploaded = self.uploaded, None
            self.selftest_polls = 1
            return self._long(session, command, 0, 0)
        if command == 0x36:  # Query Self-test Results
            if self.selftest_polls:
                self.selftest_polls -= 1
                return session.send_ipmi_response(code=0x80)
            if self.activated is not None:
                self.firmwaremajor = self.activated[len(MAGIC)]
                self.firmwareminor = self.activated[len(MAGIC) + 1]
                self.activated = None
            return self._answer(session, [0x55, 0x00])
        session.send_ipmi_response(code=0xc1)

    def handle_raw_request(self, request, session):
        if request['netfn'] == 0x2c:
            try:
                self.hpm(request, session)
            finally:
                self.save()
            return
        super().handle_raw_request(request, session)
        self.save()

    def save(self):
        state = {'power': self.get_power_state(),
                 'pending_power': (self.pending_power or [None])[0],
                 'boot_device': self.bootdev,
                 'persistent': self.persistent,
                 'firmware': '%d.%02x' % (self.firmwaremajor,
                                          self.firmwareminor),
                 'received': len(self.image), 'hpm_commands': self.counts}
        tmp = self.state_file + '.tmp'
        with open(tmp, 'w') as f:
            json.dump(state, f)
        os.replace(tmp, self.state_file)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument('--state-file', required=True)
    parser.add_argument('--user', default='admin')
    parser.add_argument('--password', default='password')
    parser.add_argument('--silent', action='store_true')
    parser.add_argument('--stuck-power', action='store_true',
                        help='Accept power changes and never make them.')
    parser.add_argument('--power-delay', type=float, default=0.0,
                        help='Seconds before a power change shows.')
    args = parser.parse_args(argv)
    if args.silent:
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind(('127.0.0.1', 0))
        print('port %d' % sock.getsockname()[1], flush=True)
        while True:
            sock.recvfrom(4096)
    bmc = EmulatedBMC({args.user: args.password}, args.state_file,
                      stuck_power=args.stuck_power,
                      power_delay=args.power_delay, port=0,
                      address='127.0.0.1')
    print('port %d' % bmc.port, flush=True)
    bmc.listen()


if __name__ == '__main__':
    sys.exit(main())
