"""The ``alloc`` command: a cliff application for both APIs.

Commands are found through the ``alloc_framework.cli`` entry-point
namespace (``baremetal_allocation_create`` becomes ``alloc baremetal
allocation create``). Global options select the endpoints, the
authentication and the microversion of each API, or name a cloud of
``clouds.yaml`` (``--os-cloud``) that gives them; they default to the
embedded all-in-one server on this host with no authentication.
"""

import logging
import os
import sys

from cliff import app
from cliff import commandmanager

from alloc_framework.cli import client as http
from alloc_framework.cli import cloud_config
from alloc_framework import version

DEFAULT_BAREMETAL_ENDPOINT = 'http://127.0.0.1:6385'
DEFAULT_PLACEMENT_ENDPOINT = 'http://127.0.0.1:8778'

# Options forwarded to keystoneauth1 plugins (flag name -> env var),
# e.g. --os-user-domain-name and OS_USER_DOMAIN_NAME.
_AUTH_OPTIONS = tuple((key.replace('_', '-'), 'OS_' + key.upper())
                      for key in cloud_config.AUTH_KEYS)


class ClientManager:
    """Builds one API client per service on first use.

    The connection settings (options, environment, ``--os-cloud``) are
    resolved on first use too, so that ``alloc help`` and ``alloc
    complete`` work whatever the state of clouds.yaml.
    """

    def __init__(self, options):
        self.options = options
        self._settings = None
        self._session = None
        self._clients = {}

    @property
    def settings(self):
        if self._settings is None:
            self._settings = cloud_config.resolve(self.options)
        return self._settings

    @property
    def auth_type(self):
        return self.settings.auth_type

    @property
    def session(self):
        if self._session is None:
            self._session = http.make_session(
                self.auth_type, self.settings.session_options())
        return self._session

    def _uses_keystone(self):
        return self.auth_type not in ('none', 'noauth', 'http_basic')

    def _adapter(self, service_type, endpoint, default, headers=None):
        from keystoneauth1 import adapter
        service = self.settings.services[service_type]
        if not endpoint and not self._uses_keystone():
            endpoint = default
        return adapter.Adapter(
            self.session, service_type=service_type,
            interface=service.interface,
            region_name=service.region_name,
            endpoint_override=endpoint or None,
            additional_headers=headers or {},
            user_agent='alloc/%s' % version.version_info.version_string())

    @property
    def placement(self):
        if http.PLACEMENT not in self._clients:
            service = self.settings.services[http.PLACEMENT]
            headers = {}
            if not self._uses_keystone():
                # Placement's noauth middleware wants a token naming the
                # user (``admin`` is the administrator).
                headers['x-auth-token'] = (
                    self.settings.auth.get('token') or 'admin')
            adapter = self._adapter(http.PLACEMENT, service.endpoint,
                                    DEFAULT_PLACEMENT_ENDPOINT, headers)
            self._clients[http.PLACEMENT] = http.ServiceClient(
                adapter, http.PLACEMENT, service.api_version)
        return self._clients[http.PLACEMENT]

    @property
    def baremetal(self):
        if http.BAREMETAL not in self._clients:
            service = self.settings.services[http.BAREMETAL]
            endpoint = service.endpoint
            # Accept an endpoint given with or without its /v1 suffix.
            if endpoint and endpoint.rstrip('/').endswith('/v1'):
                endpoint = endpoint.rstrip('/')[:-3]
            adapter = self._adapter(http.BAREMETAL, endpoint,
                                    DEFAULT_BAREMETAL_ENDPOINT)
            self._clients[http.BAREMETAL] = http.ServiceClient(
                adapter, http.BAREMETAL, service.api_version,
                path_prefix='/v1')
        return self._clients[http.BAREMETAL]


class AllocApp(app.App):
    """The ``alloc`` application."""

    def __init__(self, stdout=None, stderr=None):
        super().__init__(
            description='Command line client for the bare metal node '
                        'allocation API and the Placement API.',
            version=version.version_info.version_string(),
            command_manager=commandmanager.CommandManager(
                'alloc_framework.cli'),
            deferred_help=True,
            stdout=stdout, stderr=stderr)
        self.client_manager = None
        self._log_handlers = []

    def build_option_parser(self, description, version, argparse_kwargs=None):
        parser = super().build_option_parser(description, version,
                                             argparse_kwargs)
        env = os.environ.get
        # Options left unset (None) take the value of the --os-cloud
        # cloud, then the default: see cloud_config.resolve().
        parser.add_argument(
            '--os-cloud', metavar='<name>', default=env('OS_CLOUD'),
            help='Cloud of clouds.yaml to take the endpoints, credentials, '
                 'region and microversions from; the options and '
                 'environment variables below override its entries (env '
                 'OS_CLOUD).')
        parser.add_argument(
            '--os-baremetal-endpoint', metavar='<url>',
            default=env('ALLOC_BAREMETAL_ENDPOINT'),
            help='Bare metal API endpoint (env ALLOC_BAREMETAL_ENDPOINT, '
                 'a cloud\'s baremetal_endpoint_override, default %s '
                 'without keystone).' % DEFAULT_BAREMETAL_ENDPOINT)
        parser.add_argument(
            '--os-placement-endpoint', metavar='<url>',
            default=env('ALLOC_PLACEMENT_ENDPOINT'),
            help='Placement API endpoint (env ALLOC_PLACEMENT_ENDPOINT, '
                 'a cloud\'s placement_endpoint_override, default %s '
                 'without keystone).' % DEFAULT_PLACEMENT_ENDPOINT)
        parser.add_argument(
            '--os-auth-type', metavar='<type>',
            default=env('OS_AUTH_TYPE'),
            help='none (default without a cloud), http_basic, or a '
                 'keystoneauth1 plugin such as password (env OS_AUTH_TYPE).')
        parser.add_argument(
            '--os-token', metavar='<token>',
            default=env('OS_TOKEN'),
            help='Token; without keystone it is sent to Placement as '
                 'x-auth-token (default admin) (env OS_TOKEN).')
        for name, var in _AUTH_OPTIONS:
            parser.add_argument(
                '--os-' + name, metavar='<%s>' % name, default=env(var),
                help='Authentication option (env %s).' % var)
        parser.add_argument(
            '--os-region-name', metavar='<region>',
            default=env('OS_REGION_NAME'),
            help='Region of the endpoints in the catalog (env '
                 'OS_REGION_NAME).')
        parser.add_argument(
            '--os-interface', metavar='<interface>',
            default=env('OS_INTERFACE'),
            help='Catalog interface (env OS_INTERFACE, default public).')
        parser.add_argument(
            '--os-cacert', metavar='<file>', default=env('OS_CACERT'),
            help='CA bundle to verify TLS servers (env OS_CACERT).')
        parser.add_argument(
            '--insecure', action='store_true',
            help='Do not verify TLS certificates.')
        parser.add_argument(
            '--os-baremetal-api-version', metavar='<version>',
            default=env('OS_BAREMETAL_API_VERSION'),
            help='Bare metal API microversion (X.Y or latest, the '
                 'default: the newest the server offers).')
        parser.add_argument(
            '--os-placement-api-version', metavar='<version>',
            default=env('OS_PLACEMENT_API_VERSION'),
            help='Placement API microversion (X.Y or latest, the default: '
                 'the newest the server offers).')
        return parser

    def configure_logging(self):
        root = logging.getLogger('')
        before = list(root.handlers)
        self._root_level = root.level
        super().configure_logging()
        # Remembered so that main() can detach them: the command may run
        # in-process (tests, scripts) many times.
        self._log_handlers = [h for h in root.handlers if h not in before]
        # Library chatter (HTTP connection pools, keystoneauth) stays out
        # of the user's way unless -v -v / --debug is given.
        if self.options.verbose_level < 2 and not self.options.debug:
            for name in ('keystoneauth', 'urllib3', 'stevedore'):
                logging.getLogger(name).setLevel(logging.WARNING)

    def restore_logging(self):
        root = logging.getLogger('')
        for handler in self._log_handlers:
            root.removeHandler(handler)
        self._log_handlers = []
        if getattr(self, '_root_level', None) is not None:
            root.setLevel(self._root_level)

    def initialize_app(self, argv):
        self.client_manager = ClientManager(self.options)


def main(argv=None, stdout=None, stderr=None):
    """Console script entry point; returns the exit code."""
    if argv is None:
        argv = sys.argv[1:]
    alloc = AllocApp(stdout=stdout, stderr=stderr)
    try:
        return alloc.run(list(argv))
    finally:
        alloc.restore_logging()


if __name__ == '__main__':
    sys.exit(main())
