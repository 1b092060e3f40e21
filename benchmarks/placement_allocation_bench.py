#!/usr/bin/env python3
"""Benchmark of Placement allocation writes under contention, over HTTP.

Creates P resource providers with VCPU inventory in a running Placement
API (ours or upstream's: the script speaks only the public REST API),
then runs C concurrent clients that each write allocations of one VCPU
for new consumers (``PUT /allocations/{uuid}``, microversion 1.38) on a
random provider, retrying on ``409 placement.concurrent_update`` as the
reference tells clients to, until every provider is full. It prints the
successful writes per second, the latency (p50, p99) of successful
writes, the number of conflicts and errors, and checks that no provider
ended above its capacity.

Example::

    python benchmarks/placement_allocation_bench.py \\
        --url http://127.0.0.1:8778 --providers 20 --vcpus 50 --clients 16

The server must accept ``x-auth-token: admin`` (noauth) or be given a
real token with ``--token``. See benchmarks/README.md.
"""

import argparse
import random
import statistics
import sys
import threading
import time
import uuid

import requests

VERSION = 'placement 1.38'


class Client:
    """A thin, thread-confined client of the Placement API."""

    def __init__(self, url, token):
        self.url = url.rstrip('/')
        self.session = requests.Session()
        self.session.headers.update({
            'x-auth-token': token, 'accept': 'application/json',
            'openstack-api-version': VERSION})

    def call(self, method, path, body=None):
        return self.session.request(method, self.url + path, json=body,
                                    timeout=120)


def make_providers(client, count, vcpus, prefix):
    providers = []
    for i in range(count):
        resp = client.call('POST', '/resource_providers',
                           {'name': '%s-%d' % (prefix, i)})
        resp.raise_for_status()
        rp = resp.json()
        resp = client.call(
            'PUT', '/resource_providers/%s/inventories' % rp['uuid'],
            {'resource_provider_generation': rp['generation'],
             'inventories': {'VCPU': {'total': vcpus}}})
        resp.raise_for_status()
        providers.append(rp['uuid'])
    return providers


def run(args):
    setup = Client(args.url, args.token)
    prefix = 'bench-%s' % uuid.uuid4().hex[:8]
    providers = make_providers(setup, args.providers, args.vcpus, prefix)
    project, user = str(uuid.uuid4()), str(uuid.uuid4())
    lock = threading.Lock()
    latencies, errors = [], []
    counts = {'conflicts': 0, 'full': 0}

    def worker(seed):
        client = Client(args.url, args.token)
        rng = random.Random(seed)
        open_providers = list(providers)
        while open_providers:
            rp_uuid = rng.choice(open_providers)
            body = {'allocations': {rp_uuid: {'resources': {'VCPU': 1}}},
                    'project_id': project, 'user_id': user,
                    'consumer_generation': None,
                    'consumer_type': 'INSTANCE'}
            path = '/allocations/%s' % uuid.uuid4()
            start = time.monotonic()
            while True:
                resp = client.call('PUT', path, body)
                if resp.status_code != 409:
                    break
                code = resp.json()['errors'][0].get('code')
                if code != 'placement.concurrent_update':
                    break
                with lock:
                    counts['conflicts'] += 1
            elapsed = time.monotonic() - start
            with lock:
                if resp.status_code == 204:
                    latencies.append(elapsed)
                elif resp.status_code == 409:
                    counts['full'] += 1
                    open_providers.remove(rp_uuid)
                else:
                    errors.append((resp.status_code, resp.text[:200]))
                    return

    threads = [threading.Thread(target=worker, args=(i,))
               for i in range(args.clients)]
    start = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.monotonic() - start

    overcommitted = []
    for rp_uuid in providers:
        usages = setup.call(
            'GET', '/resource_providers/%s/usages' % rp_uuid).json()
        if usages['usages'].get('VCPU', 0) > args.vcpus:
            overcommitted.append(rp_uuid)
    capacity = args.providers * args.vcpus
    print('providers %d x %d VCPU, %d clients' % (
        args.providers, args.vcpus, args.clients))
    print('successful writes %d of capacity %d in %.2fs: %.1f/s' % (
        len(latencies), capacity, wall, len(latencies) / wall))
    if latencies:
        latencies.sort()
        print('latency p50 %.1f ms, p99 %.1f ms' % (
            statistics.median(latencies) * 1000,
            latencies[int(len(latencies) * 0.99) - 1] * 1000))
    print('conflicts retried %d, capacity refusals %d, errors %d' % (
        counts['conflicts'], counts['full'], len(errors)))
    for status, text in errors[:5]:
        print('  error %s: %s' % (status, text))
    if overcommitted or errors or len(latencies) != capacity:
        print('FAILED: overcommitted %s' % overcommitted)
        return 1
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--url', required=True,
                        help='Placement API endpoint')
    parser.add_argument('--token', default='admin',
                        help='x-auth-token to send (default: admin)')
    parser.add_argument('--providers', type=int, default=10)
    parser.add_argument('--vcpus', type=int, default=20,
                        help='VCPU inventory of each provider')
    parser.add_argument('--clients', type=int, default=16)
    return run(parser.parse_args(argv))


if __name__ == '__main__':
    sys.exit(main())
