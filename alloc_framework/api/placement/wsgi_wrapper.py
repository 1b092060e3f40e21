"""The decorator of every Placement handler.

``PlacementWsgify`` is webob's ``wsgify`` with the API's error document:
a handler raises a webob HTTP exception and puts the stable error code in
``comment``::

    raise webob.exc.HTTPConflict(msg, comment=errors.CONCURRENT_UPDATE)

The client then gets the JSON error body of the reference, with ``code``
from microversion 1.23.
"""

import webob.dec
import webob.exc

from alloc_framework.api.placement import response


class PlacementWsgify(webob.dec.wsgify):
    """wsgify whose HTTP errors become the API's JSON error document."""

    def call_func(self, req, *args, **kwargs):
        try:
            return super().call_func(req, *args, **kwargs)
        except webob.exc.HTTPException as exc:
            code = exc.comment
            # The comment must not leak into the body as an HTML comment.
            exc.comment = None
            return response.error_response(req, exc, code=code)
