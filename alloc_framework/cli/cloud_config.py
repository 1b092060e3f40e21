"""Connection settings of the ``alloc`` command, from options and clouds.yaml.

``alloc --os-cloud NAME`` (or ``OS_CLOUD=NAME``) reads the cloud ``NAME``
from ``clouds.yaml`` through openstacksdk's configuration loader, so the
file is found where every OpenStack client looks for it
(``OS_CLIENT_CONFIG_FILE``, the current directory,
``~/.config/openstack``, ``/etc/openstack``) and ``secure.yaml`` and
``regions`` apply. A setting comes, as in python-openstackclient, from
the command line, else from its environment variable, else from the
cloud, else from the default. The parser already folds environment
variables into option defaults, so "given" means "not ``None``" here.

Without a cloud name no file is read: ``alloc`` keeps talking to the
all-in-one server on this host unless told otherwise, even when a
``clouds.yaml`` with a single cloud exists.

A file that cannot be parsed, or whose structure is not that of a
``clouds.yaml``, and a cloud or region it does not define, end the command
with one line naming the file and the problem; openstacksdk itself would
skip an unparsable file and report the cloud as missing.
"""

import json
import os

import yaml

from alloc_framework.cli import client as http

# The authentication options of the parser (``user_domain_name`` is
# ``--os-user-domain-name`` and OS_USER_DOMAIN_NAME), each overriding the
# key of the same name in the cloud's ``auth`` section; ``--os-token``
# overrides ``token`` likewise.
AUTH_KEYS = ('auth_url', 'username', 'password', 'user_id',
             'project_name', 'project_id', 'user_domain_name',
             'user_domain_id', 'project_domain_name', 'project_domain_id',
             'system_scope')

SERVICES = (http.BAREMETAL, http.PLACEMENT)


class ServiceSettings:
    """Where and how to reach one API.

    ``endpoint`` is ``None`` when neither an option nor the cloud names
    one: the caller then uses the service catalog (keystone) or the local
    default.
    """

    def __init__(self, endpoint, api_version, interface, region_name):
        self.endpoint = endpoint
        self.api_version = api_version
        self.interface = interface
        self.region_name = region_name


class Settings:
    """The merged connection settings of one command run."""

    def __init__(self, cloud, auth_type, auth, insecure, cacert, services):
        self.cloud = cloud
        self.auth_type = auth_type
        self.auth = auth
        self.insecure = insecure
        self.cacert = cacert
        self.services = services

    def session_options(self):
        """The ``options`` argument of :func:`client.make_session`."""
        values = dict(self.auth)
        values['insecure'] = self.insecure
        values['cacert'] = self.cacert
        return values


def _first(*values):
    for value in values:
        if value not in (None, ''):
            return value
    return None


def _search_path(env_var, names):
    """The files openstacksdk would consider, first match wins."""
    paths = list(names)
    if os.environ.get(env_var):
        paths.insert(0, os.environ[env_var])
    return paths


def _check_structure(data):
    if not isinstance(data, dict):
        return 'the file is empty or not a mapping'
    clouds = data.get('clouds', {})
    if not isinstance(clouds, dict):
        return "'clouds' is not a mapping of cloud names"
    for name, cloud in clouds.items():
        if not isinstance(cloud, dict):
            return 'cloud %r is not a mapping' % name
        if not isinstance(cloud.get('auth', {}), dict):
            return "'auth' of cloud %r is not a mapping" % name
        if not isinstance(cloud.get('regions', []), list):
            return "'regions' of cloud %r is not a list" % name
    return None


def check_file(paths):
    """Parse the first existing file of ``paths``; return its path.

    :raises client.CommandError: when it cannot be read or parsed, or
        does not have the structure of a clouds.yaml.
    """
    for path in paths:
        if not os.path.exists(path):
            continue
        try:
            with open(path) as stream:
                if path.endswith('.json'):
                    data = json.load(stream)
                else:
                    data = yaml.safe_load(stream)
        except OSError as exc:
            raise http.CommandError('Cannot read %s: %s'
                                    % (path, exc.strerror or exc))
        except (ValueError, yaml.YAMLError) as exc:
            raise http.CommandError('%s is not valid %s: %s' % (
                path, 'JSON' if path.endswith('.json') else 'YAML',
                http.one_line(exc)))
        problem = _check_structure(data)
        if problem:
            raise http.CommandError('%s is not a valid clouds.yaml: %s'
                                    % (path, problem))
        return path
    return None


def load_cloud(name, region_name=None):
    """The openstacksdk ``CloudRegion`` of cloud ``name``.

    :raises client.CommandError: unknown cloud or region, malformed file.
    """
    from openstack.config import loader
    from openstack import exceptions as sdk_exc

    config_files = _search_path('OS_CLIENT_CONFIG_FILE',
                                loader.CONFIG_FILES)
    secure_files = _search_path('OS_CLIENT_SECURE_FILE',
                                loader.SECURE_FILES)
    found = check_file(config_files)
    check_file(secure_files)
    try:
        # Environment variables are the parser's business (they rank
        # above the file); the loader reads files only.
        config = loader.OpenStackConfig(
            config_files=config_files, secure_files=secure_files,
            load_envvars=False, app_name='alloc')
        if name not in config.get_cloud_names():
            if not found:
                raise http.CommandError(
                    'Cloud %r not found: no clouds.yaml (looked in '
                    'OS_CLIENT_CONFIG_FILE, the current directory, '
                    '~/.config/openstack and /etc/openstack)' % name)
            raise http.CommandError(
                'Cloud %r is not defined in %s (clouds: %s)' % (
                    name, found,
                    ', '.join(sorted(config.get_cloud_names())) or 'none'))
        return config.get_one(cloud=name, region_name=region_name or '',
                              validate=False)
    except sdk_exc.ConfigException as exc:
        raise http.CommandError('clouds.yaml: %s' % http.one_line(exc))


def _from_cloud(cloud, getter, service):
    """The cloud's value for ``service`` (openstacksdk's own lookup, e.g.
    ``baremetal_endpoint_override``, ``baremetal_api_version``), if any."""
    return getattr(cloud, getter)(service) if cloud is not None else None


def resolve(options):
    """Merge the parsed ``options`` with their cloud; return Settings."""
    cloud = None
    if options.os_cloud:
        cloud = load_cloud(options.os_cloud, options.os_region_name)

    auth = dict(cloud.config.get('auth') or {}) if cloud else {}
    for key in AUTH_KEYS + ('token',):
        value = getattr(options, 'os_' + key)
        if value is not None:
            auth[key] = value

    # A cloud without auth_type means "password" (openstacksdk's default).
    auth_type = _first(options.os_auth_type,
                       cloud.config.get('auth_type') if cloud else None,
                       'none')

    services = {}
    for service in SERVICES:
        services[service] = ServiceSettings(
            endpoint=_first(getattr(options, 'os_%s_endpoint' % service),
                            _from_cloud(cloud, 'get_endpoint', service)),
            api_version=_first(
                getattr(options, 'os_%s_api_version' % service),
                _from_cloud(cloud, 'get_api_version', service),
                'latest'),
            interface=_first(options.os_interface,
                             _from_cloud(cloud, 'get_interface', service),
                             'public'),
            region_name=_first(options.os_region_name,
                               _from_cloud(cloud, 'get_region_name',
                                           service)))

    insecure = bool(options.insecure)
    cacert = options.os_cacert
    if cloud is not None and not insecure and not cacert:
        insecure = cloud.config.get('verify') is False
        cacert = cloud.config.get('cacert')
    return Settings(cloud=options.os_cloud, auth_type=auth_type.lower(),
                    auth=auth, insecure=insecure, cacert=cacert,
                    services=services)
