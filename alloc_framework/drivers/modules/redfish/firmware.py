"""The ``redfish`` firmware interface: versions, and updates by SimpleUpdate.

Versions (:meth:`RedfishFirmware.get_components`): the BIOS's is the
ComputerSystem's ``BiosVersion``, the BMC's its Manager's
``FirmwareVersion``; when the BMC leaves one of them empty, the node's
own ``FirmwareInventory`` member of the component gives it. The
device of each component (bare metal API 1.114): ``vendor`` is the
``Manufacturer`` of that inventory member, ``model`` and
``serial_number`` the ``Model`` and ``SerialNumber`` of the system
(BIOS) or its Manager (BMC); each is None when the BMC does not tell.

A service may manage several systems (chassis managers, blade
enclosures), each with its Manager and inventory members named alike:
only a member that belongs to the node's system (BIOS) or its Manager
(BMC) is ever read or targeted (:func:`_inventory_member`): the one the
owner links as its ``ActiveSoftwareImage``, else the one whose
``RelatedItem`` names the owner, else, on a single-system service, the
one member that looks like the component. Several members that could
match fail the call with a clear error instead of a guess.

An update (:meth:`RedfishFirmware.update`, the ``firmware.update`` clean
and service step) is a deferrable method: it runs as a deferred action
and every wait is a reschedule, never a sleeping thread. Its stages are
declared as a table (:attr:`RedfishFirmware.STAGES`, run by
:func:`alloc_framework.drivers.deferred.run_stages`), named by
``state['step']``. For each ``{component, url}`` of ``settings``, in
order:

1. start (no ``state`` yet, or the previous component done): the image
   is handed to the BMC with ``UpdateService.SimpleUpdate`` (targets:
   the node's inventory member of the component, else the node's
   Manager or ComputerSystem); the BMC answers with a task monitor.
2. ``task``: the task monitor is polled, after the ``Retry-After`` the
   BMC asks for (at most ``[redfish]firmware_update_max_retry_after``),
   else ``[redfish]firmware_update_status_interval`` seconds, until the
   task ends. A task that ends in any other state than Completed fails
   the update with the BMC's messages. A BMC that resets while the task
   runs (no connection, or 503) is waited for like in step 3.
3. ``bmc``: after BMC firmware, the BMC resets. It is polled until it
   answers again, for at most ``[redfish]firmware_update_bmc_timeout``
   seconds, counted from the first poll it did not answer.
4. ``reboot``: after BIOS firmware the node is power cycled (new BIOS
   firmware applies at boot) and polled until it is on again, for at
   most ``[redfish]firmware_update_reboot_timeout`` seconds.

The progress rides in the reschedules' arguments (``state``: the step,
the component's index, the task monitor path, times): never the BMC's
credentials, which are read from ``driver_info`` at every call, and
image URLs with credentials in them are refused. Once the BMC accepted
an image the action's retries are set to 0: calling the method again
after an error would flash the image a second time, so any error is
final (the waits above handle what is transient). When every component
is done the new versions are read and returned; the step runner hands
them to ``FirmwareInterface.step_ended``, which stores them for
``GET /v1/nodes/{node}/firmware`` without asking the BMC again.
"""

import time

from oslo_log import log
import sushy
from sushy import exceptions as sushy_exc

from alloc_framework.common import exception
from alloc_framework.common import states
from alloc_framework.drivers import base
from alloc_framework.drivers import deferred
from alloc_framework.drivers.modules.redfish import utils

LOG = log.getLogger(__name__)

COMPONENTS = ('bmc', 'bios')

# Task states in which the task still runs.
_RUNNING = {sushy.TaskState.NEW, sushy.TaskState.STARTING,
            sushy.TaskState.RUNNING, sushy.TaskState.PENDING,
            sushy.TaskState.SUSPENDED, sushy.TaskState.INTERRUPTED,
            sushy.TaskState.SERVICE}
_GOOD_STATUS = {None, sushy.Health.OK, sushy.Health.WARNING}
# Inventory member ids and names that designate a component.
_INVENTORY_NAMES = {'bmc': ('bmc', 'manager', 'bmc firmware'),
                    'bios': ('bios', 'bios firmware', 'system bios')}

SETTINGS_ARGSINFO = {
    'settings': {
        'description': 'The firmware to apply, in order: a list of '
                       '{"component": "bmc" or "bios", "url": the image '
                       'URL (http, https) the BMC downloads}.',
        'required': True,
    },
}


def _path(value):
    return (value or '').rstrip('/')


def _linked(resource, *keys):
    """The ``@odata.id`` at ``keys`` of a resource's JSON, or None."""
    value = getattr(resource, 'json', None) or {}
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return _path(value.get('@odata.id')) if isinstance(value, dict) else None


def _related(member):
    """The paths a FirmwareInventory member's ``RelatedItem`` names."""
    items = (getattr(member, 'json', None) or {}).get('RelatedItem') or []
    return {_path(item.get('@odata.id')) for item in items
            if isinstance(item, dict)}


def _looks_like(member, component):
    names = _INVENTORY_NAMES[component]
    for value in ((member.identity or '').lower(),
                  (member.name or '').lower()):
        if value in names or component in value:
            return True
    return False


def _manager(conn, system):
    """The Manager of ``system``: its ``ManagedBy`` link, else the
    service's only Manager; None when that would be a guess."""
    managers = system.managers
    if managers:
        return managers[0]
    members = conn.root.get_manager_collection().get_members()
    return members[0] if len(members) == 1 else None


def _owner(conn, system, component):
    """The resource whose firmware ``component`` is: the system (BIOS)
    or its Manager (BMC)."""
    return system if component == 'bios' else _manager(conn, system)


def _own_image(system, owner, component):
    """The inventory path the owner links as its running firmware."""
    if component == 'bmc':
        return _linked(owner, 'Links', 'ActiveSoftwareImage')
    try:
        bios = system.bios
    except (sushy_exc.MissingAttributeError,
            sushy_exc.ResourceNotFoundError):
        return None
    return _linked(bios, 'Links', 'ActiveSoftwareImage')


def _inventory_member(conn, system, component, node):
    """The FirmwareInventory member of ``component`` of this node, or None.

    Only a member that belongs to the node's system (BIOS) or to its
    Manager (BMC) is taken, in this order: the one the owner links as its
    ``ActiveSoftwareImage``; the one member that looks like the component
    and whose ``RelatedItem`` names the owner; on a service with a single
    system, the one member that looks like the component and has no
    ``RelatedItem``. None means the caller falls back to the owner
    itself.

    :raises: RedfishError when several members could be the one.
    """
    owner = _owner(conn, system, component)
    if owner is None:
        return None
    try:
        inventory = conn.root.get_update_service().firmware_inventory
    except (sushy_exc.MissingAttributeError,
            sushy_exc.ResourceNotFoundError):
        return None
    link = _own_image(system, owner, component)
    if link:
        try:
            return inventory.get_member(link)
        except sushy_exc.ResourceNotFoundError:
            LOG.warning('Node %(node)s: its %(owner)s links %(link)s as its '
                        'firmware, which does not exist; looking in the '
                        'FirmwareInventory instead',
                        {'node': node.uuid, 'owner': owner.path,
                         'link': link})
    candidates = [m for m in inventory.get_members()
                  if _looks_like(m, component)]
    owner_path = _path(owner.path)
    mine = [m for m in candidates if owner_path in _related(m)]
    if not mine:
        unlinked = [m for m in candidates if not _related(m)]
        if len(unlinked) == 1:
            systems = conn.root.get_system_collection().members_identities
            # On a service with several systems, a member linked to
            # nothing may be another system's: fall back to the owner.
            return unlinked[0] if len(systems) == 1 else None
        mine = unlinked
    if len(mine) > 1:
        raise exception.RedfishError(
            error='The Redfish BMC of node %s lists several '
                  'FirmwareInventory members that could be the %s firmware '
                  'of %s (%s) and none that %s links as its own: refusing '
                  'to guess. Link the right member to it (RelatedItem or '
                  'ActiveSoftwareImage) on the BMC.' % (
                      node.uuid, component.upper(), owner_path,
                      ', '.join(sorted(_path(m.path) for m in mine)),
                      'it' if component == 'bmc' else 'its Bios'))
    return mine[0] if mine else None


def _text(resource, key):
    """A non-empty string at ``key`` of a resource's JSON, else None."""
    value = (getattr(resource, 'json', None) or {}).get(key)
    return value if isinstance(value, str) and value else None


def _read_components(conn, node):
    """The components' versions and devices, as ``get_components``."""
    system = conn.system()
    manager = _manager(conn, system)
    owners = {'bios': system, 'bmc': manager}
    versions = {'bios': system.bios_version,
                'bmc': manager.firmware_version if manager else None}
    components = []
    for component in COMPONENTS:
        version = versions[component]
        try:
            member = _inventory_member(conn, system, component, node)
        except exception.RedfishError as exc:
            if not version:
                raise
            # The owner gives the version; only the vendor is unknown.
            LOG.debug('Node %(node)s: no vendor for its %(comp)s firmware: '
                      '%(exc)s', {'node': node.uuid, 'comp': component,
                                  'exc': exc})
            member = None
        if not version and member is not None:
            version = member.version
        if not version:
            continue
        owner = owners[component]
        components.append({
            'component': component, 'current_version': version,
            'vendor': _text(member, 'Manufacturer'),
            'model': _text(owner, 'Model'),
            'serial_number': _text(owner, 'SerialNumber')})
    return components


def _unreachable(exc):
    """Whether a domain error says the BMC is down or resetting."""
    return (isinstance(exc, exception.RedfishConnectionError)
            or (isinstance(exc, exception.RedfishError)
                and exc.kwargs.get('status') == 503))


class RedfishFirmware(base.FirmwareInterface):
    """Firmware versions and updates through the Redfish UpdateService."""

    def get_properties(self):
        return dict(utils.PROPERTIES)

    def validate(self, task):
        utils.parse_driver_info(task.node, self.conf)

    def get_components(self, task):
        with utils.Connection(task.node, self.conf) as conn:
            return _read_components(conn, task.node)

    # --- update ---

    @base.clean_step(priority=0, abortable=False, argsinfo=SETTINGS_ARGSINFO)
    @base.service_step(priority=0, abortable=False,
                       argsinfo=SETTINGS_ARGSINFO)
    @deferred.deferrable
    def update(self, task, settings, state=None):
        """Update the firmware of ``settings``; see the module docstring.

        :param state: the progress, set by this method's reschedules; its
            ``step`` names the stage of :data:`STAGES` to run.
        :returns: a Reschedule while the update goes on, then
            ``{'updated': [components], 'components': [...]}``.
        :raises: InvalidParameterValue for bad settings; RedfishError and
            its subclasses when the BMC refuses the image, the task fails
            or the BMC or the node does not come back in time.
        """
        self.check_settings(settings, COMPONENTS)
        stage = None if state is None else state.get('step', '')
        return deferred.run_stages(self.STAGES, stage, self, task,
                                   settings, state)

    def _opts(self):
        return self.conf.redfish

    def _again(self, settings, state, delay=None):
        if delay is None:
            delay = self._opts().firmware_update_status_interval
        return deferred.Reschedule(delay=delay, retries=0,
                                   settings=settings, state=state)

    def _describe(self, task, settings, index):
        item = settings[index]
        return 'firmware update of %s on node %s (image %s)' % (
            item['component'], task.node.uuid, item['url'])

    def _begin(self, task, settings, state):
        return self._start(task, settings, 0)

    def _start(self, task, settings, index):
        if index >= len(settings):
            return self._finish(task, settings)
        item = settings[index]
        component = item['component']
        with utils.Connection(task.node, self.conf) as conn:
            system = conn.system()
            member = _inventory_member(conn, system, component, task.node)
            if member is not None:
                target = member.path
            else:
                owner = _owner(conn, system, component)
                if owner is None:
                    raise exception.RedfishError(
                        error='The Redfish system of node %s links no '
                              'Manager and its BMC manages several: '
                              'nothing to target with the BMC firmware '
                              'update.' % task.node.uuid)
                target = owner.path
            update_service = conn.root.get_update_service()
            monitor = update_service.simple_update(item['url'],
                                                   targets=[target])
        LOG.info('Node %(node)s: started the %(what)s; task monitor '
                 '%(mon)s', {'node': task.node.uuid,
                             'what': self._describe(task, settings, index),
                             'mon': monitor.task_monitor_uri})
        state = {'step': 'task', 'index': index,
                 'task_monitor': monitor.task_monitor_uri,
                 'started_at': time.time()}
        return self._again(settings, state, self._retry_after(monitor))

    def _retry_after(self, monitor):
        response = monitor.response
        value = response.headers.get('Retry-After') if response else None
        if value is None or not str(value).isdigit():
            return None
        return min(int(value), self._opts().firmware_update_max_retry_after)

    def _bmc_away(self, task, settings, state, exc):
        """Reschedule while a BMC that stopped answering may come back."""
        since = state.get('unreachable_since') or time.time()
        limit = self._opts().firmware_update_bmc_timeout
        if time.time() - since > limit:
            raise exception.RedfishConnectionError(
                error='The BMC did not answer again within %ss during the '
                      '%s: %s' % (limit, self._describe(
                          task, settings, state['index']), exc))
        LOG.info('Node %(node)s: BMC not answering during the firmware '
                 'update, polling again later: %(exc)s',
                 {'node': task.node.uuid, 'exc': exc})
        return self._again(settings, dict(state, unreachable_since=since))

    def _poll_task(self, task, settings, state):
        index = state['index']
        try:
            with utils.Connection(task.node, self.conf) as conn:
                monitor = conn.root.get_task_monitor(state['task_monitor'])
                if monitor.is_processing:
                    return self._again(
                        settings, dict(state, unreachable_since=None),
                        self._retry_after(monitor))
                redfish_task = monitor.get_task()
        except exception.RedfishError as exc:
            if _unreachable(exc):
                return self._bmc_away(task, settings, state, exc)
            raise
        state = dict(state, unreachable_since=None)
        task_state = redfish_task.task_state
        if task_state in _RUNNING:
            return self._again(settings, state)
        if (task_state != sushy.TaskState.COMPLETED
                or redfish_task.task_status not in _GOOD_STATUS):
            messages = '; '.join(
                m.message for m in (redfish_task.messages or [])
                if getattr(m, 'message', None)) or 'no message'
            raise exception.RedfishError(
                error='The %s failed: the BMC\'s task ended in state %s, '
                      'status %s: %s' % (
                          self._describe(task, settings, index),
                          getattr(task_state, 'value', task_state),
                          getattr(redfish_task.task_status, 'value',
                                  redfish_task.task_status), messages))
        LOG.info('Node %(node)s: the BMC completed the %(what)s',
                 {'node': task.node.uuid,
                  'what': self._describe(task, settings, index)})
        if settings[index]['component'] == 'bmc':
            # The BMC resets to run its new firmware; give it time to go
            # down before asking whether it is back.
            return self._again(settings, {'step': 'bmc', 'index': index,
                                          'unreachable_since': None})
        return self._reboot(task, settings, index)

    def _poll_bmc(self, task, settings, state):
        try:
            with utils.Connection(task.node, self.conf) as conn:
                conn.system()
        except exception.RedfishError as exc:
            if _unreachable(exc):
                return self._bmc_away(task, settings, state, exc)
            raise
        return self._start(task, settings, state['index'] + 1)

    def _reboot(self, task, settings, index):
        with utils.Connection(task.node, self.conf) as conn:
            system = conn.system()
            if system.power_state == sushy.PowerState.OFF:
                reset = sushy.ResetType.ON
            else:
                reset = sushy.ResetType.FORCE_RESTART
            system.reset_system(reset)
        LOG.info('Node %(node)s: %(reset)s to apply its new BIOS firmware',
                 {'node': task.node.uuid, 'reset': reset})
        return self._again(settings, {'step': 'reboot', 'index': index,
                                      'started_at': time.time()})

    def _poll_reboot(self, task, settings, state):
        try:
            with utils.Connection(task.node, self.conf) as conn:
                power = conn.system().power_state
        except exception.RedfishError as exc:
            # Some BMCs are busy while their system boots: wait for them
            # within the reboot's time limit.
            if not _unreachable(exc):
                raise
            power = 'not answering (%s)' % exc
        if power == sushy.PowerState.ON:
            task.node.power_state = states.POWER_ON
            task.node.save(task.context)
            return self._start(task, settings, state['index'] + 1)
        limit = self._opts().firmware_update_reboot_timeout
        if time.time() - state['started_at'] > limit:
            raise exception.RedfishError(
                error='Node %s was not powered on again within %ss of its '
                      'reboot for the %s (the BMC reports %s).' % (
                          task.node.uuid, limit,
                          self._describe(task, settings, state['index']),
                          getattr(power, 'value', power)))
        return self._again(settings, state)

    def _finish(self, task, settings):
        components = self.get_components(task)
        LOG.info('Node %(node)s: firmware updated (%(what)s)',
                 {'node': task.node.uuid,
                  'what': ', '.join(s['component'] for s in settings)})
        return {'updated': [s['component'] for s in settings],
                'components': components}

    # The stages of an update (``state['step']``) and their handlers,
    # called as ``handler(self, task, settings, state)``: None starts.
    STAGES = {
        None: _begin,
        'task': _poll_task,
        'bmc': _poll_bmc,
        'reboot': _poll_reboot,
    }
