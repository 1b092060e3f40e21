"""Microversions of the Placement API.

``VERSIONS`` is the one canonical list; ``microversion_middleware`` puts
the requested version, a ``microversion_parse.Version``, in
``environ[MICROVERSION_ENVIRON]``. Handlers gate behaviour with
``version.matches(min, max)``, with ``version_handler`` (several variants of
one handler) or with ``raise_http_status_code_if_not_version``.
"""

import collections
import functools

import microversion_parse
import webob.exc

SERVICE_TYPE = 'placement'
MICROVERSION_ENVIRON = '%s.microversion' % SERVICE_TYPE
# Response header names, as the middleware emits them.
HEADER = microversion_parse.STANDARD_HEADER
VERSIONED_METHODS = collections.defaultdict(list)

# One line per version: what it added. Keep in order; append only.
VERSIONS = [
    '1.0',   # initial: providers, inventories, allocations, usages
    '1.1',   # provider aggregates
    '1.2',   # custom resource classes
    '1.3',   # member_of query parameter on GET /resource_providers
    '1.4',   # resources query parameter on GET /resource_providers
    '1.5',   # DELETE /resource_providers/{uuid}/inventories
    '1.6',   # traits and provider traits
    '1.7',   # PUT /resource_classes/{name} creates or validates, no body
    '1.8',   # project_id and user_id required when writing allocations
    '1.9',   # GET /usages
    '1.10',  # GET /allocation_candidates
    '1.11',  # allocations link on providers
    '1.12',  # PUT allocations takes the dict format
    '1.13',  # POST /allocations for several consumers
    '1.14',  # nested providers: parent_provider_uuid, in_tree
    '1.15',  # last-modified and cache-control headers
    '1.16',  # limit on GET /allocation_candidates
    '1.17',  # required (traits) on GET /allocation_candidates
    '1.18',  # required (traits) on GET /resource_providers
    '1.19',  # aggregates with provider generation
    '1.20',  # POST /resource_providers returns the provider
    '1.21',  # member_of on GET /allocation_candidates
    '1.22',  # forbidden traits (!TRAIT)
    '1.23',  # code field in error bodies
    '1.24',  # repeated member_of parameters
    '1.25',  # granular resource requests (numbered groups)
    '1.26',  # inventory with reserved equal to total
    '1.27',  # provider_summaries include all resource classes
    '1.28',  # consumer generations on allocations
    '1.29',  # nested providers in allocation candidates
    '1.30',  # POST /reshaper
    '1.31',  # in_tree on GET /allocation_candidates
    '1.32',  # forbidden aggregates (member_of=!)
    '1.33',  # group suffixes of any string
    '1.34',  # mappings in allocation requests
    '1.35',  # root_required on GET /allocation_candidates
    '1.36',  # same_subtree on GET /allocation_candidates
    '1.37',  # consumer_generation with mappings in POST /allocations
    '1.38',  # consumer types
    '1.39',  # in: syntax for required traits, repeated required
]


def max_version_string():
    return VERSIONS[-1]


def min_version_string():
    return VERSIONS[0]


def parse_version_string(version_string):
    """A ``microversion_parse.Version`` from "X.Y" (TypeError if bad)."""
    return microversion_parse.parse_version_string(version_string)


def extract_version(headers):
    """The requested version, bounded by VERSIONS.

    :raises ValueError: the version is outside VERSIONS (406).
    :raises TypeError: the header cannot be parsed (400).
    """
    # The returned Version knows VERSIONS' bounds, so matches() works
    # without arguments.
    return microversion_parse.extract_version(headers, SERVICE_TYPE,
                                              VERSIONS)


def _version_key(version_string):
    return parse_version_string(version_string)


def version_handler(min_ver, max_ver=None, status_code=404):
    """Select one of several same-named handler variants by version.

    Decorate each variant; the request's version picks the variant whose
    ``[min_ver, max_ver]`` covers it. If none does, ``status_code``
    (404 by default, as for an unknown URL) is raised.
    """
    def decorator(func):
        name = '%s.%s' % (func.__module__, func.__qualname__)
        low = _version_key(min_ver)
        high = _version_key(max_ver or max_version_string())
        VERSIONED_METHODS[name].append((low, high, func))

        @functools.wraps(func)
        def decorated(req, *args, **kwargs):
            want = req.environ[MICROVERSION_ENVIRON]
            for low_v, high_v, variant in VERSIONED_METHODS[name]:
                if want.matches(low_v, high_v):
                    return variant(req, *args, **kwargs)
            raise webob.exc.status_map[status_code]()
        return decorated
    return decorator


def raise_http_status_code_if_not_version(req, status_code, min_version,
                                          max_version=None):
    """Raise ``status_code`` unless the request is within the versions.

    ``min_version`` and ``max_version`` are "X.Y" strings or tuples.
    """
    if isinstance(min_version, str):
        min_version = _version_key(min_version)
    elif isinstance(min_version, tuple):
        min_version = microversion_parse.Version(*min_version)
    if max_version is None:
        max_version = _version_key(max_version_string())
    elif isinstance(max_version, str):
        max_version = _version_key(max_version)
    elif isinstance(max_version, tuple):
        max_version = microversion_parse.Version(*max_version)
    want = req.environ[MICROVERSION_ENVIRON]
    if not want.matches(min_version, max_version):
        raise webob.exc.status_map[status_code]()
