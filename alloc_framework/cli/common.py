"""Helpers shared by the command modules: version gates and shaping.

Commands stay thin: they parse options, make their API calls through the
client of their service and shape the answer into columns and rows with
the helpers below.
"""

import json
import sys

from cliff import columns
from oslo_utils import uuidutils

from alloc_framework.cli import client

CommandError = client.CommandError
HttpError = client.HttpError


class JSONColumn(columns.FormattableColumn):
    """A dict or list: compact JSON in tables, raw data in json/yaml."""

    def human_readable(self):
        if self._value is None:
            return ''
        if isinstance(self._value, list) and all(
                isinstance(v, str) for v in self._value):
            return ', '.join(self._value)
        return json.dumps(self._value, sort_keys=True)


def column_value(value):
    """Wrap structured values so each formatter renders them well."""
    if isinstance(value, (dict, list)):
        return JSONColumn(value)
    return value


def get_properties(data, fields):
    """The values of ``fields`` in ``data``, in order (None if missing)."""
    return tuple(column_value(data.get(field)) for field in fields)


def present_fields(fields, data):
    """Keep the fields the server returned (for ``--fields`` answers)."""
    return tuple(f for f in fields if f in data)


class VersionMixin:
    """Microversion gates for a command talking to one service.

    ``service`` names the ``client_manager`` attribute; ``min_version`` is
    the version the command needs at all (checked in :meth:`client`).
    """

    service = 'placement'
    min_version = None

    def client(self):
        api = getattr(self.app.client_manager, self.service)
        if self.min_version:
            self.require_version(self.min_version, api=api)
        return api

    def require_version(self, min_version, what=None, api=None):
        api = api or getattr(self.app.client_manager, self.service)
        if not api.supports(min_version):
            what = what or 'This command'
            raise CommandError(
                '%s requires --os-%s-api-version %s or greater (using %s)'
                % (what, self.service, min_version, api.api_version))

    def supports(self, min_version):
        return getattr(self.app.client_manager, self.service).supports(
            min_version)


def find_provider(api, ident):
    """The UUID of the resource provider ``ident`` names.

    A UUID is used as it is (the server says whether it exists); anything
    else is a provider name, looked up with ``GET /resource_providers?name=``
    (names are unique in Placement, so a name finds one provider or none).

    :raises CommandError: no provider has this name (or, should a server
        allow it, several have).
    """
    if uuidutils.is_uuid_like(ident):
        return ident
    found = api.get('/resource_providers',
                    params={'name': ident})['resource_providers']
    if not found:
        raise CommandError('No resource provider with the name or UUID %r'
                           % ident)
    if len(found) > 1:
        raise CommandError(
            'Several resource providers are named %r: give a UUID (%s)'
            % (ident, ', '.join(sorted(rp['uuid'] for rp in found))))
    return found[0]['uuid']


class ProviderLookupMixin:
    """Resource providers given by name or UUID on the command line.

    Before the command runs, each argument of :meth:`provider_arguments`
    (a ``parsed_args`` attribute) holding a name is replaced by the UUID
    of the provider of that name (see :func:`find_provider`).
    """

    provider_options = ('uuid',)

    def provider_arguments(self, parsed_args):
        return self.provider_options

    def run(self, parsed_args):
        api = self.app.client_manager.placement
        for name in self.provider_arguments(parsed_args):
            value = getattr(parsed_args, name, None)
            if value:
                setattr(parsed_args, name, find_provider(api, value))
        return super().run(parsed_args)


def load_json_file(path):
    """The JSON document in ``path`` (``-`` reads standard input)."""
    try:
        if path == '-':
            text = sys.stdin.read()
        else:
            with open(path, encoding='utf-8') as f:
                text = f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise CommandError('Cannot read %s: %s' % (path, exc))
    try:
        return json.loads(text)
    except ValueError as exc:
        raise CommandError('%s is not valid JSON: %s' % (path, exc))


def add_file_argument(parser, what):
    parser.add_argument(
        '--file', metavar='<path>', required=True,
        help='JSON file with the %s (- reads standard input).' % what)


def parse_key_value(pairs, option):
    """``['a=1', 'b=x']`` -> ``{'a': '1', 'b': 'x'}`` with a clear error."""
    result = {}
    for pair in pairs or ():
        key, sep, value = pair.partition('=')
        if not sep or not key:
            raise CommandError('%s expects KEY=VALUE, got %r'
                               % (option, pair))
        result[key] = value
    return result


def split_and_deserialize(pair, option=None):
    """``'cpus=8'`` -> ``('cpus', 8)``; ``'name=x'`` -> ``('name', 'x')``.

    The value is decoded as JSON when it is valid JSON (numbers, booleans,
    lists, objects, ``null``) and kept as the string given otherwise, as
    the upstream bare metal client does. Creating and updating a node go
    through this one function, so ``--property cpus=8`` stores the same
    value whichever command sets it.
    """
    key, sep, value = pair.partition('=')
    if not sep or not key:
        raise CommandError('%s KEY=VALUE, got %r'
                           % ('%s expects' % option if option else 'Expected',
                              pair))
    try:
        value = json.loads(value)
    except ValueError:
        pass
    return key, value


def parse_deserialized(pairs, option):
    """``['cpus=8', 'arch=x86_64']`` -> ``{'cpus': 8, 'arch': 'x86_64'}``.

    See :func:`split_and_deserialize`.
    """
    return dict(split_and_deserialize(pair, option) for pair in pairs or ())


def split_fields(values):
    """``--fields a b --fields c,d`` -> ``['a', 'b', 'c', 'd']``."""
    fields = []
    for value in values or ():
        if isinstance(value, (list, tuple)):
            fields.extend(split_fields(value))
        else:
            fields.extend(f.strip() for f in value.split(',') if f.strip())
    return fields


def json_path(key):
    """A JSON-pointer path for ``properties/cpus`` style keys."""
    key = key.strip('/')
    return '/' + key.replace('~', '~0')


def patch_ops(op, attributes):
    """JSON patch operations from ``path=value`` or plain path strings.

    Values are decoded as :func:`split_and_deserialize` does (so
    ``properties/cpus=4`` sends a number).
    """
    ops = []
    for attr in attributes or ():
        if op == 'remove':
            ops.append({'op': 'remove', 'path': json_path(attr)})
            continue
        path, value = split_and_deserialize(attr)
        ops.append({'op': op, 'path': json_path(path), 'value': value})
    return ops


def add_fields_argument(parser, valid_fields):
    parser.add_argument(
        '--fields', nargs='+', action='append', default=[],
        metavar='<field>',
        help='Fields to ask the server for (one or more, may be '
             'repeated). Valid: %s.' % ', '.join(valid_fields))
