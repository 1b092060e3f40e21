"""Handler of GET /allocation_candidates.

``explain=true`` (an extension of this project, at every version) adds an
``explanation`` member to the answer: how many providers each requirement
left (see ``candidate_explanation.explain_candidates``), read in the
transaction of the search it explains. Without it the answer is the
reference's.

The search and the encoding of its answer stop at ``[placement]
candidates_deadline`` (503 ``placement.query.deadline``), or as soon as
the client closes its connection when the server lets us see it
(``common.deadline``; the database side is ``db.deadline``).
"""

import re

from oslo_log import log
from oslo_utils import timeutils
import webob.exc

from alloc_framework.api.placement import candidates_json
from alloc_framework.api.placement import content
from alloc_framework.api.placement import errors
from alloc_framework.api.placement.handlers import helpers
from alloc_framework.api.placement import microversion
from alloc_framework.api.placement.policies import \
    allocation_candidate as policies
from alloc_framework.api.placement import query
from alloc_framework.api.placement import response
from alloc_framework.api.placement.schemas import \
    allocation_candidate as schema
from alloc_framework.api.placement import wsgi_wrapper
from alloc_framework.common import deadline as deadline_mod
from alloc_framework.common import exception as common_exc
from alloc_framework.common import wsgi_service
from alloc_framework.objects.placement import allocation_candidate as ac_obj
from alloc_framework.objects.placement import attribute_cache
from alloc_framework.objects.placement import candidate_explanation
from alloc_framework.objects.placement import exception

LOG = log.getLogger(__name__)

_PREFIXES = ('resources', 'required', 'member_of', 'in_tree')
_KEY = re.compile(r'^(%s)(%s)?$' % ('|'.join(_PREFIXES), schema.GROUP_PAT))
_KEY_1_33 = re.compile(r'^(%s)(%s)?$' % ('|'.join(_PREFIXES),
                                         schema.GROUP_PAT_1_33))


def _schema(want):
    return microversion.newest(want, (
        (microversion.SAME_SUBTREE, schema.GET_SCHEMA_1_36),
        (microversion.ROOT_REQUIRED, schema.GET_SCHEMA_1_35),
        (microversion.STRING_SUFFIXES, schema.GET_SCHEMA_1_33),
        (microversion.CANDIDATES_IN_TREE, schema.GET_SCHEMA_1_31),
        (microversion.GRANULAR_GROUPS, schema.GET_SCHEMA_1_25),
        (microversion.CANDIDATES_MEMBER_OF, schema.GET_SCHEMA_1_21),
        (microversion.CANDIDATES_REQUIRED, schema.GET_SCHEMA_1_17),
        (microversion.CANDIDATES_LIMIT, schema.GET_SCHEMA_1_16),
        (microversion.ALLOCATION_CANDIDATES, schema.GET_SCHEMA_1_10)))


def _parse_groups(req, want):
    """``{suffix: RequestGroup}`` from the query string."""
    pattern = (_KEY_1_33 if want.matches(microversion.STRING_SUFFIXES)
               else _KEY)
    allow_forbidden = want.matches(microversion.FORBIDDEN_TRAITS)
    allow_any = want.matches(microversion.ANY_TRAITS)
    groups = {}
    for key, value in req.GET.items():
        match = pattern.match(key)
        if not match:
            continue
        prefix, suffix = match.groups()
        suffix = suffix or ''
        group = groups.setdefault(suffix, ac_obj.RequestGroup(suffix))
        if prefix == 'resources':
            group.resources = query.normalize_resources_qs_param(value)
        elif prefix == 'required':
            group.required_traits, group.forbidden_traits = (
                query.normalize_traits_qs_params(
                    req, suffix, allow_forbidden=allow_forbidden,
                    allow_any_traits=allow_any))
        elif prefix == 'member_of':
            group.member_of, group.forbidden_aggs = (
                query.normalize_member_of_qs_params(req, suffix))
        else:
            group.in_tree = helpers.canonical_uuid(
                query.normalize_in_tree_qs_params(value))
    return groups


def _check_groups(groups, same_subtrees, want):
    """The reference's 400s for inconsistent groups."""
    if want.matches(microversion.SAME_SUBTREE):
        resourceless = [s for s, g in groups.items() if not g.resources]
        if len(resourceless) == len(groups):
            raise webob.exc.HTTPBadRequest(
                'There must be at least one resources or resources[$S] '
                'parameter.', comment=errors.QUERYPARAM_MISSING_VALUE)
        in_subtrees = set().union(*same_subtrees)
        bad = [s for s in resourceless if s not in in_subtrees]
        if bad:
            raise webob.exc.HTTPBadRequest(
                'Resourceless suffixed group request should be specified '
                'in `same_subtree` query param: bad group(s) - %s.' % bad,
                comment=errors.QUERYPARAM_BAD_VALUE)
        bad = [s for s in in_subtrees if s not in groups]
        if bad:
            raise webob.exc.HTTPBadRequest(
                'Real suffixes should be specified in `same_subtree`: '
                '%(bad)s not found in %(all)s.'
                % {'bad': bad, 'all': list(groups)},
                comment=errors.QUERYPARAM_BAD_VALUE)
    else:
        orphans = ['required%s' % s for s, g in groups.items()
                   if g.required_traits and not g.resources]
        if orphans:
            raise webob.exc.HTTPBadRequest(
                'All traits parameters must be associated with resources.  '
                'Found the following orphaned traits keys: %s'
                % ', '.join(orphans))
        orphans = ['member_of%s' % s for s, g in groups.items()
                   if not g.resources and (g.member_of or g.forbidden_aggs)]
        if orphans:
            raise webob.exc.HTTPBadRequest(
                'All member_of parameters must be associated with '
                'resources. Found the following orphaned member_of '
                'keys: %s' % ', '.join(orphans))
        if not all(g.resources for g in groups.values()):
            raise webob.exc.HTTPBadRequest(
                'All request groups must specify resources.')
        if not groups:
            raise webob.exc.HTTPBadRequest(
                'At least one request group (`resources` or '
                '`resources{$S}`) is required.')
    if want.matches(microversion.FORBIDDEN_TRAITS):
        conflicts = []
        for suffix, group in groups.items():
            for any_of in group.required_traits:
                if any_of <= group.forbidden_traits:
                    conflicts.append('required%s: (%s)' % (
                        suffix, ', '.join(sorted(any_of))))
        if conflicts:
            raise webob.exc.HTTPBadRequest(
                'Conflicting required and forbidden traits found in the '
                'following traits keys: %s' % ', '.join(sorted(conflicts)))


def _request_wide(req, want):
    limit = req.GET.getall('limit')
    limit = int(limit[0]) if limit else None
    group_policy = (req.GET.getall('group_policy') or [None])[0]
    root_required = root_forbidden = None
    values = req.GET.getall('root_required')
    if values:
        if len(values) > 1:
            raise webob.exc.HTTPBadRequest(
                "Query parameter 'root_required' may be specified only "
                "once.", comment=errors.ILLEGAL_DUPLICATE_QUERYPARAM)
        root_required, root_forbidden = (
            query.normalize_traits_qs_param_to_legacy_value(
                values[0], allow_forbidden=True))
        conflicts = sorted(root_required & root_forbidden)
        if conflicts:
            raise webob.exc.HTTPBadRequest(
                'Conflicting required and forbidden traits found in '
                'root_required: %s' % ', '.join(conflicts),
                comment=errors.QUERYPARAM_BAD_VALUE)
    same_subtrees = []
    for value in req.GET.getall('same_subtree'):
        suffixes = {s.strip() for s in value.split(',')}
        if '' in suffixes:
            raise webob.exc.HTTPBadRequest(
                'Empty string (unsuffixed group) can not be specified in '
                '`same_subtree` ', comment=errors.QUERYPARAM_BAD_VALUE)
        same_subtrees.append(suffixes)
    return ac_obj.RequestWide(
        limit=limit, group_policy=group_policy, root_required=root_required,
        root_forbidden=root_forbidden, same_subtrees=same_subtrees,
        nested_aware=want.matches(microversion.CANDIDATES_NESTED))


def _explain(req):
    """Whether the request asks for an explanation (``explain=true``)."""
    values = req.GET.getall('explain')
    if len(values) > 1:
        raise webob.exc.HTTPBadRequest(
            "Query parameter 'explain' may be specified only once.",
            comment=errors.ILLEGAL_DUPLICATE_QUERYPARAM)
    if not values or values[0] == 'false':
        return False
    if values[0] != 'true':
        raise webob.exc.HTTPBadRequest(
            "Invalid value for query parameter 'explain': %r. Expected "
            "'true' or 'false'." % values[0],
            comment=errors.QUERYPARAM_BAD_VALUE)
    return True


# The fields of each step of an explanation, in order.
_STEP_FIELDS = ('group', 'requirement', 'count', 'unit')


def _explanation(explanation):
    return {
        'steps': [{field: getattr(step, field) for field in _STEP_FIELDS}
                  for step in explanation.steps],
        'summary': explanation.summary,
    }


def _summarised(providers, candidates, want):
    """The providers whose summaries the answer lists, in order."""
    if want.matches(microversion.CANDIDATES_NESTED):
        return list(providers.values())
    # Only the providers of the allocation requests.
    ids = set()
    for c in candidates:
        if c.provider is not None:
            # A SingleCandidate: no allocations to make.
            ids.add(c.provider.id)
        else:
            ids.update(rp.id for rp, _rc in c.allocations)
    return [rp for i, rp in providers.items() if i in ids]


def _encoder(context, summarised, groups, want):
    """The AnswerEncoder of an answer, with every name it needs looked up
    now: the answer may be written after the handler has returned."""
    rc_ids = set()
    trait_ids = set()
    for rp in summarised:
        rc_ids.update(rp.inventories)
        trait_ids |= rp.traits
    requested = set()
    for group in groups.values():
        requested |= set(group.resources)
    return candidates_json.AnswerEncoder(
        want, {i: attribute_cache.rc_name(context, i) for i in rc_ids},
        {i: attribute_cache.trait_name(context, i) for i in trait_ids},
        requested)


def _deadline(req, conf):
    """The Deadline of this request's search and encoding."""
    return deadline_mod.Deadline(
        conf.candidates_deadline, '[placement] candidates_deadline',
        client=req.environ.get(wsgi_service.CLIENT_CONNECTION))


def _stopped(req, exc):
    """The 503 of a request whose work was stopped (``exc`` says why)."""
    if isinstance(exc, common_exc.ClientGone):
        LOG.info('%s %s: the client went away; the allocation candidates '
                 'search was stopped', req.method, req.path_qs)
        code = errors.QUERY_CLIENT_GONE
    else:
        LOG.warning('%s %s: %s', req.method, req.path_qs, exc)
        code = errors.QUERY_DEADLINE
    return webob.exc.HTTPServiceUnavailable(str(exc), comment=code)


@wsgi_wrapper.PlacementWsgify
@microversion.version_handler(microversion.ALLOCATION_CANDIDATES)
@content.check_accept('application/json')
def list_allocation_candidates(req):
    """GET /allocation_candidates: allocation requests and the summaries
    of the providers they involve."""
    context = req.environ['placement.context']
    context.can(policies.LIST)
    want = microversion.request_version(req)
    query.validate_query_params(req, _schema(want))
    explain = _explain(req)
    wide = _request_wide(req, want)
    groups = _parse_groups(req, want)
    _check_groups(groups, wide.same_subtrees, want)
    if not wide.group_policy and sum(
            1 for g in groups.values() if g.use_same_provider) > 1:
        raise webob.exc.HTTPBadRequest(
            'The "group_policy" parameter is required when specifying '
            'more than one "resources{N}" parameter.')
    conf = context.config.placement
    deadline = _deadline(req, conf)
    try:
        candidates, providers, explanation = candidate_explanation.search(
            context, list(groups.values()), wide,
            max_candidates=conf.max_allocation_candidates,
            randomize=conf.randomize_allocation_candidates, explain=explain,
            deadline=deadline)
    except (common_exc.DeadlineExceeded, common_exc.ClientGone) as exc:
        raise _stopped(req, exc)
    except exception.ResourceClassNotFound as exc:
        raise webob.exc.HTTPBadRequest(
            'Invalid resource class in resources parameter: %s' % exc)
    except exception.TraitNotFound as exc:
        raise webob.exc.HTTPBadRequest(str(exc))
    summarised = _summarised(providers, candidates, want)
    encoder = _encoder(context, summarised, groups, want)
    extra = []
    if explain:
        extra.append(('explanation',
                      response.json_text(_explanation(explanation))))
    chunks = encoder.chunks(candidates, summarised, extra, deadline.check)
    # The first two chunks are written here, so that a deadline passed by
    # then is still a 503; an answer of one chunk is sent as it always
    # was (with its length), a longer one as it is written: the whole
    # text is never held at once.
    try:
        first = next(chunks)
        second = next(chunks, None)
    except (common_exc.DeadlineExceeded, common_exc.ClientGone) as exc:
        raise _stopped(req, exc)
    if second is None:
        stream = None
    else:
        stream = _stream(req, (first, second), chunks, deadline)
    return response.send_json_chunks(
        req, first, stream,
        last_modified=timeutils.utcnow(with_timezone=True))


def _stream(req, written, chunks, deadline):
    """Yield the chunks of an answer as bytes.

    The status is sent by then: a deadline passed while the answer is
    written is logged and stops it short (the server then closes the
    connection without ending the answer: the client sees it incomplete).
    """
    for chunk in written:
        yield chunk.encode('utf-8')
    try:
        for chunk in chunks:
            yield chunk.encode('utf-8')
    except (common_exc.DeadlineExceeded, common_exc.ClientGone):
        LOG.warning('%s %s: %s; the answer was cut short', req.method,
                    req.path_qs, deadline.error())
        raise
