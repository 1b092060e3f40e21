"""Redfish power state reads: a cached connection or one per call.

Starts the test tree's firmware-capable BMC emulator on a free loopback
port (or uses ``--address``), then reads a node's power state through
the ``redfish`` power interface N times with ``[redfish]
connection_cache_size`` 0 (a new sushy connection per call: root
document, authentication, system) and 10 (one cached connection), and
prints the median and 90th percentile latency and the requests the BMC
served per read.

    python benchmarks/redfish_connection_bench.py -n 200
    python benchmarks/redfish_connection_bench.py --auth-type basic
"""

import argparse
import os
import socket
import statistics
import subprocess
import sys
import time
import types

from oslo_config import cfg
import requests

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from alloc_framework.conf import redfish as redfish_conf  # noqa: E402
from alloc_framework.drivers.modules.redfish import power  # noqa: E402
from alloc_framework.drivers.modules.redfish import utils  # noqa: E402

EMULATOR = os.path.join(ROOT, 'tests', 'functional', 'drivers', 'redfish',
                        'firmware_bmc.py')


def _free_port():
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def _start_emulator():
    port = _free_port()
    proc = subprocess.Popen([sys.executable, EMULATOR, '--port', str(port),
                             '--username', 'admin', '--password', 'pw'],
                            stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    address = 'http://127.0.0.1:%d' % port
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            requests.get(address + '/redfish/v1/', timeout=1)
            return proc, address
        except requests.ConnectionError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit('the emulator did not start')


def _served(address):
    try:
        return requests.get(address + '/_emulator',
                            timeout=5).json().get('requests')
    except (requests.RequestException, ValueError):
        return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('-n', type=int, default=100, help='Reads per mode.')
    parser.add_argument('--auth-type', default='auto',
                        choices=utils.AUTH_TYPES)
    parser.add_argument('--address', help='An existing BMC instead of the '
                                          'emulator.')
    parser.add_argument('--username', default='admin')
    parser.add_argument('--password', default='pw')
    parser.add_argument('--system-id')
    args = parser.parse_args()

    proc = None
    address = args.address
    if address is None:
        proc, address = _start_emulator()
    try:
        conf = cfg.ConfigOpts()
        redfish_conf.register_opts(conf)
        conf([])
        info = {'redfish_address': address,
                'redfish_username': args.username,
                'redfish_password': args.password,
                'redfish_auth_type': args.auth_type}
        if args.system_id:
            info['redfish_system_id'] = args.system_id
        task = types.SimpleNamespace(node=types.SimpleNamespace(
            uuid='bench', driver_info=info))
        iface = power.RedfishPower()
        iface.conf = conf
        for size in (0, 10):
            conf.set_override('connection_cache_size', size, 'redfish')
            utils.reset_cache()
            iface.get_power_state(task)
            before = _served(address)
            times = []
            for _ in range(args.n):
                started = time.perf_counter()
                iface.get_power_state(task)
                times.append(time.perf_counter() - started)
            after = _served(address)
            times.sort()
            per_read = ('%.1f' % ((after - before) / args.n)
                        if before is not None and after is not None
                        else 'n/a')
            print('connection_cache_size=%-2d auth=%-7s median %6.1f ms  '
                  'p90 %6.1f ms  BMC requests/read %s'
                  % (size, args.auth_type,
                     statistics.median(times) * 1000,
                     times[int(len(times) * 0.9) - 1] * 1000, per_read))
    finally:
        if proc is not None:
            proc.kill()
            proc.wait()


if __name__ == '__main__':
    main()
