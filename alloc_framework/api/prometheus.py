"""Prometheus metrics of the two APIs: ``GET /metrics`` and request latency.

Each API application (bare metal, Placement) has one :class:`Metrics`
with a registry of its own, made by :func:`wrap` when the application is
built (``[metrics]prometheus_enabled``). It holds:

- ``alloc_http_request_duration_seconds``, a histogram of the time the
  application took to answer, labelled ``api``, ``method`` and ``route``:
  the URL *template* of the route table (``/resource_providers/{uuid}``),
  never the raw path, so that the number of series is bounded. Requests
  that no route matched, and those refused before routing (no
  credentials, a body too large), count under ``route="unmatched"``;
  methods outside the usual seven under ``method="other"``.
- gauges read from the database at each scrape by :class:`_Gauges` (a
  custom collector over :mod:`alloc_framework.objects.capacity`, a
  constant number of aggregated statements): the Placement figures on
  the Placement API, the bare metal counts on the bare metal API, so
  that scraping both ports counts nothing twice; ``alloc_database_up``
  says whether those statements succeeded. A database that does not
  answer gives ``alloc_database_up 0`` and no database gauges, with
  status 200 and the histograms: the scrape never fails for it.

``GET /metrics`` is a route of each API's table, behind its
authentication and an admin-only policy rule, unless
``[metrics]prometheus_allow_unauthenticated``: then :class:`_Middleware`,
outside the authentication, answers it.

Several serving processes (``[placement_api]processes``,
``[DEFAULT]server_workers``) share their histograms through
prometheus-client's multiprocess mode in ``[metrics]
prometheus_multiproc_dir`` (see :func:`setup_process`): any process
answering a scrape reports the requests of all of them. The library
chooses the mode when it is first imported, from the environment, so
this module imports it only when an application is built, after
:func:`setup_process` has run.
"""

import glob
import os
import sys
import time

from oslo_db import exception as db_exc
from oslo_log import log
import sqlalchemy as sa

from alloc_framework.common import context as af_context
from alloc_framework.objects import capacity

LOG = log.getLogger(__name__)

PATH = '/metrics'
# What the middleware leaves in the WSGI environment for the route table
# (the application's Metrics) and what the route table leaves for the
# middleware (the template of the route that matched).
METRICS_KEY = 'alloc.metrics'
ROUTE_KEY = 'alloc.route_template'

BAREMETAL = 'baremetal'
PLACEMENT = 'placement'
UNMATCHED = 'unmatched'
OTHER_METHOD = 'other'
METHODS = frozenset(('GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE',
                     'OPTIONS'))
LATENCY = 'alloc_http_request_duration_seconds'
MULTIPROC_ENV = 'PROMETHEUS_MULTIPROC_DIR'
# The classic text exposition format, which every Prometheus reads.
CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'


def multiproc_dir(conf):
    """The directory of the multiprocess mode, or None (one process)."""
    return (conf.metrics.prometheus_multiproc_dir
            or os.environ.get(MULTIPROC_ENV) or None)


def default_multiproc_dir(conf, service):
    """The directory of the multiprocess mode of ``service`` (a console
    script's name) when none is configured: its own, under
    ``[DEFAULT]state_path``, named after it and ``[DEFAULT]host`` (two
    services of one host and state path do not share it)."""
    return os.path.join(conf.state_path, 'prometheus',
                        '%s-%s' % (service, conf.host))


def setup_process(conf, processes=1, empty=True, service='alloc-server'):
    """Prepare the multiprocess mode before the serving processes start.

    Called by the commands in the launching process, before any
    application is built: creates ``[metrics]prometheus_multiproc_dir``,
    empties it of the files of an earlier run (``empty``) and names it in
    the environment, where prometheus-client looks when it is imported
    (the processes forked later inherit both). With several processes
    and neither the option nor the environment variable set, the
    directory is :func:`default_multiproc_dir` of ``service``.

    :raises: RuntimeError when prometheus-client was already imported in
        the other mode (something imported it before this call).
    """
    if not conf.metrics.prometheus_enabled:
        return
    directory = conf.metrics.prometheus_multiproc_dir
    if not directory:
        if processes < 2 or os.environ.get(MULTIPROC_ENV):
            return
        directory = default_multiproc_dir(conf, service)
    os.makedirs(directory, exist_ok=True)
    if empty:
        for path in glob.glob(os.path.join(directory, '*.db')):
            os.remove(path)
    os.environ[MULTIPROC_ENV] = directory
    _check_mode(directory)


def _check_mode(directory):
    values = sys.modules.get('prometheus_client.values')
    if values is None:
        return
    if getattr(values.ValueClass, '__name__', '') != 'MmapedValue':
        raise RuntimeError(
            'prometheus_client was imported before [metrics]'
            'prometheus_multiproc_dir (%s) was set up: the latency '
            'histograms would not be shared by the processes' % directory)


class Metrics:
    """The metrics of one API application, and their exposition."""

    def __init__(self, conf, api):
        directory = multiproc_dir(conf)
        if directory:
            # The histogram's values live in the directory's files; a
            # collector reading all of them reports every process. Named
            # before the library is imported (a WSGI server's processes
            # build their applications without setup_process()).
            os.makedirs(directory, exist_ok=True)
            os.environ.setdefault(MULTIPROC_ENV, directory)
            _check_mode(directory)
        from prometheus_client import registry
        self.api = api
        self.allow_unauthenticated = (
            conf.metrics.prometheus_allow_unauthenticated)
        self.registry = registry.CollectorRegistry(auto_describe=False)
        self.latency = self._histogram(None if directory else self.registry)
        if directory:
            self.registry.register(_ThisApi(directory, api))
        self.registry.register(_Gauges(api))

    @staticmethod
    def _histogram(registry):
        from prometheus_client import metrics
        return metrics.Histogram(
            LATENCY, 'Time the API took to answer a request, by API, '
            'method and route template.', ('api', 'method', 'route'),
            registry=registry)

    def observe(self, environ, seconds):
        """Count a request the application answered in ``seconds``."""
        method = environ.get('REQUEST_METHOD')
        self.latency.labels(
            self.api, method if method in METHODS else OTHER_METHOD,
            environ.get(ROUTE_KEY) or UNMATCHED).observe(seconds)

    def exposition(self):
        """The metrics now, in the text format: ``(content type, body)``."""
        from prometheus_client import exposition
        return CONTENT_TYPE, exposition.generate_latest(self.registry)

    def __call__(self, environ, start_response):
        """Serve the exposition (a WSGI application)."""
        content_type, body = self.exposition()
        start_response('200 OK', [('Content-Type', content_type),
                                  ('Content-Length', str(len(body)))])
        if environ.get('REQUEST_METHOD') == 'HEAD':
            return [b'']
        return [body]


class _ThisApi:
    """The multiprocess histograms of one API (a process of alloc-server
    writes those of both APIs into the same files)."""

    def __init__(self, directory, api):
        from prometheus_client import multiprocess
        self._collector = multiprocess.MultiProcessCollector(
            None, path=directory)
        self._api = api

    def collect(self):
        for family in self._collector.collect():
            # Each collect() reads the files into new families: keeping
            # only our samples changes nothing else.
            family.samples = [s for s in family.samples
                              if s.labels.get('api') == self._api]
            if family.samples:
                yield family


class _Gauges:
    """The database gauges of one API, computed when collected."""

    def __init__(self, api):
        self._families = (_placement_families if api == PLACEMENT
                          else _baremetal_families)

    def collect(self):
        from prometheus_client import metrics_core
        up = metrics_core.GaugeMetricFamily(
            'alloc_database_up', '1 when the database answered the '
            'queries of this scrape, 0 when it did not (the gauges read '
            'from it are then left out).')
        context = af_context.get_admin_context()
        try:
            families = self._families(context, metrics_core)
        except (db_exc.DBError, sa.exc.SQLAlchemyError) as exc:
            LOG.warning('/metrics: the database did not answer: %s', exc)
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        yield from families


def _gauge(metrics_core, name, documentation, labels, values):
    family = metrics_core.GaugeMetricFamily(name, documentation,
                                            labels=labels)
    for label_values, value in sorted(values.items()):
        family.add_metric(label_values, value)
    return family


def _placement_families(context, metrics_core):
    classes, over = capacity.placement_summary(context)
    figures = {
        'capacity': 'Capacity of the resource class, all providers '
                    'summed: (total - reserved) * allocation_ratio per '
                    'inventory.',
        'used': 'Amount of the resource class allocated, all providers '
                'summed.',
        'reserved': 'Amount of the resource class reserved, all '
                    'providers summed.',
        'total': 'Total inventory of the resource class, all providers '
                 'summed.',
    }
    families = [
        _gauge(metrics_core, 'alloc_placement_' + figure, documentation,
               ('resource_class',),
               {(c.resource_class,): getattr(c, figure) for c in classes})
        for figure, documentation in figures.items()]
    families.append(_gauge(
        metrics_core, 'alloc_placement_providers_over_capacity',
        'Resource providers using more than their capacity of at least '
        'one resource class.', (), {(): over}))
    return families


def _baremetal_families(context, metrics_core):
    nodes, allocations, actions = capacity.baremetal_summary(context)
    return [
        _gauge(metrics_core, 'alloc_nodes',
               'Bare metal nodes by provision state and resource class.',
               ('provision_state', 'resource_class'),
               {(state or '', rc or ''): count
                for (state, rc), count in nodes.items()}),
        _gauge(metrics_core, 'alloc_allocations',
               'Node allocations by state.', ('state',),
               {(state,): count for state, count in allocations.items()}),
        _gauge(metrics_core, 'alloc_deferred_actions',
               'Deferred actions not deleted, by state.', ('state',),
               {(state,): count for state, count in actions.items()}),
    ]


class _Middleware:
    """Times every request; answers /metrics when it needs no credentials.

    The outermost layer of an API application: the time is the whole
    stack's, until the application returns its response.
    """

    def __init__(self, app, metrics):
        self.app = app
        self.metrics = metrics

    def __call__(self, environ, start_response):
        environ[METRICS_KEY] = self.metrics
        app = self.app
        if (self.metrics.allow_unauthenticated
                and environ.get('PATH_INFO') == PATH
                and environ.get('REQUEST_METHOD') in ('GET', 'HEAD')):
            environ[ROUTE_KEY] = PATH
            app = self.metrics
        start = time.monotonic()
        try:
            return app(environ, start_response)
        finally:
            self.metrics.observe(environ, time.monotonic() - start)


def wrap(app, conf, api):
    """``app`` with the metrics of ``api`` (:data:`BAREMETAL` or
    :data:`PLACEMENT`), or ``app`` itself when they are disabled."""
    if not conf.metrics.prometheus_enabled:
        return app
    return _Middleware(app, Metrics(conf, api))


def of(environ):
    """The :class:`Metrics` serving this request, or None (disabled)."""
    return environ.get(METRICS_KEY)
