"""The middleware that negotiates the microversion of every request.

It parses ``OpenStack-API-Version`` with ``microversion.extract_version``,
stores the result in ``environ[microversion.MICROVERSION_ENVIRON]`` for the
handlers and echoes the version on the response. The versions parsed
are kept per header value (clients send few distinct ones): parsing,
and folding every request header to find that one, cost more than the
rest of the middleware.
"""

import webob
import webob.exc

from alloc_framework.api.placement import microversion
from alloc_framework.api.placement import response

# The WSGI environ key of the header (``OpenStack-API-Version``).
_ENVIRON_KEY = 'HTTP_' + microversion.HEADER.upper().replace('-', '_')


class MicroversionMiddleware:
    """Parse ``OpenStack-API-Version`` and echo it on every response.

    A malformed header is a 400, a version outside ``VERSIONS`` a 406; both
    get the JSON error body of the API. Responses carry
    ``OpenStack-API-Version: placement X.Y`` and
    ``Vary: openstack-api-version``.
    """

    # How many distinct header values have their version kept.
    max_kept = 256

    def __init__(self, application):
        self.application = application
        # {header value or None: Version}; only valid versions are kept.
        self._versions = {}

    def _version(self, environ):
        header = environ.get(_ENVIRON_KEY)
        version = self._versions.get(header)
        if version is None:
            # Only this header counts (microversion_parse looks at no
            # other when given no legacy headers).
            version = microversion.extract_version(
                {} if header is None else {microversion.HEADER: header})
            if len(self._versions) < self.max_kept:
                self._versions[header] = version
        return version

    def __call__(self, environ, start_response):
        try:
            version = self._version(environ)
        except ValueError as exc:
            req = webob.Request(environ)
            return response.error_response(
                req, webob.exc.HTTPNotAcceptable(
                    'Invalid microversion: %s' % exc))(environ,
                                                       start_response)
        except TypeError as exc:
            req = webob.Request(environ)
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
