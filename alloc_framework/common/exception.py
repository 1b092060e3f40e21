"""Domain exceptions of the bare metal side (nodes, allocations, conductors).

These carry no web imports. Each class has a ``msg_fmt`` with
``%(name)s`` placeholders filled from the keyword arguments, and the HTTP
status ``code`` that the API uses when the exception reaches a client.
The API maps classes to stable error codes; it never parses messages.

A leaf of the package, like the rest of ``common/``: it imports nothing
of alloc_framework, so every floor (the CLI excepted, which talks HTTP
only) may raise and catch these without loading anything else.
"""

from oslo_log import log

LOG = log.getLogger(__name__)


class AllocFrameworkException(Exception):
    """Base of every domain exception.

    :param message: an already formatted message; when omitted, ``msg_fmt``
        is formatted with ``kwargs``.
    :param kwargs: values for the placeholders of ``msg_fmt``; ``code``
        overrides the class's HTTP status.
    """

    msg_fmt = 'An unknown exception occurred.'
    code = 500

    def __init__(self, message=None, **kwargs):
        self.kwargs = kwargs
        if 'code' in kwargs:
            self.code = kwargs['code']
        if not message:
            try:
                message = self.msg_fmt % kwargs
            except (KeyError, TypeError, ValueError):
                # A programming error in the caller must not hide the
                # original problem: log it and keep the raw format.
                LOG.exception('Exception %s built with wrong arguments %s',
                              type(self).__name__, kwargs)
                message = self.msg_fmt
        self.message = str(message)
        super().__init__(self.message)

    def __str__(self):
        return self.message


# --- 400 ---------------------------------------------------------------------

class Invalid(AllocFrameworkException):
    msg_fmt = 'Unacceptable parameters.'
    code = 400


class InvalidParameterValue(Invalid):
    msg_fmt = '%(err)s'


class MissingParameterValue(InvalidParameterValue):
    msg_fmt = '%(err)s'


class UnsupportedDriverExtension(Invalid):
    msg_fmt = '%(extension)s is not supported for driver %(driver)s.'


class InvalidUUID(Invalid):
    msg_fmt = 'Expected a UUID but received %(uuid)s.'


class InvalidIdentity(Invalid):
    msg_fmt = 'Expected a UUID or a logical name but received %(identity)s.'


class InvalidStateRequested(Invalid):
    msg_fmt = ('The requested action "%(action)s" can not be performed on '
               'node "%(node)s" while it is in state "%(state)s".')


class InvalidTrait(Invalid):
    msg_fmt = 'Invalid trait %(trait)s: %(reason)s'


class TooManyTraits(Invalid):
    msg_fmt = ('Node %(node)s would have %(count)s traits; at most '
               '%(limit)s are allowed.')


class NodeInMaintenance(Invalid):
    msg_fmt = ('The %(op)s operation can not be performed on node %(node)s '
               'because it is in maintenance mode.')


class InterfaceNotFoundInEntrypoint(Invalid):
    msg_fmt = ('Could not find the following interface in the '
               '"%(iface)s" entrypoint: %(names)s. Valid interfaces are '
               '%(valid)s.')


class IncompatibleInterface(InterfaceNotFoundInEntrypoint):
    msg_fmt = ('%(interface_type)s interface implementation '
               '"%(interface_impl)s" is not supported by hardware type '
               '%(hardware_type)s.')


# --- 403 ---------------------------------------------------------------------

class NotAuthorized(AllocFrameworkException):
    msg_fmt = 'Not authorized.'
    code = 403


class NodeProtected(NotAuthorized):
    msg_fmt = 'Node %(node)s is protected and cannot be undeployed, ' \
              'rebuilt or deleted.'


# --- 404 ---------------------------------------------------------------------

class NotFound(AllocFrameworkException):
    msg_fmt = 'Resource could not be found.'
    code = 404


class NodeNotFound(NotFound):
    msg_fmt = 'Node %(node)s could not be found.'


class InstanceNotFound(NotFound):
    msg_fmt = 'Instance %(instance)s could not be found.'


class NodeInventoryNotFound(NotFound):
    msg_fmt = 'Node inventory for node %(node)s could not be found.'


class AllocationGroupNotFound(NotFound):
    msg_fmt = 'Allocation group %(group)s could not be found.'


class AllocationNotFound(NotFound):
    msg_fmt = 'Allocation %(allocation)s could not be found.'


class ConductorNotFound(NotFound):
    msg_fmt = 'Conductor %(conductor)s could not be found.'


class DriverNotFound(NotFound):
    msg_fmt = 'Could not find the following driver(s) or hardware ' \
              'type(s): %(driver_name)s.'


class NodeTraitNotFound(NotFound):
    msg_fmt = 'Node %(node_id)s doesn\'t have a trait %(trait)s'


class NodeHistoryNotFound(NotFound):
    msg_fmt = 'Node history record %(history)s could not be found.'


class RunbookNotFound(NotFound):
    msg_fmt = 'Runbook %(runbook)s could not be found.'


class DeferredActionNotFound(NotFound):
    msg_fmt = 'Deferred action %(action)s could not be found.'


# --- 409 ---------------------------------------------------------------------

class Conflict(AllocFrameworkException):
    msg_fmt = 'Conflict.'
    code = 409


class NodeLocked(Conflict):
    msg_fmt = ('Node %(node)s is locked by host %(host)s, please retry '
               'after the current operation is completed.')


class NodeAssociated(Conflict):
    msg_fmt = ('Node %(node)s is associated with instance %(instance)s.')


class InstanceAssociated(Conflict):
    msg_fmt = ('Instance %(instance_uuid)s is already associated with a '
               'node, it cannot be associated with this other node '
               '%(node)s')


class DuplicateName(Conflict):
    msg_fmt = 'A node with name %(name)s already exists.'


class NodeAlreadyExists(Conflict):
    msg_fmt = 'A node with UUID %(uuid)s already exists.'


class AllocationDuplicateName(Conflict):
    msg_fmt = 'An allocation with name %(name)s already exists.'


class AllocationAlreadyExists(Conflict):
    msg_fmt = 'An allocation with UUID %(uuid)s already exists.'


class NodeIsAllocated(Conflict):
    msg_fmt = ('Node %(node)s is associated with allocation %(allocation)s '
               'and its state forbids releasing it now.')


class AllocationGroupDuplicateName(Conflict):
    msg_fmt = 'An allocation group with name %(name)s already exists.'


class AllocationGroupAlreadyExists(Conflict):
    msg_fmt = 'An allocation group with UUID %(uuid)s already exists.'


class AllocationNotRetryable(Conflict):
    # Only a failed allocation goes back to allocating (the retry).
    msg_fmt = ('Allocation %(allocation)s is %(state)s: only an allocation '
               'in state error can be retried.')


class AllocationTakenOver(Conflict):
    # An update of an allocation guarded by its conductor_affinity found
    # another conductor there: the writer lost the allocation and stops.
    msg_fmt = ('Allocation %(allocation)s is now handled by conductor '
               '%(conductor)s.')


class ConductorAlreadyRegistered(Conflict):
    # One process per host name: a second one would share its node locks
    # and unregister the first when it stops. Said to an operator at
    # start, hence what to do.
    msg_fmt = ('Conductor %(conductor)s is already registered and alive: '
               'another process runs with [DEFAULT]host = %(conductor)s. '
               'Give this one another [DEFAULT]host, or stop the other '
               'one; the registration of a dead one is taken over once its '
               'heartbeat is older than [conductor]heartbeat_timeout.')


class NodeNotLocked(Conflict):
    # Raised when releasing a lock that this host does not hold; it is a
    # bug or a broken lock, never a normal outcome.
    msg_fmt = 'Node %(node)s found not to be locked by %(host)s on release.'


# --- 503 ---------------------------------------------------------------------

class TemporaryFailure(AllocFrameworkException):
    msg_fmt = 'Resource temporarily unavailable, please retry.'
    code = 503


class PlacementUnavailable(TemporaryFailure):
    msg_fmt = ('The Placement service could not serve a request of the '
               'placement allocation backend: %(reason)s')


class NoFreeConductorWorker(TemporaryFailure):
    msg_fmt = 'Requested action cannot be performed due to lack of free ' \
              'conductor workers.'


class ConductorNotAnswering(TemporaryFailure):
    # Neither an answer nor a sign of work within [DEFAULT]
    # rpc_failover_timeout: the conductor is probably dead (see
    # conductor.rpcapi.ConductorAPI). The call may still be waiting for
    # it at the broker.
    msg_fmt = 'Conductor %(host)s did not answer, please retry.'


class DeadlineExceeded(TemporaryFailure):
    """A request's work passed the time limit an option gives it.

    Raised by ``common.deadline.Deadline``; the database work in progress
    was interrupted (see ``db.deadline``).
    """
    msg_fmt = ('The request was stopped after %(limit)g seconds, the '
               'limit set by %(option)s.')


class ClientGone(TemporaryFailure):
    """The client of a request closed its connection before the answer.

    The database work in progress was interrupted: nobody waits for it.
    """
    msg_fmt = 'The client closed its connection; the request was stopped.'


# --- internal ----------------------------------------------------------------

class InvalidDeferredActionTransition(AllocFrameworkException):
    msg_fmt = ('Deferred action %(action)s cannot move from %(current)s to '
               '%(new)s.')


class DeferredActionStateChanged(AllocFrameworkException):
    msg_fmt = ('Deferred action %(action)s is no longer %(expected)s: '
               'another conductor moved it.')


class DeferredCallNotAllowed(AllocFrameworkException):
    msg_fmt = 'Deferred action call %(call)s is not allowed: %(reason)s'


class AllocationFailed(AllocFrameworkException):
    msg_fmt = 'Failed to process allocation: %(error)s.'


class DriverLoadError(AllocFrameworkException):
    msg_fmt = ('Plugin "%(name)s" of the "%(namespace)s" namespace could not '
               'be loaded: %(reason)s')


class ReshapeAtStartFailed(AllocFrameworkException):
    msg_fmt = ('Could not reshape the resource providers of node %(node)s '
               'at start: %(error)s. Nothing of that reshape was written. '
               'Fix the cause, then start the conductor again or run '
               '"alloc-manage placement migrate-compute-inventory --node '
               '%(node)s" with the services stopped.')


class PowerStateFailure(AllocFrameworkException):
    msg_fmt = 'Failed to set node power state to %(pstate)s.'


class InstanceDeployFailure(AllocFrameworkException):
    msg_fmt = 'Failed to deploy instance: %(reason)s'


class NodeCleaningFailure(AllocFrameworkException):
    msg_fmt = 'Failed to clean node %(node)s: %(reason)s'


class RedfishError(AllocFrameworkException):
    """A Redfish BMC refused or failed a request."""
    msg_fmt = '%(error)s'
    # The BMC, not the service nor the client, is at fault.
    code = 502


class RedfishConnectionError(RedfishError):
    """A Redfish BMC could not be reached or did not answer in time."""
    code = 504


class RedfishAuthenticationError(RedfishError):
    """A Redfish BMC refused the node's credentials."""


class IPMIFailure(AllocFrameworkException):
    msg_fmt = 'IPMI BMC %(bmc)s: %(error)s'
    # The class name would give baremetal.i_p_m_i_failure.
    error_code = 'baremetal.ipmi_failure'


class FirmwareUpdateFailure(AllocFrameworkException):
    msg_fmt = 'Firmware update of node %(node)s failed: %(reason)s'
