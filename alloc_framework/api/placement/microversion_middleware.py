"""The middleware that negotiates the microversion of every request.

It parses ``OpenStack-API-Version`` with ``microversion.extract_version``,
stores the result in ``environ[microversion.MICROVERSION_ENVIRON]`` for the
handlers and echoes the version on the response.
"""

import webob
import webob.exc

from alloc_framework.api.placement import microversion
from alloc_framework.api.placement import response


class MicroversionMiddleware:
    """Parse ``OpenStack-API-Version`` and echo it on every response.

    A malformed header is a 400, a version outside ``VERSIONS`` a 406; both
    get the JSON error body of the API. Responses carry
    ``OpenStack-API-Version: placement X.Y`` and
    ``Vary: openstack-api-version``.
    """

    def __init__(self, application):
        self.application = application

    def __call__(self, environ, start_response):
        req = webob.Request(environ)
        try:
            version = microversion.extract_version(req.headers)
        except ValueError as exc:
            return response.error_response(
                req, webob.exc.HTTPNotAcceptable(
                    'Invalid microversion: %s' % exc))(environ,
                                                       start_response)
        except TypeError as exc:
            return response.error_response(
                req, webob.exc.HTTPBadRequest(
                    'Invalid microversion: %s' % exc))(environ,
                                                       start_response)
        environ[microversion.MICROVERSION_ENVIRON] = version
        value = '%s %s' % (microversion.SERVICE_TYPE, version)

        def _start_response(status, headers, exc_info=None):
            headers = [h for h in headers
                       if h[0].lower() != microversion.HEADER.lower()]
            headers.append((microversion.HEADER, value))
            headers.append(('vary', microversion.HEADER))
            return start_response(status, headers, exc_info)

        return self.application(environ, _start_response)
