"""Turn any unexpected exception into a logged 500 with a JSON body.

The client gets the API's error document, never a traceback; the log gets
the traceback with the request id.
"""

from oslo_log import log as logging
import webob
import webob.exc

from alloc_framework.api.placement import response

LOG = logging.getLogger(__name__)


class FaultWrapper:
    """The outermost guard of the Placement application."""

    def __init__(self, application):
        self.application = application

    def __call__(self, environ, start_response):
        try:
            return self.application(environ, start_response)
        except Exception as exc:
            LOG.exception('Placement API unexpected error: %s', exc)
            req = webob.Request(environ)
            # The message is generic: internal details stay in the log.
            err = webob.exc.HTTPInternalServerError(
                'An unexpected error occurred while processing the '
                'request; see the service log for details.')
            return response.error_response(req, err)(environ, start_response)
