"""The dashboard's WSGI application and where it sits in the Placement app.

:func:`wrap` puts it in the Placement stack inside authentication and the
request context (see ``placement.deploy``): requests under
``/dashboard/`` go to :class:`DashboardApp`, the others to the API as
before. So the dashboard has the API's authentication (with
``http_basic`` the 401 carries ``WWW-Authenticate``, and browsers ask for
the password themselves); with ``noauth`` a request without a token is
the admin (``auth.NoAuthMiddleware``), as every API client may be there.
The ``placement:dashboard`` rule (admin by default) decides who sees it.

Every answer is HTML rendered by Jinja2 with autoescaping, with a strict
Content-Security-Policy (no script at all; styles only from the
dashboard's own stylesheet), ``X-Content-Type-Options: nosniff``,
``X-Frame-Options: DENY``, no referrer and no caching. A bad query
string is a 400 page naming the field, an unknown page a 404, only GET
and HEAD are allowed; an unexpected error reaches the API's fault
wrapper (a 500 without details).

The "what fits" page asks the API itself (``GET /allocation_candidates``
with ``explain=true``, latest microversion) in this process, so its
answer and its 400s are the API's.
"""

import datetime
import io
import json
import os
import re
import urllib.parse

import jinja2
from oslo_log import log as logging
import webob
import webob.exc

from alloc_framework.api.dashboard import pages
from alloc_framework.api.dashboard import params
from alloc_framework.api.placement import microversion
from alloc_framework.api.placement.policies import dashboard as policies
from alloc_framework.drivers.allocation import placement as placement_backend
from alloc_framework.objects.placement import exception

LOG = logging.getLogger(__name__)

PREFIX = '/dashboard'

CSP = ("default-src 'none'; style-src 'self'; img-src 'self'; "
       "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")

SECURITY_HEADERS = (
    ('Content-Security-Policy', CSP),
    ('X-Content-Type-Options', 'nosniff'),
    ('X-Frame-Options', 'DENY'),
    ('Referrer-Policy', 'no-referrer'),
    ('Cache-Control', 'no-store'),
)

# Path (under PREFIX) -> page function; groups are its arguments.
ROUTES = (
    (re.compile(r'^/$'), pages.overview),
    (re.compile(r'^/providers$'), pages.providers),
    (re.compile(r'^/providers/([^/]+)$'), pages.provider),
    (re.compile(r'^/fits$'), pages.fits),
    (re.compile(r'^/baremetal$'), pages.baremetal),
    (re.compile(r'^/trouble/([a-z-]+)$'), pages.trouble),
)

# The <title> of each page (the trouble lists give their own).
TITLES = {pages.overview: 'Overview', pages.providers: 'Providers',
          pages.provider: 'Provider tree', pages.fits: 'What fits',
          pages.baremetal: 'Bare metal'}

NAV = (('', 'Overview'), ('providers', 'Providers'), ('fits', 'What fits'),
       ('baremetal', 'Bare metal'), ('trouble/over-capacity', 'Trouble'))

_STATIC = os.path.join(os.path.dirname(__file__), 'static')
STYLESHEET = '/static/dashboard.css'


class PageError(Exception):
    """Answer with an error page of ``status``."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status
        self.message = message


class Page:
    """One request of a page: what the page functions use."""

    def __init__(self, app, req, context):
        self.app = app
        self.req = req
        self.context = context
        self.conf = app.conf
        self.page_size = app.conf.dashboard.page_size
        self.now = datetime.datetime.now(datetime.timezone.utc).replace(
            tzinfo=None)

    def url(self, path, **query):
        query = {k: (','.join(v) if isinstance(v, list) else v)
                 for k, v in query.items() if v is not None}
        url = '%s/%s' % (PREFIX, path)
        if query:
            url += '?' + urllib.parse.urlencode(sorted(query.items()))
        return url

    def not_found(self, message):
        return PageError(404, message)

    def error(self, status, message):
        return PageError(status, message)

    def call_api(self, path_qs):
        """``(status, JSON body)`` of a GET of the API in this process,
        as the requesting user, at the latest microversion."""
        path, _sep, query = path_qs.partition('?')
        environ = {
            'REQUEST_METHOD': 'GET', 'SCRIPT_NAME': '', 'PATH_INFO': path,
            'QUERY_STRING': query, 'SERVER_NAME': 'dashboard',
            'SERVER_PORT': '80', 'SERVER_PROTOCOL': 'HTTP/1.1',
            'wsgi.version': (1, 0), 'wsgi.url_scheme': 'http',
            'wsgi.input': io.BytesIO(), 'wsgi.errors': io.StringIO(),
            'HTTP_ACCEPT': 'application/json',
            'HTTP_OPENSTACK_API_VERSION': 'placement %s' % (
                microversion.max_version_string()),
            'placement.context': self.context,
        }
        started = {}

        def start_response(status, headers, exc_info=None):
            started['status'] = int(status.split(' ', 1)[0])

        body = b''.join(self.app.api(environ, start_response))
        return started['status'], json.loads(body or b'{}')


class DashboardApp:
    """Serve the pages under :data:`PREFIX` (GET and HEAD only).

    :param api: the Placement API application (route table behind the
        microversion middleware), for the "what fits" page.
    :param handler: the API's ``PlacementHandler``, whose caches of
        resource class and trait ids the pages share.
    """

    def __init__(self, conf, api, handler):
        self.conf = conf
        self.api = api
        self.handler = handler
        self.env = jinja2.Environment(
            loader=jinja2.PackageLoader('alloc_framework.api.dashboard',
                                        'templates'),
            autoescape=True, undefined=jinja2.StrictUndefined,
            trim_blocks=True, lstrip_blocks=True)
        # For the drift list: its rule (compare_tree) and hardware types;
        # it never reaches Placement's API.
        self.placement_backend = placement_backend.PlacementBackend(conf)
        self.env.filters['bar'] = _bar_width
        self.env.filters['age'] = _age
        with open(os.path.join(_STATIC, 'dashboard.css'), 'rb') as stream:
            self.stylesheet = stream.read()

    def render(self, template, status=200, **values):
        values.setdefault('title', 'Error %d' % status if status >= 400
                          else '')
        body = self.env.get_template(template).render(
            prefix=PREFIX, nav=NAV, stylesheet=PREFIX + STYLESHEET,
            status=status, **values)
        return self.respond(body.encode('utf-8'), status,
                            'text/html; charset=utf-8')

    @staticmethod
    def respond(body, status, content_type):
        resp = webob.Response(body=body, status=status,
                              content_type=None)
        resp.headers['Content-Type'] = content_type
        for name, value in SECURITY_HEADERS:
            resp.headers[name] = value
        return resp

    def __call__(self, environ, start_response):
        req = webob.Request(environ)
        resp = self.handle(req)
        if req.method == 'HEAD':
            resp.body = b''
        return resp(environ, start_response)

    def handle(self, req):
        path = req.path_info[len(PREFIX):]
        if req.method not in ('GET', 'HEAD'):
            resp = self.render('error.html', status=405,
                               message='Only GET and HEAD are allowed.')
            resp.headers['Allow'] = 'GET, HEAD'
            return resp
        context = req.environ['placement.context']
        context.config = self.conf
        context.attribute_cache = self.handler.attribute_cache
        context.class_counts = self.handler.class_counts
        try:
            context.can(policies.VIEW)
        except exception.PolicyNotAuthorized:
            return self.render('error.html', status=403,
                               message='The dashboard is for '
                                       'administrators.')
        if path == '':
            resp = webob.exc.HTTPMovedPermanently(location=PREFIX + '/')
            return resp
        if path == STYLESHEET:
            return self.respond(self.stylesheet, 200,
                                'text/css; charset=utf-8')
        page = Page(self, req, context)
        try:
            for pattern, function in ROUTES:
                match = pattern.match(path)
                if match:
                    template, values = function(page, *match.groups())
                    values.setdefault('title', TITLES.get(function, ''))
                    return self.render(template, **values)
            raise page.not_found('No such page.')
        except params.BadParam as exc:
            return self.render('error.html', status=400, field=exc.field,
                               message=exc.message)
        except PageError as exc:
            return self.render('error.html', status=exc.status,
                               message=exc.message)


def _bar_width(used, capacity, width=200):
    """Pixels of a bar of ``width`` for ``used`` of ``capacity``."""
    if not capacity or capacity <= 0:
        return width if used else 0
    return max(0, min(width, int(round(width * used / capacity))))


def _age(when, now):
    """A short age (``3d 4h``, ``5m``) of a naive UTC datetime."""
    if when is None:
        return ''
    if when.tzinfo is not None:
        when = when.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    seconds = max(0, int((now - when).total_seconds()))
    days, seconds = divmod(seconds, 86400)
    hours, seconds = divmod(seconds, 3600)
    minutes, seconds = divmod(seconds, 60)
    if days:
        return '%dd %dh' % (days, hours)
    if hours:
        return '%dh %dm' % (hours, minutes)
    if minutes:
        return '%dm' % minutes
    return '%ds' % seconds


def is_dashboard(environ):
    path = environ.get('PATH_INFO', '')
    return path == PREFIX or path.startswith(PREFIX + '/')


class Dispatch:
    """Send dashboard paths to the dashboard, the others to the API."""

    def __init__(self, api, dashboard):
        self.api = api
        self.dashboard = dashboard

    def __call__(self, environ, start_response):
        if is_dashboard(environ):
            return self.dashboard(environ, start_response)
        return self.api(environ, start_response)


def announce(conf):
    """What the Placement API service logs when it listens: the URL of
    the dashboard when it is enabled."""
    return [('Dashboard', PREFIX + '/')] if conf.dashboard.enabled else []


def wrap(api, conf, handler):
    """``api`` with the dashboard in front when ``[dashboard]enabled``.

    :param handler: the ``PlacementHandler`` at the bottom of ``api``.
    """
    if not conf.dashboard.enabled:
        return api
    return Dispatch(api, DashboardApp(conf, api, handler))
