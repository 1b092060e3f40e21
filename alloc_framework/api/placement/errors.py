"""Stable error codes of the Placement API.

From microversion 1.23 every error body carries one of these in its
``code`` field. Clients branch on them, so a code is never renamed, never
reused for another meaning and never removed.
"""

# Used when no more specific code applies.
DEFAULT = 'placement.undefined_code'

# Inventory cannot be removed or shrunk below what is allocated.
INVENTORY_INUSE = 'placement.inventory.inuse'
# A provider or consumer generation did not match: re-read and retry.
CONCURRENT_UPDATE = 'placement.concurrent_update'
# Another entity of the same kind already has this name.
DUPLICATE_NAME = 'placement.duplicate_name'
# A provider with allocations cannot be deleted.
PROVIDER_IN_USE = 'placement.resource_provider.inuse'
# A provider with children cannot be deleted.
PROVIDER_CANNOT_DELETE_PARENT = (
    'placement.resource_provider.cannot_delete_parent')
# A provider named in a multi-provider operation does not exist.
RESOURCE_PROVIDER_NOT_FOUND = 'placement.resource_provider.not_found'
# A query parameter given more times than it may be.
ILLEGAL_DUPLICATE_QUERYPARAM = 'placement.query.duplicate_key'
# A query parameter with a value that is not valid.
QUERYPARAM_BAD_VALUE = 'placement.query.bad_value'
# A query parameter that is required is missing.
QUERYPARAM_MISSING_VALUE = 'placement.query.missing_value'
# The request's work passed its time limit ([placement]
# candidates_deadline) and was stopped: retry later, or ask for less.
QUERY_DEADLINE = 'placement.query.deadline'
# The client closed its connection and the request's work was stopped
# (only a proxy in front may still see this answer).
QUERY_CLIENT_GONE = 'placement.query.client_gone'
