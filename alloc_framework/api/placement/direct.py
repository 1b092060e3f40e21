"""An in-process client of the Placement API, without HTTP.

``PlacementDirect(conf)`` is a context manager giving a keystoneauth1
``Adapter``: its ``get``/``put``/``post``/``delete`` calls run against
``deploy.loadapp(conf)`` in this process, through wsgi-intercept, with
noauth and the admin token. Useful for tools and tests that want the
Placement data model without running a server::

    with direct.PlacementDirect(conf, latest_microversion=True) as client:
        resp = client.get('/resource_classes')
"""

from keystoneauth1 import adapter
from keystoneauth1 import session
from oslo_utils import uuidutils
import requests
from wsgi_intercept import interceptor

from alloc_framework.api.placement import deploy


class PlacementDirect(interceptor.RequestsInterceptor):
    """Intercept requests to a unique fake URL and serve them in-process.

    :param conf: the ConfigOpts the application is built with (database
        and policy); authentication is noauth whatever it configures.
    :param latest_microversion: send ``OpenStack-API-Version: placement
        latest`` with every request unless the caller sets it.
    """

    def __init__(self, conf, latest_microversion=False):
        # A unique host: interceptors of several instances cannot clash.
        self.url = 'http://%s/placement' % uuidutils.generate_uuid()
        headers = {'x-auth-token': 'admin'}
        if latest_microversion:
            headers['OpenStack-API-Version'] = 'placement latest'
        sess = session.Session(auth=None, session=requests.Session(),
                               additional_headers=headers)
        self.adapter = adapter.Adapter(sess, service_type='placement',
                                       endpoint_override=self.url,
                                       raise_exc=False)
        super().__init__(
            lambda: deploy.loadapp(conf, auth_strategy='noauth'),
            url=self.url)

    def __enter__(self):
        super().__enter__()
        return self.adapter
