"""Node provision and power states, and the provision state machine.

State names are those of the upstream bare metal service, so clients and
operators' habits carry over. The provision state machine is data: the
``TRANSITIONS`` table maps ``(state, event)`` to the next state and to the
``target_provision_state`` the node has while it is in a transient state.
Code moves nodes only through ``Node.move_provision_state``, which asks
:data:`MACHINE`.

A leaf of the package (it imports only ``common/``), as upstream keeps
its states: the server and the command-line client, which waits for a
node to leave the transient states, share one list.
"""

from alloc_framework.common import exception

# --- provision states --------------------------------------------------------

NOSTATE = None
ENROLL = 'enroll'
VERIFYING = 'verifying'
MANAGEABLE = 'manageable'
AVAILABLE = 'available'
ACTIVE = 'active'
DEPLOYING = 'deploying'
DEPLOYWAIT = 'wait call-back'
DEPLOYFAIL = 'deploy failed'
DELETING = 'deleting'
DELETED = 'deleted'
CLEANING = 'cleaning'
CLEANWAIT = 'clean wait'
CLEANFAIL = 'clean failed'
ERROR = 'error'
ADOPTFAIL = 'adopt failed'
INSPECTING = 'inspecting'
INSPECTWAIT = 'inspect wait'
INSPECTFAIL = 'inspect failed'
RESCUE = 'rescue'
RESCUEFAIL = 'rescue failed'
UNRESCUEFAIL = 'unrescue failed'
SERVICING = 'servicing'
SERVICEWAIT = 'service wait'
SERVICEFAIL = 'service failed'

STABLE_STATES = (ENROLL, MANAGEABLE, AVAILABLE, ACTIVE, ERROR)
"""States that do not change unless a request arrives."""

TRANSIENT_STATES = (VERIFYING, DEPLOYING, DEPLOYWAIT, DELETING, CLEANING,
                    CLEANWAIT, SERVICING, SERVICEWAIT)
"""States a node passes through while a conductor works on it."""

WORKING_STATES = (VERIFYING, DEPLOYING, DELETING, CLEANING, SERVICING)
"""Transient states in which a conductor worker holds the node's lock and
works on it; the other transient states wait for a call-back."""

FAILURE_STATES = (DEPLOYFAIL, CLEANFAIL, SERVICEFAIL)
"""States a failed operation leaves a node in."""

ALL_STATES = STABLE_STATES + TRANSIENT_STATES + FAILURE_STATES

UPDATE_ALLOWED_STATES = STABLE_STATES + (
    DEPLOYFAIL, CLEANFAIL, CLEANWAIT, VERIFYING, ADOPTFAIL, INSPECTING,
    INSPECTWAIT, INSPECTFAIL, RESCUEFAIL, UNRESCUEFAIL, SERVICEFAIL)
"""States in which a node may be updated (PATCH): the stable states plus
the transient and failure states in which upstream allows it."""

DELETE_ALLOWED_STATES = (AVAILABLE, MANAGEABLE, ENROLL, ADOPTFAIL)
"""States in which a node not in maintenance may be deleted."""

# --- power states ------------------------------------------------------------

POWER_ON = 'power on'
POWER_OFF = 'power off'
REBOOT = 'rebooting'
SOFT_REBOOT = 'soft rebooting'
SOFT_POWER_OFF = 'soft power off'

POWER_STATES = (POWER_ON, POWER_OFF)
"""States a node's power can be in."""

POWER_TARGETS = (POWER_ON, POWER_OFF, REBOOT)
"""Power state changes the API accepts."""

HEALTH_OK = 'OK'
HEALTH_WARNING = 'Warning'
HEALTH_CRITICAL = 'Critical'
HEALTH_STATES = (HEALTH_OK, HEALTH_WARNING, HEALTH_CRITICAL)
"""What a node's ``health`` may be besides None (not reported)."""

# --- provision events --------------------------------------------------------

# Events requested by users (API verbs map to them) ...
MANAGE = 'manage'
PROVIDE = 'provide'
DEPLOY = 'deploy'
DELETE = 'delete'
CLEAN = 'clean'
ABORT = 'abort'
REBUILD = 'rebuild'
# Leaves a hold state (upstream's clean, deploy and service hold, which
# a ``hold`` step enters); no flow here holds, so no transition takes it.
UNHOLD = 'unhold'
SERVICE = 'service'
# ... and events the conductor raises while it works.
DONE = 'done'
FAIL = 'fail'
WAIT = 'wait'
RESUME = 'resume'

VERBS = {
    'manage': MANAGE,
    'provide': PROVIDE,
    'active': DEPLOY,
    'deploy': DEPLOY,
    'deleted': DELETE,
    'undeploy': DELETE,
    'clean': CLEAN,
    'abort': ABORT,
    'rebuild': REBUILD,
    'unhold': UNHOLD,
    'service': SERVICE,
}
"""Actions of ``PUT /v1/nodes/{node}/states/provision`` -> machine event."""

# Placeholder in TRANSITIONS: keep the node's current target.
KEEP = object()

TRANSITIONS = {
    # enroll -> manageable, checking that the node can be managed.
    (ENROLL, MANAGE): (VERIFYING, MANAGEABLE),
    (VERIFYING, DONE): (MANAGEABLE, None),
    (VERIFYING, FAIL): (ENROLL, None),
    # Cleaning: automated on the way to available, manual back to
    # manageable. The target tells the two apart.
    (MANAGEABLE, PROVIDE): (CLEANING, AVAILABLE),
    (MANAGEABLE, CLEAN): (CLEANING, MANAGEABLE),
    (CLEANING, WAIT): (CLEANWAIT, KEEP),
    (CLEANWAIT, RESUME): (CLEANING, KEEP),
    (CLEANING, DONE): (AVAILABLE, None),
    (CLEANING, MANAGE): (MANAGEABLE, None),
    (CLEANING, FAIL): (CLEANFAIL, MANAGEABLE),
    (CLEANWAIT, FAIL): (CLEANFAIL, MANAGEABLE),
    (CLEANWAIT, ABORT): (CLEANFAIL, MANAGEABLE),
    (CLEANFAIL, MANAGE): (MANAGEABLE, None),
    (AVAILABLE, MANAGE): (MANAGEABLE, None),
    # Deployment.
    (AVAILABLE, DEPLOY): (DEPLOYING, ACTIVE),
    (DEPLOYING, WAIT): (DEPLOYWAIT, KEEP),
    (DEPLOYWAIT, RESUME): (DEPLOYING, KEEP),
    (DEPLOYING, DONE): (ACTIVE, None),
    (DEPLOYING, FAIL): (DEPLOYFAIL, ACTIVE),
    (DEPLOYWAIT, FAIL): (DEPLOYFAIL, ACTIVE),
    (DEPLOYWAIT, ABORT): (DEPLOYFAIL, ACTIVE),
    (DEPLOYFAIL, DEPLOY): (DEPLOYING, ACTIVE),
    (DEPLOYFAIL, REBUILD): (DEPLOYING, ACTIVE),
    (ACTIVE, REBUILD): (DEPLOYING, ACTIVE),
    # Tear down: deleting, then automated cleaning back to available.
    (ACTIVE, DELETE): (DELETING, AVAILABLE),
    (DEPLOYFAIL, DELETE): (DELETING, AVAILABLE),
    (ERROR, DELETE): (DELETING, AVAILABLE),
    (ERROR, REBUILD): (DEPLOYING, ACTIVE),
    (DELETING, DONE): (CLEANING, AVAILABLE),
    (DELETING, FAIL): (ERROR, None),
    # Servicing: steps run on an active node, which returns to active.
    (ACTIVE, SERVICE): (SERVICING, ACTIVE),
    (SERVICING, WAIT): (SERVICEWAIT, KEEP),
    (SERVICEWAIT, RESUME): (SERVICING, KEEP),
    (SERVICING, DONE): (ACTIVE, None),
    (SERVICING, FAIL): (SERVICEFAIL, ACTIVE),
    (SERVICEWAIT, FAIL): (SERVICEFAIL, ACTIVE),
    (SERVICEWAIT, ABORT): (SERVICEFAIL, ACTIVE),
    # A failed servicing may be run again, or given up (the node is
    # active again, as it was before).
    (SERVICEFAIL, SERVICE): (SERVICING, ACTIVE),
    (SERVICEFAIL, ABORT): (ACTIVE, None),
}
"""``(state, event) -> (next state, target_provision_state)``."""


class ProvisionStateMachine:
    """Answers questions about, and computes moves in, ``TRANSITIONS``."""

    def __init__(self, transitions=None):
        self.transitions = dict(TRANSITIONS if transitions is None
                                else transitions)

    def is_valid_event(self, state, event):
        """Whether ``event`` is allowed in ``state``."""
        return (state, event) in self.transitions

    def events_from(self, state):
        """The events allowed in ``state``, sorted."""
        return sorted(e for (s, e) in self.transitions if s == state)

    def process_event(self, state, event, target_state=None, node=None,
                      action=None):
        """Compute the move of ``event`` from ``state``.

        :param state: the node's current provision state.
        :param event: a machine event (see ``VERBS`` for API actions).
        :param target_state: the node's current target; kept when the
            transition says so (wait/resume within one flow).
        :param node: node identity, only used in the error message.
        :param action: the user's action, only used in the error message.
        :returns: ``(new_state, new_target_state)``.
        :raises: InvalidStateRequested when the event is not allowed.
        """
        try:
            new_state, target = self.transitions[(state, event)]
        except KeyError:
            raise exception.InvalidStateRequested(
                action=action or event, node=node, state=state)
        if target is KEEP:
            target = target_state
        return new_state, target


MACHINE = ProvisionStateMachine()
"""The provision state machine shared by the conductor and the API."""


def event_for_verb(verb):
    """Map an API action (``active``, ``deleted`` ...) to a machine event.

    :raises: InvalidParameterValue for an unknown action.
    """
    try:
        return VERBS[verb]
    except KeyError:
        raise exception.InvalidParameterValue(
            err='Unknown provision action "%s"; valid actions are %s.'
                % (verb, ', '.join(sorted(VERBS))))
