"""Log one line per request: method, path, status and response size."""

from oslo_log import log as logging

from alloc_framework.api.placement import microversion

LOG = logging.getLogger(__name__)


class RequestLog:
    """Log requests as an Apache-like line at INFO level."""

    def __init__(self, application):
        self.application = application

    def __call__(self, environ, start_response):
        LOG.debug('Starting request: %s "%s %s"',
                  environ.get('REMOTE_ADDR'), environ['REQUEST_METHOD'],
                  self._get_uri(environ))
        if LOG.isEnabledFor(logging.INFO):
            return self._log_and_call(environ, start_response)
        return self.application(environ, start_response)

    @staticmethod
    def _get_uri(environ):
        uri = environ.get('SCRIPT_NAME', '') + environ.get('PATH_INFO', '')
        if environ.get('QUERY_STRING'):
            uri += '?' + environ['QUERY_STRING']
        return uri

    def _log_and_call(self, environ, start_response):
        def replacement_start_response(status, headers, exc_info=None):
            size = '-'
            for name, value in headers:
                if name.lower() == 'content-length':
                    size = value
            self._write_log(environ, status, size)
            return start_response(status, headers, exc_info)
        return self.application(environ, replacement_start_response)

    def _write_log(self, environ, status, size):
        version = environ.get(microversion.MICROVERSION_ENVIRON)
        LOG.info('%(remote)s "%(method)s %(uri)s" status: %(status)s '
                 'len: %(size)s microversion: %(version)s',
                 {'remote': environ.get('REMOTE_ADDR', '-'),
                  'method': environ['REQUEST_METHOD'],
                  'uri': self._get_uri(environ),
                  'status': status.split(None, 1)[0],
                  'size': size,
                  'version': version or '-'})
