"""The ``alloc`` command: a cliff application for both APIs.

Commands are found through the ``alloc_framework.cli`` entry-point
namespace (``baremetal_allocation_create`` becomes ``alloc baremetal
allocation create``). Global options select the endpoints, the
authentication and the microversion of each API; they default to the
embedded all-in-one server on this host with no authentication.
"""

import logging
import os
import sys

from cliff import app
from cliff import commandmanager

from alloc_framework.cli import client as http
from alloc_framework import version

DEFAULT_BAREMETAL_ENDPOINT = 'http://127.0.0.1:6385'
DEFAULT_PLACEMENT_ENDPOINT = 'http://127.0.0.1:8778'

# Options forwarded to keystoneauth1 plugins (flag name -> env var).
_AUTH_OPTIONS = (
    ('auth-url', 'OS_AUTH_URL'),
    ('username', 'OS_USERNAME'),
    ('password', 'OS_PASSWORD'),
    ('user-id', 'OS_USER_ID'),
    ('project-name', 'OS_PROJECT_NAME'),
    ('project-id', 'OS_PROJECT_ID'),
    ('user-domain-name', 'OS_USER_DOMAIN_NAME'),
    ('user-domain-id', 'OS_USER_DOMAIN_ID'),
    ('project-domain-name', 'OS_PROJECT_DOMAIN_NAME'),
    ('project-domain-id', 'OS_PROJECT_DOMAIN_ID'),
    ('system-scope', 'OS_SYSTEM_SCOPE'),
)


class ClientManager:
    """Builds one API client per service on first use."""

    def __init__(self, options):
        self.options = options
        self._session = None
        self._clients = {}

    @property
    def auth_type(self):
        return (self.options.os_auth_type or 'none').lower()

    @property
    def session(self):
        if self._session is None:
            opts = self.options
            values = {name.replace('-', '_'):
                      getattr(opts, 'os_' + name.replace('-', '_'))
                      for name, _env in _AUTH_OPTIONS}
            values['token'] = opts.os_token
            values['insecure'] = opts.insecure
            values['cacert'] = opts.os_cacert
            self._session = http.make_session(self.auth_type, values)
        return self._session

    def _uses_keystone(self):
        return self.auth_type not in ('none', 'noauth', 'http_basic')

    def _adapter(self, service_type, endpoint, default, headers=None):
        from keystoneauth1 import adapter
        if not endpoint and not self._uses_keystone():
            endpoint = default
        return adapter.Adapter(
            self.session, service_type=service_type,
            interface=self.options.os_interface,
            region_name=self.options.os_region_name,
            endpoint_override=endpoint or None,
            additional_headers=headers or {},
            user_agent='alloc/%s' % version.version_info.version_string())

    @property
    def placement(self):
        if http.PLACEMENT not in self._clients:
            headers = {}
            if not self._uses_keystone():
                # Placement's noauth middleware wants a token naming the
                # user (``admin`` is the administrator).
                headers['x-auth-token'] = self.options.os_token or 'admin'
            adapter = self._adapter('placement',
                                    self.options.os_placement_endpoint,
                                    DEFAULT_PLACEMENT_ENDPOINT, headers)
            self._clients[http.PLACEMENT] = http.ServiceClient(
                adapter, http.PLACEMENT,
                self.options.os_placement_api_version)
        return self._clients[http.PLACEMENT]

    @property
    def baremetal(self):
        if http.BAREMETAL not in self._clients:
            endpoint = self.options.os_baremetal_endpoint
            # Accept an endpoint given with or without its /v1 suffix.
            if endpoint and endpoint.rstrip('/').endswith('/v1'):
                endpoint = endpoint.rstrip('/')[:-3]
            adapter = self._adapter('baremetal', endpoint,
                                    DEFAULT_BAREMETAL_ENDPOINT)
            self._clients[http.BAREMETAL] = http.ServiceClient(
                adapter, http.BAREMETAL,
                self.options.os_baremetal_api_version, path_prefix='/v1')
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
        parser.add_argument(
            '--os-baremetal-endpoint', metavar='<url>',
            default=env('ALLOC_BAREMETAL_ENDPOINT'),
            help='Bare metal API endpoint (env ALLOC_BAREMETAL_ENDPOINT, '
                 'default %s without keystone).' % DEFAULT_BAREMETAL_ENDPOINT)
        parser.add_argument(
            '--os-placement-endpoint', metavar='<url>',
            default=env('ALLOC_PLACEMENT_ENDPOINT'),
            help='Placement API endpoint (env ALLOC_PLACEMENT_ENDPOINT, '
                 'default %s without keystone).' % DEFAULT_PLACEMENT_ENDPOINT)
        parser.add_argument(
            '--os-auth-type', metavar='<type>',
            default=env('OS_AUTH_TYPE', 'none'),
            help='none (default), http_basic, or a keystoneauth1 plugin '
                 'such as password (env OS_AUTH_TYPE).')
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
            default=env('OS_INTERFACE', 'public'),
            help='Catalog interface (env OS_INTERFACE, default public).')
        parser.add_argument(
            '--os-cacert', metavar='<file>', default=env('OS_CACERT'),
            help='CA bundle to verify TLS servers (env OS_CACERT).')
        parser.add_argument(
            '--insecure', action='store_true',
            help='Do not verify TLS certificates.')
        parser.add_argument(
            '--os-baremetal-api-version', metavar='<version>',
            default=env('OS_BAREMETAL_API_VERSION', 'latest'),
            help='Bare metal API microversion (X.Y or latest, the '
                 'default: the newest the server offers).')
        parser.add_argument(
            '--os-placement-api-version', metavar='<version>',
            default=env('OS_PLACEMENT_API_VERSION', 'latest'),
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
