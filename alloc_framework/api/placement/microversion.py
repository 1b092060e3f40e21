"""Microversions of the Placement API and the one way to gate on them.

``VERSIONS`` is the canonical list; ``microversion_middleware`` puts the
requested version, a ``microversion_parse.Version`` bounded by that list,
in ``environ[MICROVERSION_ENVIRON]``.

Every gate names the version that introduced the behaviour with one of
the constants below and asks the request's version whether it reaches
it::

    want = microversion.request_version(req)
    if want.matches(microversion.CACHE_HEADERS):
        ...

Where something differs by version (a schema, a handler variant),
``newest`` picks from ``(version, value)`` pairs, newest first::

    body_schema = microversion.newest(want, (
        (microversion.CONSUMER_TYPES, schema.V1_38),
        (microversion.INITIAL, schema.V1_0)))

``version_handler`` applies that same choice to whole handlers: it picks
among same-named variants of a handler, or answers 404 (or another
status) to requests older than the first variant.
"""

import collections
import functools

import microversion_parse
import webob.exc

SERVICE_TYPE = 'placement'
MICROVERSION_ENVIRON = '%s.microversion' % SERVICE_TYPE
# Response header names, as the middleware emits them.
HEADER = microversion_parse.STANDARD_HEADER
# Variants of each versioned handler: {qualified name: [(version, func)]}.
VERSIONED_METHODS = collections.defaultdict(list)

# The canonical list: one line per version, what it added. Keep in order;
# append only. The constants below name these versions for the gates and
# say nothing more: what a version brought is written here only.
VERSIONS = [
    '1.0',   # initial: providers, inventories, allocations, usages
    '1.1',   # GET/PUT /resource_providers/{uuid}/aggregates
    '1.2',   # /resource_classes: custom resource classes
    '1.3',   # member_of query parameter on GET /resource_providers
    '1.4',   # resources query parameter on GET /resource_providers
    '1.5',   # DELETE /resource_providers/{uuid}/inventories
    '1.6',   # /traits and /resource_providers/{uuid}/traits
    '1.7',   # PUT /resource_classes/{name} creates or confirms, no body
    '1.8',   # project_id and user_id required when writing allocations
    '1.9',   # GET /usages for a project (and user)
    '1.10',  # GET /allocation_candidates
    '1.11',  # allocations link on providers
    '1.12',  # PUT allocations takes the dict format GET returns
    '1.13',  # POST /allocations for several consumers
    '1.14',  # nested providers: parent/root_provider_uuid, in_tree
    '1.15',  # last-modified and cache-control: no-cache headers
    '1.16',  # limit on GET /allocation_candidates
    '1.17',  # required= on GET /allocation_candidates; traits in summaries
    '1.18',  # required (traits) on GET /resource_providers
    '1.19',  # aggregates with provider generation, 409 when stale
    '1.20',  # POST /resource_providers returns the provider (200)
    '1.21',  # member_of on GET /allocation_candidates
    '1.22',  # forbidden traits (required=!TRAIT)
    '1.23',  # code field in error bodies
    '1.24',  # repeated member_of parameters
    '1.25',  # granular request groups (resourcesN, requiredN, member_ofN)
    '1.26',  # inventory with reserved equal to total
    '1.27',  # provider_summaries include all resource classes
    '1.28',  # consumer generations on allocations
    '1.29',  # nested providers in allocation candidates and summaries
    '1.30',  # POST /reshaper
    '1.31',  # in_tree (and in_treeN) on GET /allocation_candidates
    '1.32',  # forbidden aggregates (member_of=!uuid, member_of=!in:...)
    '1.33',  # request group suffixes of any string
    '1.34',  # mappings in allocation requests and bodies
    '1.35',  # root_required on GET /allocation_candidates
    '1.36',  # same_subtree on GET /allocation_candidates; resourceless groups
    '1.37',  # re-parenting providers with PUT /resource_providers/{uuid}
    '1.38',  # consumer types
    '1.39',  # in: syntax for required traits, repeated required
]

# The versions handlers gate on, named after what they introduced (the
# Placement API reference's "REST API Version History"); VERSIONS says
# what each one brought.
INITIAL = (1, 0)
AGGREGATES = (1, 1)
RESOURCE_CLASSES = (1, 2)
MEMBER_OF = (1, 3)
RESOURCES_FILTER = (1, 4)
DELETE_INVENTORIES = (1, 5)
TRAITS = (1, 6)
RESOURCE_CLASS_PUT_CREATES = (1, 7)
ALLOCATION_OWNER = (1, 8)
USAGES = (1, 9)
ALLOCATION_CANDIDATES = (1, 10)
ALLOCATIONS_LINK = (1, 11)
ALLOCATIONS_DICT = (1, 12)
POST_ALLOCATIONS = (1, 13)
NESTED_PROVIDERS = (1, 14)
CACHE_HEADERS = (1, 15)
CANDIDATES_LIMIT = (1, 16)
CANDIDATES_REQUIRED = (1, 17)
REQUIRED_TRAITS = (1, 18)
AGGREGATES_GENERATION = (1, 19)
POST_PROVIDER_BODY = (1, 20)
CANDIDATES_MEMBER_OF = (1, 21)
FORBIDDEN_TRAITS = (1, 22)
ERROR_CODES = (1, 23)
MULTIPLE_MEMBER_OF = (1, 24)
GRANULAR_GROUPS = (1, 25)
RESERVED_EQUALS_TOTAL = (1, 26)
SUMMARIES_ALL_RESOURCES = (1, 27)
CONSUMER_GENERATIONS = (1, 28)
CANDIDATES_NESTED = (1, 29)
RESHAPER = (1, 30)
CANDIDATES_IN_TREE = (1, 31)
FORBIDDEN_AGGREGATES = (1, 32)
STRING_SUFFIXES = (1, 33)
ALLOCATION_MAPPINGS = (1, 34)
ROOT_REQUIRED = (1, 35)
SAME_SUBTREE = (1, 36)
REPARENTING = (1, 37)
CONSUMER_TYPES = (1, 38)
ANY_TRAITS = (1, 39)


def max_version_string():
    return VERSIONS[-1]


def min_version_string():
    return VERSIONS[0]


def extract_version(headers):
    """The requested version, bounded by VERSIONS.

    :raises ValueError: the version is outside VERSIONS (406).
    :raises TypeError: the header cannot be parsed (400).
    """
    # The returned Version knows VERSIONS' bounds, so matches() works
    # with a minimum only.
    return microversion_parse.extract_version(headers, SERVICE_TYPE,
                                              VERSIONS)


def request_version(req):
    """The microversion of ``req`` (set by the middleware)."""
    return req.environ[MICROVERSION_ENVIRON]


def newest(want, choices):
    """The value of the newest of ``choices`` that ``want`` reaches.

    :param want: a request's version (``request_version(req)``).
    :param choices: ``(version, value)`` pairs, newest first.
    :returns: the value, or None when ``want`` reaches none of them.
    """
    for since, value in choices:
        if want.matches(since):
            return value
    return None


def version_handler(min_version, status_code=404):
    """Serve a handler from ``min_version`` on, one of several variants.

    Decorate each same-named variant with the version that introduced
    it: a request is served by the newest variant its version reaches.
    A request older than every variant gets ``status_code`` (404 by
    default, as for an unknown URL).
    """
    def decorator(func):
        name = '%s.%s' % (func.__module__, func.__qualname__)
        variants = VERSIONED_METHODS[name]
        variants.append((min_version, func))
        # Newest first: the first variant the request reaches wins.
        variants.sort(key=lambda variant: variant[0], reverse=True)

        @functools.wraps(func)
        def decorated(req, *args, **kwargs):
            variant = newest(request_version(req), variants)
            if variant is None:
                raise webob.exc.status_map[status_code]()
            return variant(req, *args, **kwargs)
        return decorated
    return decorator
