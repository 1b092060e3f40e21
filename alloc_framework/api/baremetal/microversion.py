"""API versions of the bare metal API and the version negotiation.

Clients pick a version with the ``X-OpenStack-Ironic-API-Version`` header
(``1.N`` or ``latest``); without it the minimum version is used, as the
upstream bare metal service does. Every response under ``/v1`` names the
supported range and the version used.

``VERSIONS`` is the canonical list: one line per version that changed
behaviour we implement; ``UNCHANGED`` names the upstream versions in the
range that change only resources this service does not serve. Handlers
gate on the named constants below and nothing else, so a gate is always
greppable. The version table of ``doc/source/baremetal-api.rst`` is its
rendering for API users; a unit test keeps the two to the same versions.
"""

import re

from alloc_framework.api.baremetal import errors

HEADER = 'X-OpenStack-Ironic-API-Version'
MIN_HEADER = 'X-OpenStack-Ironic-API-Minimum-Version'
MAX_HEADER = 'X-OpenStack-Ironic-API-Maximum-Version'
# keystoneauth sends the generic header too; it is used when the specific
# one is absent.
GENERIC_HEADER = 'OpenStack-API-Version'
SERVICE_TYPE = 'baremetal'

# Minor versions (major is always 1) and what they brought.
VERSIONS = {
    1: 'initial version',
    5: 'node name',
    7: 'node clean_step',
    8: 'fields query parameter',
    9: 'filter nodes by provision_state',
    11: 'new nodes start in enroll',
    13: 'abort provision verb',
    15: 'manual cleaning (clean verb, clean_steps)',
    16: 'filter nodes by driver',
    21: 'node resource_class and filter',
    27: 'timeout of a power state change',
    30: 'driver details (detail and type on /v1/drivers, interfaces)',
    31: 'node per-interface fields (power, deploy, management, boot)',
    37: 'node traits',
    40: 'node bios_interface',
    42: 'node fault and filter',
    43: 'detail query parameter on /v1/nodes',
    44: 'node deploy_step',
    46: 'node conductor_group and filter',
    47: 'node automated_clean',
    48: 'node protected and protected_reason',
    49: 'node conductor field; /v1/conductors',
    50: 'node owner and filter',
    51: 'node description',
    52: 'allocations and node allocation_uuid',
    57: 'PATCH /v1/allocations/{allocation}',
    58: 'allocation backfill (node in the POST body)',
    60: 'allocation owner',
    61: 'node retired and retired_reason',
    65: 'node lessee and filter',
    73: 'deploy and undeploy provision verbs',
    77: 'fields query parameter on /v1/drivers',
    78: 'node history',
    79: 'an allocation prefers the node of its name',
    80: 'project admins create and delete the nodes they own',
    81: 'GET /v1/nodes/{node}/inventory',
    82: 'node shard, shard and sharded filters, GET /v1/shards',
    83: 'node parent_node, /v1/nodes/{node}/children, child nodes filters',
    84: 'POST /v1/continue_inspection (ramdisk inspection call-back)',
    85: 'unhold provision verb',
    86: 'node firmware_interface; GET /v1/nodes/{node}/firmware',
    87: 'service provision verb (service_steps); node service_step',
    91: 'no .json suffix stripping: a trailing .json is part of the path',
    92: 'runbook attribute of the clean and service provision verbs',
    95: 'node disable_power_off: the node is never powered off',
    98: 'JSON patch keys with ~ or / (the ~0 and ~1 escapes of RFC 6901)',
    104: 'node instance_name (kept in step with instance_info display_name)'
         ' and filter',
    107: 'X-OpenStack-Request-Id named with OpenStack-Request-Id '
         '(sent at every version here)',
    108: 'disable_ramdisk attribute of the service provision verb',
    109: 'node health (read from the BMC by the power state sync)',
    110: 'abort of a node in wait call-back',
    113: 'project of node history events',
    114: 'vendor, model and serial_number of node firmware components',
    115: 'state, target_provision_state and duration_seconds of node '
         'history events',
}

# Upstream versions that change only resources this service does not
# serve (see "Deliberately absent" in doc/source/baremetal-api.rst): they
# are supported and change nothing here.
UNCHANGED = {
    88: 'port name',
    89: 'virtual media attach and detach',
    90: 'OVN VTEP switches in port local_link_connection',
    93: 'virtual media read (GET /v1/nodes/{node}/vmedia)',
    94: 'ports created with the node name',
    96: 'inspection rules',
    97: 'port description',
    99: 'conductor group filter of ports and port groups',
    100: 'port vendor',
    101: 'port category',
    102: 'port group physical_network',
    103: 'port group category',
    105: 'OVN VTEP switches removed from port local_link_connection',
    106: 'shard filter of port groups',
    # Upstream's summaries name no change of 1.111 to anything served.
    111: 'no known change to the resources served here',
    112: 'runbook traits and description',
}

MIN_VERSION = (1, min(VERSIONS))
MAX_VERSION = (1, max(set(VERSIONS) | set(UNCHANGED)))

# The minor versions handlers gate on, named after what they introduced;
# VERSIONS says what each one brought.
NAME = 5
CLEAN_STEP = 7
FIELDS = 8
PROVISION_STATE_FILTER = 9
ENROLL = 11
ABORT = 13
MANUAL_CLEAN = 15
DRIVER_FILTER = 16
RESOURCE_CLASS = 21
POWER_TIMEOUT = 27
DRIVER_DETAILS = 30
INTERFACES = 31
TRAITS = 37
BIOS_INTERFACE = 40
FAULT = 42
DETAIL_QUERY = 43
DEPLOY_STEP = 44
CONDUCTOR_GROUP = 46
AUTOMATED_CLEAN = 47
PROTECTED = 48
CONDUCTOR = 49
CONDUCTORS = 49
OWNER = 50
DESCRIPTION = 51
ALLOCATIONS = 52
ALLOCATION_UPDATE = 57
ALLOCATION_BACKFILL = 58
ALLOCATION_OWNER = 60
RETIRED = 61
LESSEE = 65
DEPLOY_VERBS = 73
DRIVER_FIELDS = 77
NODE_HISTORY = 78
ALLOCATION_NODE_NAME = 79
PROJECT_CREATE_DELETE_NODE = 80
NODE_INVENTORY = 81
SHARDS = 82
CHILD_NODES = 83
CONTINUE_INSPECTION = 84
UNHOLD = 85
FIRMWARE = 86
SERVICE = 87
NO_JSON_SUFFIX = 91
RUNBOOK = 92
DISABLE_POWER_OFF = 95
PATCH_ESCAPES = 98
INSTANCE_NAME = 104
REQUEST_ID = 107
SERVICE_DISABLE_RAMDISK = 108
HEALTH = 109
ABORT_DEPLOY_WAIT = 110
HISTORY_PROJECT = 113
FIRMWARE_IDENTITY = 114
HISTORY_STATE = 115

_VERSION_RE = re.compile(r'^1\.[0-9]+$')


def version_string(version):
    return '%d.%d' % version


class Version:
    """The negotiated version of one request."""

    def __init__(self, minor):
        self.minor = minor

    def __ge__(self, minor):
        return self.minor >= minor

    def __lt__(self, minor):
        return self.minor < minor

    def __str__(self):
        return version_string((1, self.minor))

    def check(self, minor):
        """True when this request's version is at least 1.``minor``."""
        return self.minor >= minor


def _requested(headers):
    value = headers.get(HEADER)
    if value is None:
        generic = headers.get(GENERIC_HEADER)
        if generic:
            for part in generic.split(','):
                words = part.strip().split()
                if len(words) == 2 and words[0].lower() == SERVICE_TYPE:
                    value = words[1]
    return value


def negotiate(headers):
    """Return the Version asked for by ``headers``.

    :raises: HTTPError 400 for a malformed value, 406 for a version
        outside the supported range.
    """
    value = _requested(headers)
    if value is None:
        return Version(MIN_VERSION[1])
    value = value.strip()
    if value.lower() == 'latest':
        return Version(MAX_VERSION[1])
    if not _VERSION_RE.match(value):
        if re.match(r'^[0-9]+\.[0-9]+$', value):
            raise errors.HTTPError(406, _range_message(value),
                                   errors.VERSION_NOT_ACCEPTABLE)
        raise errors.HTTPError(
            400, 'Invalid value for %s header: %r. Expected "latest" or '
                 '"1.N".' % (HEADER, value), errors.VERSION_INVALID)
    minor = int(value.split('.')[1])
    if not MIN_VERSION[1] <= minor <= MAX_VERSION[1]:
        raise errors.HTTPError(406, _range_message(value),
                               errors.VERSION_NOT_ACCEPTABLE)
    return Version(minor)


def _range_message(value):
    """The text of a 406, worded as upstream's (it names the range)."""
    if value.split('.', 1)[0] != str(MIN_VERSION[0]):
        what = ('Mutually exclusive versions requested. Version %s '
                'requested but not supported by this service.' % value)
    else:
        what = ('Version %s was requested but the minor version is not '
                'supported by this service.' % value)
    return '%s The supported version range is: [%s, %s].' % (
        what, version_string(MIN_VERSION), version_string(MAX_VERSION))


def add_headers(response, version):
    """Advertise the range and, when known, the version used."""
    response.headers[MIN_HEADER] = version_string(MIN_VERSION)
    response.headers[MAX_HEADER] = version_string(MAX_VERSION)
    if version is not None:
        response.headers[HEADER] = str(version)
        vary = response.headers.get('Vary')
        if not vary:
            response.headers['Vary'] = HEADER
        elif HEADER not in vary:
            response.headers['Vary'] = vary + ', ' + HEADER
