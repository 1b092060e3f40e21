"""``GET /metrics``: the Prometheus metrics of the bare metal API.

Answered here, behind the authentication and the
``baremetal:metrics:get`` rule; with ``[metrics]
prometheus_allow_unauthenticated`` the middleware of
:mod:`alloc_framework.api.prometheus` answers it before the
authentication. Outside ``/v1``, so not versioned.
"""

import webob

from alloc_framework.api.baremetal.policies import metrics as policies
from alloc_framework.api.baremetal import util
from alloc_framework.api import prometheus


def get_metrics(req):
    metrics = prometheus.of(req.environ)
    if metrics is None:
        # [metrics]prometheus_enabled is false.
        raise util.resource_not_found()
    req.policy.authorize(req.context, policies.METRICS)
    content_type, body = metrics.exposition()
    resp = webob.Response(body=body)
    resp.headers['Content-Type'] = content_type
    return resp
