"""The pages of the dashboard: query string in, template and values out.

Each page function takes the :class:`app.Page` of the request, checks
its query string (``params``), makes a few calls into ``objects/`` and
returns the name of its template and the values it shows. No SQL here.
"""

import collections
import json
import shlex
import urllib.parse

from alloc_framework.api.dashboard import params
from alloc_framework.api.dashboard import tree_svg
from alloc_framework.common import exception as common_exc
from alloc_framework.drivers.allocation import placement as placement_backend
from alloc_framework.drivers.allocation import placement_drift
from alloc_framework.objects.baremetal import allocation as alloc_obj
from alloc_framework.objects.baremetal import conductor as conductor_obj
from alloc_framework.objects.baremetal import dashboard_queries as bm
from alloc_framework.objects.baremetal import deferred_action as action_obj
from alloc_framework.objects.baremetal import node as node_obj
from alloc_framework.objects import capacity
from alloc_framework.objects.placement import dashboard_queries as rp
from alloc_framework.objects.placement import exception
from alloc_framework.objects.placement import usage

# The granular groups of the "what fits" form, besides the unsuffixed one.
FIT_SUFFIXES = ('', '1', '2', '3')
FIT_FIELDS = ('resources', 'required', 'forbidden', 'member_of', 'in_tree')
# Candidates shown when the form gives no limit.
DEFAULT_FIT_LIMIT = 20

TROUBLE_LISTS = {
    'over-capacity': 'Providers over capacity',
    'stuck': 'Allocations stuck in allocating',
    'error': 'Allocations in error',
    'maintenance': 'Nodes in maintenance',
    'claims': 'Placement allocations without a node allocation of ours',
    'drift': 'Nodes whose providers differ from the node',
}


def _placement_backend(conf):
    return conf.allocation.backend == 'placement'


def overview(page):
    params.parse(page.req, {})
    ctx = page.context
    classes = capacity.placement_capacity(ctx)
    baremetal = bm.has_baremetal(ctx)
    trouble = [('over-capacity', capacity.over_capacity_count(ctx))]
    if baremetal:
        by_state = capacity.allocations_by_state(ctx)
        trouble += [
            ('stuck', bm.count_stuck_allocations(
                ctx, page.conf.dashboard.stuck_after)),
            ('error', by_state.get(alloc_obj.ERROR, 0)),
            ('maintenance', bm.count_maintenance_nodes(ctx)),
            # Checked a page of nodes at a time (see trouble): not counted.
            ('drift', None),
            ('claims', bm.count_foreign_claims(
                ctx, placement_backend.NODE_TRAIT)),
        ]
    return 'overview.html', {
        'classes': classes,
        'trouble': [(kind, TROUBLE_LISTS[kind], count)
                    for kind, count in trouble],
        'baremetal': baremetal,
        'placement_backend': _placement_backend(page.conf),
    }


_SEARCH_FIELDS = {'name': params.text, 'uuid': params.uuid,
                  'trait': params.name, 'aggregate': params.uuid,
                  'resource_class': params.name,
                  'after': params.integer(0, 2 ** 62)}


def providers(page):
    query = params.parse(page.req, _SEARCH_FIELDS)
    after = query.pop('after', None)
    try:
        found = rp.search_providers(page.context, page.page_size,
                                    after=after, **query)
    except exception.TraitNotFound:
        raise params.BadParam('trait', 'no such trait')
    except exception.ResourceClassNotFound:
        raise params.BadParam('resource_class', 'no such resource class')
    return 'providers.html', {
        'query': query, 'found': found,
        'next_url': page.url('providers', after=found.next, **query)
        if found.next is not None else None,
    }


def provider(page, uuid):
    uuid = params.uuid('uuid', uuid)
    query = params.parse(page.req, {'after': params.uuid})
    try:
        roots, sharing, truncated = rp.provider_tree(page.context, uuid)
    except exception.ResourceProviderNotFound:
        raise page.not_found('No resource provider %s.' % uuid)
    consumers = rp.tree_consumers(page.context, uuid, page.page_size,
                                  after=query.get('after'))
    return 'provider.html', {
        'picture': tree_svg.layout(roots, sharing, uuid),
        'box_width': tree_svg.BOX_WIDTH, 'box_height': tree_svg.BOX_HEIGHT,
        'bar_width': tree_svg.BAR_WIDTH, 'max_boxes': tree_svg.MAX_BOXES,
        'uuid': uuid, 'roots': roots, 'sharing': sharing,
        'truncated': truncated, 'max_tree': rp.MAX_TREE,
        'consumers': consumers,
        'next_url': page.url('providers/' + uuid, after=consumers.next)
        if consumers.next is not None else None,
    }


def _fit_fields():
    fields = {'group_policy': params.choice('none', 'isolate'),
              'limit': params.integer(1, 1000)}
    checks = {'resources': params.resources, 'required': params.names,
              'forbidden': params.names, 'member_of': params.uuids,
              'in_tree': params.uuid}
    for suffix in FIT_SUFFIXES:
        for field in FIT_FIELDS:
            fields[field + suffix] = checks[field]
    return fields


def fit_request(query):
    """The API query pairs and the ``alloc`` arguments of a form."""
    pairs = []
    argv = []
    for suffix in FIT_SUFFIXES:
        if not any(query.get(f + suffix) for f in FIT_FIELDS):
            continue
        if suffix:
            argv += ['--group', suffix]
        if 'resources' + suffix in query:
            pairs.append(('resources' + suffix, query['resources' + suffix]))
            for item in query['resources' + suffix].split(','):
                argv += ['--resource', item.replace(':', '=')]
        traits = list(query.get('required' + suffix, []))
        for trait in traits:
            argv += ['--required', trait]
        for trait in query.get('forbidden' + suffix, []):
            traits.append('!' + trait)
            argv += ['--forbidden', trait]
        if traits:
            pairs.append(('required' + suffix, ','.join(traits)))
        aggs = query.get('member_of' + suffix)
        if aggs:
            pairs.append(('member_of' + suffix, 'in:' + ','.join(aggs)
                          if len(aggs) > 1 else aggs[0]))
            argv += ['--member-of', ','.join(aggs)]
        if 'in_tree' + suffix in query:
            pairs.append(('in_tree' + suffix, query['in_tree' + suffix]))
            argv += ['--in-tree', query['in_tree' + suffix]]
    if 'group_policy' in query:
        pairs.append(('group_policy', query['group_policy']))
        argv += ['--group-policy', query['group_policy']]
    limit = query.get('limit', DEFAULT_FIT_LIMIT)
    pairs.append(('limit', str(limit)))
    argv += ['--limit', str(limit)]
    return pairs, argv


def _candidates(page, url):
    status, body = page.call_api(url)
    if status == 400:
        raise params.BadParam('request', body['errors'][0]['detail'])
    if status != 200:
        raise page.error(status, body['errors'][0]['detail'])
    return body


def fits(page):
    query = params.parse(page.req, _fit_fields())
    values = {'query': query, 'suffixes': FIT_SUFFIXES, 'asked': False,
              'default_limit': DEFAULT_FIT_LIMIT}
    if not any(k for k in query if k not in ('group_policy', 'limit')):
        return 'fits.html', values
    pairs, argv = fit_request(query)
    api_url = '/allocation_candidates?' + urllib.parse.urlencode(pairs)
    # The explanation costs more than the search: asked for only when
    # nothing fits.
    body = _candidates(page, api_url)
    if not body['allocation_requests']:
        body = _candidates(page, api_url + '&explain=true')
    summaries = body['provider_summaries']
    names = rp.provider_names(page.context, set(summaries))
    candidates = []
    for request in body['allocation_requests']:
        rows = []
        for rp_uuid, alloc in sorted(request['allocations'].items()):
            summary = summaries.get(rp_uuid, {}).get('resources', {})
            rows.append((rp_uuid, names.get(rp_uuid), [
                (rc, amount, summary.get(rc, {}).get('used'),
                 summary.get(rc, {}).get('capacity'))
                for rc, amount in sorted(alloc['resources'].items())]))
        candidates.append({'providers': rows,
                           'mappings': request.get('mappings', {})})
    values.update({
        'asked': True, 'candidates': candidates,
        'explanation': body.get('explanation'),
        'api_url': api_url,
        'list_command': shlex.join(
            ['alloc', 'allocation', 'candidate', 'list'] + argv),
        'explain_command': shlex.join(
            ['alloc', 'allocation', 'candidate', 'explain'] + argv),
        'raw': json.dumps(body.get('explanation'), indent=1),
    })
    return 'fits.html', values


_BAREMETAL_FIELDS = {
    'allocation_state': params.choice(*alloc_obj.STATES),
    'allocations_after': params.integer(0, 2 ** 62),
    'action_state': params.choice(*action_obj.STATES),
    'actions_after': params.integer(0, 2 ** 62),
}


def baremetal(page):
    query = params.parse(page.req, _BAREMETAL_FIELDS)
    ctx = page.context
    values = {'query': query, 'reached': bm.has_baremetal(ctx),
              'backend': page.conf.allocation.backend}
    if not values['reached']:
        return 'baremetal.html', values
    timeout = page.conf.conductor.heartbeat_timeout
    allocations = bm.list_allocations(
        ctx, page.page_size, after=query.get('allocations_after'),
        state=query.get('allocation_state'))
    actions = bm.list_actions(
        ctx, page.page_size, after=query.get('actions_after'),
        state=query.get('action_state'))
    nodes = capacity.nodes_by_state(ctx)
    states = sorted({s for s, _rc in nodes}, key=str)
    classes = sorted({rc for _s, rc in nodes}, key=str)
    keep = {k: v for k, v in query.items() if not k.endswith('_after')}
    values.update({
        'node_states': states, 'node_classes': classes, 'nodes': nodes,
        'allocation_counts': capacity.allocations_by_state(ctx),
        'allocation_states': alloc_obj.STATES,
        'action_counts': capacity.deferred_actions_by_state(ctx),
        'action_states': action_obj.STATES,
        'allocations': allocations, 'actions': actions,
        'conductors': [(c, c.is_alive(timeout)) for c in
                       conductor_obj.Conductor.list(ctx)],
        'heartbeat_timeout': timeout, 'now': page.now,
        'next_allocations': page.url(
            'baremetal', allocations_after=allocations.next, **keep)
        if allocations.next is not None else None,
        'next_actions': page.url(
            'baremetal', actions_after=actions.next, **keep)
        if actions.next is not None else None,
    })
    return 'baremetal.html', values


def trouble(page, kind):
    if kind not in TROUBLE_LISTS:
        raise page.not_found('No trouble list %s.' % kind)
    key = {'claims': params.text, 'drift': params.uuid}.get(
        kind, params.integer(0, 2 ** 62))
    query = params.parse(page.req, {'after': key})
    ctx = page.context
    after = query.get('after')
    size = page.page_size
    values = {'kind': kind, 'title': TROUBLE_LISTS[kind], 'now': page.now,
              'placement_backend': _placement_backend(page.conf),
              'node_trait': placement_backend.NODE_TRAIT}
    if kind == 'over-capacity':
        rows = usage.over_capacity_providers(ctx)
        start = after or 0
        found = rp.Page(rows[start:start + size],
                        start + size if len(rows) > start + size else None)
    elif kind in ('stuck', 'error'):
        found = bm.list_allocations(
            ctx, size, after=after,
            state=alloc_obj.ERROR if kind == 'error' else None,
            stuck_after=(page.conf.dashboard.stuck_after
                         if kind == 'stuck' else None))
    elif kind == 'maintenance':
        found = bm.list_maintenance_nodes(ctx, size, after=after)
    elif kind == 'claims':
        found = bm.foreign_claims(ctx, placement_backend.NODE_TRAIT, size,
                                  after=after)
    else:
        found = _drift(page, after)
        values['checked'] = found.checked
    values['found'] = found
    values['next_url'] = (page.url('trouble/' + kind, after=found.next)
                          if found.next is not None else None)
    return 'trouble.html', values


DriftPage = collections.namedtuple('DriftPage', ('rows', 'next', 'checked'))
"""A page of the drift list: the findings among ``checked`` nodes."""


def _drift(page, after):
    """The ``missing provider`` and ``stale provider`` findings of the
    next page of nodes (by id, after the node of UUID ``after``), by the
    rule of ``alloc-manage placement drift`` on the trees of the
    database."""
    ctx = page.context
    try:
        nodes = node_obj.Node.list(ctx, limit=page.page_size + 1,
                                   marker=after)
    except common_exc.InvalidParameterValue:
        raise params.BadParam('after', 'no such node')
    more = len(nodes) > page.page_size
    nodes = nodes[:page.page_size]
    backend = page.app.placement_backend
    trees = bm.node_provider_trees(ctx, [n.uuid for n in nodes],
                                   backend.node_trait)
    try:
        rows = placement_drift.providers_drift(backend, nodes, trees)
    except common_exc.DriverLoadError as exc:
        # The nodes' shapes come from their hardware types: a type this
        # process cannot load (a conductor would not start either) leaves
        # nothing to compare with.
        raise page.error(503, 'The nodes cannot be compared with their '
                              'providers: %s' % exc)
    return DriftPage(rows, nodes[-1].uuid if more else None, len(nodes))
