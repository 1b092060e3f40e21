"""``GET /``: the version document."""

from oslo_utils import timeutils

from alloc_framework.api.placement import microversion
from alloc_framework.api.placement import response
from alloc_framework.api.placement import wsgi_wrapper


@wsgi_wrapper.PlacementWsgify
def home(req):
    """List the one major version with its microversion range."""
    min_version = microversion.min_version_string()
    version_data = {
        'id': 'v%s' % min_version,
        'max_version': microversion.max_version_string(),
        'min_version': min_version,
        # There is only one major version: it is the current one.
        'status': 'CURRENT',
        # A relative self link, so that proxies in front of the service
        # need no configuration here.
        'links': [{'rel': 'self', 'href': ''}],
    }
    return response.send_json(req, {'versions': [version_data]},
                              last_modified=timeutils.utcnow(
                              with_timezone=True))
