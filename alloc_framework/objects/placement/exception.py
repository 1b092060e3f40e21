"""Domain exceptions of Placement (no web imports).

Handlers map them to HTTP statuses and stable error codes. ``msg_fmt`` is
formatted with the keyword arguments given at raise time.
"""


class PlacementException(Exception):
    """Base of every Placement domain error."""

    msg_fmt = 'An unknown exception occurred.'

    def __init__(self, message=None, **kwargs):
        self.kwargs = kwargs
        if not message:
            try:
                message = self.msg_fmt % kwargs
            except (KeyError, TypeError):
                # A missing argument must not hide the real error.
                message = self.msg_fmt
        self.message = message
        super().__init__(message)

    def format_message(self):
        return self.message


class NotFound(PlacementException):
    msg_fmt = 'Resource could not be found.'


class Exists(PlacementException):
    msg_fmt = 'Resource already exists.'


class Invalid(PlacementException):
    msg_fmt = 'Unacceptable parameters.'


class PolicyNotAuthorized(PlacementException):
    msg_fmt = 'Policy does not allow %(action)s to be performed.'


class ConcurrentUpdateDetected(PlacementException):
    msg_fmt = ('Another thread concurrently updated the data. '
               'Please retry your update')


class ResourceProviderConcurrentUpdateDetected(ConcurrentUpdateDetected):
    msg_fmt = ('Another thread concurrently updated the resource provider '
               'data. Please retry your update')


class InvalidInventory(Invalid):
    msg_fmt = ('Inventory for \'%(resource_class)s\' on '
               'resource provider \'%(resource_provider)s\' invalid.')


class InventoryInUse(InvalidInventory):
    msg_fmt = ('Inventory for \'%(resource_classes)s\' on '
               'resource provider \'%(resource_provider)s\' in use.')


class InvalidInventoryCapacity(InvalidInventory):
    msg_fmt = ('Invalid inventory for \'%(resource_class)s\' on '
               'resource provider \'%(resource_provider)s\'. '
               'The reserved value is greater than or equal to total.')


class InvalidInventoryCapacityReservedCanBeTotal(InvalidInventoryCapacity):
    msg_fmt = ('Invalid inventory for \'%(resource_class)s\' on '
               'resource provider \'%(resource_provider)s\'. '
               'The reserved value is greater than total.')


class InventoryWithResourceClassNotFound(NotFound):
    msg_fmt = 'No inventory of class %(resource_class)s found.'


class InvalidAllocationCapacityExceeded(InvalidInventory):
    msg_fmt = ('Unable to create allocation for \'%(resource_class)s\' on '
               'resource provider \'%(resource_provider)s\'. The requested '
               'amount would exceed the capacity.')


class InvalidAllocationConstraintsViolated(InvalidInventory):
    msg_fmt = ('Unable to create allocation for \'%(resource_class)s\' on '
               'resource provider \'%(resource_provider)s\'. The requested '
               'amount would violate inventory constraints.')


class ResourceClassNotFound(NotFound):
    msg_fmt = 'No such resource class %(resource_class)s.'


class ResourceClassExists(Exists):
    msg_fmt = 'Resource class %(resource_class)s already exists.'


class ResourceClassInUse(Invalid):
    msg_fmt = ('Cannot delete resource class %(resource_class)s. '
               'Class is in use in inventory.')


class ResourceClassCannotDeleteStandard(Invalid):
    msg_fmt = 'Cannot delete standard resource class %(resource_class)s.'


class ResourceClassCannotUpdateStandard(Invalid):
    msg_fmt = 'Cannot update standard resource class %(resource_class)s.'


class MaxDBRetriesExceeded(PlacementException):
    msg_fmt = ('Max retries of DB transaction exceeded attempting to '
               'perform %(action)s.')


class TraitNotFound(NotFound):
    msg_fmt = 'No such trait(s): %(names)s.'


class TraitExists(Exists):
    msg_fmt = 'The Trait %(name)s already exists.'


class TraitInUse(Invalid):
    msg_fmt = 'The trait %(name)s is in use by a resource provider.'


class TraitCannotDeleteStandard(Invalid):
    msg_fmt = 'Cannot delete standard trait %(name)s.'


class ResourceProviderInUse(Invalid):
    msg_fmt = ('Resource provider has allocations.')


class CannotDeleteParentResourceProvider(Invalid):
    msg_fmt = ('Cannot delete resource provider that is a parent of '
               'another. Delete child providers first.')


class ResourceProviderNotFound(NotFound):
    msg_fmt = 'No such resource provider(s).'


class ConsumerNotFound(NotFound):
    msg_fmt = 'No such consumer %(consumer)s.'


class ConsumerExists(Exists):
    msg_fmt = 'The consumer %(uuid)s already exists.'


class ConsumerTypeNotFound(NotFound):
    msg_fmt = 'No such consumer type %(name)s.'


class ConsumerTypeExists(Exists):
    msg_fmt = 'The consumer type %(name)s already exists.'


class ProjectNotFound(NotFound):
    msg_fmt = 'No such project %(external_id)s.'


class ProjectExists(Exists):
    msg_fmt = 'The project %(external_id)s already exists.'


class UserNotFound(NotFound):
    msg_fmt = 'No such user %(external_id)s.'


class UserExists(Exists):
    msg_fmt = 'The user %(external_id)s already exists.'


class ResourceProviderExists(Exists):
    msg_fmt = 'Conflicting resource provider %(name)s already exists.'


class InvalidResourceProviderParent(Invalid):
    msg_fmt = 'Invalid parent provider: %(reason)s'


class InventoryExists(Exists):
    msg_fmt = ('Inventory for %(resource_class)s on resource provider '
               '%(resource_provider)s already exists.')


class ConsumerConcurrentUpdateDetected(ConcurrentUpdateDetected):
    msg_fmt = ('Another thread concurrently updated the consumer '
               '%(uuid)s. Please retry your update')


class ConsumerGenerationConflict(ConcurrentUpdateDetected):
    msg_fmt = ('consumer generation conflict - '
               'expected %(expected)s but got %(got)s')
