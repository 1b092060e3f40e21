"""Version documents: ``GET /`` and ``GET /v1``."""

from alloc_framework.api.baremetal import microversion
from alloc_framework.api.baremetal import util

NAME = 'OpenStack Ironic API'
DESCRIPTION = ('Bare metal node inventory and node allocation API, '
               'compatible with the OpenStack bare metal (Ironic) API.')
DOCS = 'https://docs.openstack.org/api-ref/baremetal/'


def _version(req):
    base = util.base_url(req)
    return {
        'id': 'v1',
        'links': [{'href': base + '/v1/', 'rel': 'self'}],
        'status': 'CURRENT',
        'min_version': microversion.version_string(microversion.MIN_VERSION),
        'version': microversion.version_string(microversion.MAX_VERSION),
    }


def home(req):
    version = _version(req)
    return util.json_response({
        'name': NAME,
        'description': DESCRIPTION,
        'default_version': version,
        'versions': [version],
    })


def _collection_link(req, name):
    base = util.base_url(req)
    return [{'href': '%s/v1/%s/' % (base, name), 'rel': 'self'},
            {'href': '%s/%s/' % (base, name), 'rel': 'bookmark'}]


def v1(req):
    base = util.base_url(req)
    body = {
        'id': 'v1',
        'links': [{'href': base + '/v1/', 'rel': 'self'},
                  {'href': DOCS, 'rel': 'describedby',
                   'type': 'text/html'}],
        'media_types': [{'base': 'application/json',
                         'type': 'application/vnd.openstack.ironic.v1+json'}],
        'nodes': _collection_link(req, 'nodes'),
        'version': _version(req),
    }
    if req.version.check(microversion.ALLOCATIONS):
        body['allocations'] = _collection_link(req, 'allocations')
    if req.version.check(microversion.SHARDS):
        body['shards'] = _collection_link(req, 'shards')
    return util.json_response(body)
