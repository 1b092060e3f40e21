"""``alloc allocation candidate list``: where would these resources fit?
``alloc allocation candidate explain``: and if nowhere, why not?

The options follow osc-placement's ``openstack allocation candidate
list``: ``--resource``, ``--required``, ``--forbidden``, ``--member-of``
and ``--in-tree`` describe the unsuffixed request group; ``--group S``
starts a granular group (suffix ``S``) to which the options after it
belong, and ``--group-policy`` says whether groups may share providers.
Both commands take the same options and send the same query; ``explain``
adds ``explain=true`` and shows the server's explanation.
"""

import argparse
import shlex

from cliff import lister

from alloc_framework.cli import common

URL = '/allocation_candidates'
FIELDS = ('#', 'allocation', 'resource provider',
          'inventory used/capacity', 'traits')
# The options that belong to the group in force when they appear.
GROUPED = ('resource', 'required', 'forbidden', 'member_of', 'in_tree')


class _GroupAction(argparse.Action):
    """Start a new request group: later grouped options belong to it."""

    def __call__(self, parser, namespace, value, option_string=None):
        groups = _groups(namespace)
        if value in groups:
            raise argparse.ArgumentError(
                self, 'group %r is given more than once' % value)
        groups[value] = {}
        namespace._current_group = value


class _GroupedAppend(argparse.Action):
    """Append to the option's list in the group in force."""

    def __call__(self, parser, namespace, value, option_string=None):
        group = _groups(namespace)[getattr(namespace, '_current_group', '')]
        group.setdefault(self.dest, []).append(value)


def _groups(namespace):
    if getattr(namespace, '_groups', None) is None:
        namespace._groups = {'': {}}
    return namespace._groups


def _query(groups, group_policy, limit):
    """The query string pairs of ``groups`` ({suffix: {option: values}})."""
    params = []
    for suffix, options in groups.items():
        resources = options.get('resource', [])
        if resources:
            # The wire form is CLASS:AMOUNT; the command takes CLASS=AMOUNT
            # as osc-placement does.
            params.append(('resources' + suffix, ','.join(
                resource.replace('=', ':', 1) for resource in resources)))
        required = options.get('required', []) + [
            '!' + trait for trait in options.get('forbidden', [])]
        if required:
            params.append(('required' + suffix, ','.join(required)))
        for member_of in options.get('member_of', []):
            params.append(('member_of' + suffix, member_of))
        for in_tree in options.get('in_tree', []):
            params.append(('in_tree' + suffix, in_tree))
    if group_policy:
        params.append(('group_policy', group_policy))
    if limit is not None:
        params.append(('limit', str(limit)))
    return params


def _amounts(resources):
    return ','.join('%s=%s' % (rc, resources[rc]) for rc in sorted(resources))


def _requests(candidate):
    """``{provider uuid: resources}`` of one candidate, in either form."""
    allocations = candidate['allocations']
    if isinstance(allocations, list):  # before 1.12
        return {item['resource_provider']['uuid']: item['resources']
                for item in allocations}
    return {rp: entry['resources'] for rp, entry in allocations.items()}


def rows(body):
    """The table of a ``GET /allocation_candidates`` answer.

    One row per provider of each candidate: what the candidate takes from
    it, and that provider's usage and capacity of those classes.
    """
    summaries = body.get('provider_summaries', {})
    result = []
    for number, candidate in enumerate(body['allocation_requests'], 1):
        for rp_uuid, resources in sorted(_requests(candidate).items()):
            summary = summaries.get(rp_uuid, {})
            inventory = summary.get('resources', {})
            used = ','.join(
                '%s=%s/%s' % (rc, inventory[rc]['used'],
                              inventory[rc]['capacity'])
                for rc in sorted(resources) if rc in inventory)
            traits = ','.join(sorted(summary.get('traits', [])))
            result.append((number, _amounts(resources), rp_uuid, used,
                           traits))
    return result


class _CandidateQuery(common.VersionMixin, lister.Lister):
    """The options of a GET /allocation_candidates request."""

    min_version = '1.10'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            '--resource', metavar='<resource_class>=<amount>',
            action=_GroupedAppend, default=None,
            help='A resource class and amount to fit (repeatable).')
        parser.add_argument(
            '--required', metavar='<trait>', action=_GroupedAppend,
            default=None,
            help='A trait the providers must have (repeatable; from 1.39 '
                 'also in:T1,T2 for any of them).')
        parser.add_argument(
            '--forbidden', metavar='<trait>', action=_GroupedAppend,
            default=None,
            help='A trait the providers must not have (repeatable, 1.22).')
        parser.add_argument(
            '--member-of', metavar='<aggregate_uuid>',
            action=_GroupedAppend, default=None,
            help='Aggregates, comma-separated for any of them, or '
                 '!<uuid> to exclude one (1.21; repeatable 1.24; ! 1.32).')
        parser.add_argument(
            '--in-tree', metavar='<provider_uuid>', action=_GroupedAppend,
            default=None,
            help='Only providers in the tree of this provider (1.31).')
        parser.add_argument(
            '--group', metavar='<suffix>', action=_GroupAction,
            default=None,
            help='Start a granular request group (1.25): the options that '
                 'follow belong to it.')
        parser.add_argument(
            '--group-policy', choices=('none', 'isolate'),
            help='Whether granular groups may be served by the same '
                 'provider (none) or not (isolate); required with two or '
                 'more groups.')
        parser.add_argument(
            '--limit', metavar='<limit>', type=int,
            help='At most this many candidates (1.16).')
        return parser

    def query(self, parsed_args):
        """The query string pairs of the options, checked."""
        groups = _groups(parsed_args)
        if not any(options.get('resource') for options in groups.values()):
            raise common.CommandError(
                'At least one --resource is required.')
        for options in groups.values():
            for resource in options.get('resource', []):
                name, sep, amount = resource.partition('=')
                if not sep or not name or not amount:
                    raise common.CommandError(
                        '--resource expects RESOURCE_CLASS=AMOUNT, got %r'
                        % resource)
        if any(groups):
            self.require_version('1.25', '--group')
        if parsed_args.limit is not None:
            self.require_version('1.16', '--limit')
        return _query(groups, parsed_args.group_policy, parsed_args.limit)


class ListAllocationCandidate(_CandidateQuery):
    """List the allocation candidates of a request.

    Options after ``--group S`` belong to the granular request group of
    suffix ``S`` (microversion 1.25, string suffixes 1.33); the ones
    before any ``--group`` to the unsuffixed group.
    """

    def take_action(self, parsed_args):
        params = self.query(parsed_args)
        body = self.client().get(URL, params=params)
        if not body['allocation_requests']:
            # On stderr: the output stays a valid (empty) document.
            self.app.stderr.write(
                'No allocation candidates match this request. To see '
                'which requirement leaves none, run:\n  alloc allocation '
                'candidate explain %s\n' % _command_line(parsed_args))
        return FIELDS, rows(body)


# The command-line flag of each grouped option.
_FLAGS = {'resource': '--resource', 'required': '--required',
          'forbidden': '--forbidden', 'member_of': '--member-of',
          'in_tree': '--in-tree'}


def _command_line(parsed_args):
    """The request options of ``parsed_args``, quoted for a shell."""
    words = []
    for suffix, options in _groups(parsed_args).items():
        if suffix:
            words += ['--group', suffix]
        for name in GROUPED:
            for value in options.get(name, []):
                words += [_FLAGS[name], value]
    if parsed_args.group_policy:
        words += ['--group-policy', parsed_args.group_policy]
    if parsed_args.limit is not None:
        words += ['--limit', str(parsed_args.limit)]
    return ' '.join(shlex.quote(w) for w in words)


def explanation_rows(explanation):
    """The table of an ``explanation``: one row per step."""
    return [(_GROUP_LABELS.get(step['group'], step['group']),
             step['requirement'], step['count'], step['unit'])
            for step in explanation['steps']]


EXPLAIN_FIELDS = ('group', 'requirement', 'count', 'unit')
# How the steps of the unsuffixed group and of the whole request show
# (neither is a valid suffix).
_GROUP_LABELS = {'': '(unsuffixed)', None: '(request)'}
# Formats meant for programs: the summary sentence is left out.
_MACHINE_FORMATS = ('json', 'yaml', 'csv', 'value')


class ExplainAllocationCandidate(_CandidateQuery):
    """Explain which requirement of a request left no candidate.

    Takes the options of ``allocation candidate list``. One row per
    requirement, in the order they narrow: how many providers (granular
    group), provider trees (unsuffixed group, whole request) or
    candidates are left once it applies; then a summary naming the
    requirement that left none.
    """

    def take_action(self, parsed_args):
        params = self.query(parsed_args) + [('explain', 'true')]
        body = self.client().get(URL, params=params)
        self._summary = body['explanation']['summary']
        return EXPLAIN_FIELDS, explanation_rows(body['explanation'])

    def produce_output(self, parsed_args, column_names, data):
        result = super().produce_output(parsed_args, column_names, data)
        if parsed_args.formatter not in _MACHINE_FORMATS:
            self.app.stdout.write(self._summary + '\n')
        return result
