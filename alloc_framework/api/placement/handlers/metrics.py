"""Handler of ``GET /metrics``: the Prometheus metrics of the Placement API.

Answered here, behind the authentication and the ``placement:metrics``
rule; with ``[metrics]prometheus_allow_unauthenticated`` the middleware
of :mod:`alloc_framework.api.prometheus` answers it before the
authentication. Not microversioned: the exposition format has its own
version, in its content type.
"""

import webob
import webob.exc

from alloc_framework.api.placement.policies import metrics as policies
from alloc_framework.api.placement import wsgi_wrapper
from alloc_framework.api import prometheus


@wsgi_wrapper.PlacementWsgify
def get_metrics(req):
    """GET /metrics (404 when [metrics]prometheus_enabled is false)."""
    metrics = prometheus.of(req.environ)
    if metrics is None:
        raise webob.exc.HTTPNotFound('The resource could not be found.')
    req.environ['placement.context'].can(policies.METRICS)
    content_type, body = metrics.exposition()
    resp = webob.Response(body=body)
    resp.headers['Content-Type'] = content_type
    return resp
