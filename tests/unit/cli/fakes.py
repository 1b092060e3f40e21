"""A fake HTTP layer for the CLI: a keystoneauth adapter double.

Tests queue canned answers per (method, path) and then inspect the
requests the command sent; everything above the adapter (our client,
version negotiation, error handling, cliff, formatters) is real.
"""

import io
import json as jsonlib

import fixtures

from alloc_framework.cli import shell


class FakeResponse:
    def __init__(self, status=200, body=None, headers=None):
        self.status_code = status
        self.headers = dict(headers or {})
        if body is None:
            self.content = b''
        elif isinstance(body, (bytes, str)):
            self.content = body.encode() if isinstance(body, str) else body
        else:
            self.content = jsonlib.dumps(body).encode()
        self.text = self.content.decode()
        self.reason = 'Reason'

    def json(self):
        return jsonlib.loads(self.text)


class FakeAdapter:
    """Records requests; answers from a dict of queued responses."""

    def __init__(self, version_doc):
        self.version_doc = version_doc
        self.answers = {}
        self.requests = []
        self.additional_headers = {}

    def add(self, method, path, status=200, body=None, headers=None):
        self.answers.setdefault((method, path), []).append(
            FakeResponse(status, body, headers))

    def get(self, url, raise_exc=False):
        return FakeResponse(200, self.version_doc)

    def request(self, url, method, json=None, params=None, headers=None,
                raise_exc=False):
        self.requests.append({'method': method, 'url': url, 'json': json,
                              'params': params, 'headers': headers})
        queue = self.answers.get((method, url))
        if not queue:
            return FakeResponse(404, {'errors': [{
                'status': 404, 'title': 'Not Found',
                'detail': 'no fake answer for %s %s' % (method, url)}]})
        return queue.pop(0) if len(queue) > 1 else queue[0]

    def last(self, method=None):
        reqs = [r for r in self.requests
                if method is None or r['method'] == method]
        return reqs[-1]


PLACEMENT_ROOT = {'versions': [{'id': 'v1.0', 'min_version': '1.0',
                                'max_version': '1.39', 'status': 'CURRENT'}]}
BAREMETAL_ROOT = {'default_version': {'id': 'v1', 'version': '1.80',
                                      'min_version': '1.1'},
                  'versions': [{'id': 'v1', 'version': '1.80'}]}


class FakeHTTP(fixtures.Fixture):
    """Patch the client manager so both services talk to fake adapters."""

    def _setUp(self):
        self.placement = FakeAdapter(PLACEMENT_ROOT)
        self.baremetal = FakeAdapter(BAREMETAL_ROOT)
        fakes = {'placement': self.placement, 'baremetal': self.baremetal}
        self.adapters_made = []

        def _adapter(manager, service_type, endpoint, default, headers=None):
            self.adapters_made.append((service_type, endpoint or default,
                                       headers))
            adapter = fakes[service_type]
            adapter.additional_headers = headers or {}
            return adapter

        self.useFixture(fixtures.MonkeyPatch(
            'alloc_framework.cli.shell.ClientManager._adapter', _adapter))


def run(argv):
    """Run ``alloc argv``; return (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    code = shell.main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def run_json(test, argv):
    """Run with ``-f json``; assert success and return the decoded output."""
    code, out, err = run(list(argv) + ['-f', 'json'])
    test.assertEqual(0, code, 'stderr: %s' % err)
    return jsonlib.loads(out)
