"""What a request may send, checked before either API looks at it.

``wrap(app, conf, error)`` puts two checks in front of an API:

* the URL path and query string, once percent-decoded, must be UTF-8
  without NUL characters (PostgreSQL cannot compare a string holding NUL),
  else 400;
* the body may not exceed ``[oslo_middleware]max_request_body_size``
  bytes (oslo.middleware's sizelimit option), else 413. A body sent
  without ``Content-Length`` (chunked) is read here, at most that many
  bytes, so that no handler reads past the limit.

``error(environ, status, message)`` returns the WSGI application of the
error response in the API's own format.

``MAX_INT`` is the largest value of the integer columns (SQL ``INTEGER``
on every backend): integers from a query string or a body that reach one
are checked against it. ``TEXT_PATTERN`` is the JSON schema pattern of a
string stored in a text column: PostgreSQL cannot store NUL.
"""

import io
from urllib import parse

from oslo_log import log
from oslo_middleware import sizelimit
import webob

LOG = log.getLogger(__name__)

MAX_INT = 2 ** 31 - 1
MIN_INT = -2 ** 31
# The JSON schema of an integer stored in an integer column.
INTEGER = {'type': 'integer', 'minimum': MIN_INT, 'maximum': MAX_INT}
TEXT_PATTERN = r'^[^\x00]*\Z'


def _text(wsgi_string, unquote=False):
    """A WSGI string read as UTF-8, or None when it is not valid UTF-8.

    WSGI strings carry the request's bytes as latin-1 characters. The
    server has percent-decoded the path already, not the query string.
    """
    try:
        raw = wsgi_string.encode('latin-1')
    except UnicodeEncodeError:
        # Some in-process servers pass text already decoded: then it
        # only needs to be valid Unicode.
        raw = wsgi_string.encode('utf-8', 'surrogatepass')
    if unquote:
        raw = parse.unquote_to_bytes(raw)
    try:
        return raw.decode('utf-8')
    except UnicodeDecodeError:
        return None


def check_url(environ):
    """The reason the request's URL is refused, or None."""
    path = _text(environ.get('PATH_INFO', ''))
    if path is None:
        return 'The URL path is not valid UTF-8.'
    query = _text(environ.get('QUERY_STRING', '').replace('+', ' '),
                  unquote=True)
    if query is None:
        return 'The query string is not valid UTF-8.'
    if '\x00' in path or '\x00' in query:
        return 'The URL may not contain NUL characters (%00).'
    return None


def _read_at_most(stream, max_size):
    """The whole stream, or None once it passes ``max_size`` bytes."""
    reader = sizelimit.LimitingReader(stream, max_size)
    chunks = []
    try:
        while True:
            chunk = reader.read(65536)
            if not chunk:
                return b''.join(chunks)
            chunks.append(chunk)
    except webob.exc.HTTPRequestEntityTooLarge:
        return None


class RequestLimits(sizelimit.RequestBodySizeLimiter):
    """oslo.middleware's body size limit, answering in the API's format.

    It also refuses URLs that are not UTF-8 (see ``check_url``).
    """

    def __init__(self, application, conf, error):
        super().__init__(application, conf)
        self.error = error

    def __call__(self, environ, start_response):
        reason = check_url(environ)
        if reason is not None:
            return self._refuse(environ, start_response, 400, reason)
        max_size = self._conf_get('max_request_body_size')
        req = webob.Request(environ)
        length = req.content_length
        if length is None and req.is_body_readable:
            body = _read_at_most(req.body_file_raw, max_size)
            if body is None:
                length = max_size + 1
            else:
                environ['wsgi.input'] = io.BytesIO(body)
                environ['CONTENT_LENGTH'] = str(len(body))
                environ.pop('HTTP_TRANSFER_ENCODING', None)
                length = len(body)
        if length is not None and length > max_size:
            return self._refuse(
                environ, start_response, 413,
                'The request body is larger than %d bytes '
                '([oslo_middleware]max_request_body_size).' % max_size)
        return self.application(environ, start_response)

    def _refuse(self, environ, start_response, status, reason):
        LOG.info('Refused %s request: %s', environ.get('REQUEST_METHOD'),
                 reason)
        return self.error(environ, status, reason)(environ, start_response)


def wrap(app, conf, error):
    """``app`` behind the checks of this module."""
    return RequestLimits(app, conf, error)
