"""The contracts of hardware types and hardware interfaces.

A *hardware type* (``alloc_framework.hardware.types`` entry point) says
which interface implementations work with a family of hardware. A
*hardware interface* is one concern (*kind*) of driving a node, listed in
``INTERFACE_KINDS``; each kind has its own entry-point namespace
(``alloc_framework.hardware.interfaces.<kind>``), its own
``enabled_<kind>_interfaces`` and ``default_<kind>_interface`` options and
its own node field ``<kind>_interface``. A node names its hardware type in
``driver`` and may name an implementation per kind; unset ones get the
hardware type's default.

Every kind added after the first three is *optional*: its namespace holds
a no-op implementation ``no-<kind>`` that every hardware type supports
implicitly, so a hardware type written before the kind existed keeps
loading and its nodes get the no-op.

A third-party package adds a kind without changing this code: an entry
point of the ``alloc_framework.hardware.interface_kinds`` namespace names
an optional :class:`InterfaceKind` (see :func:`plugin_kinds`); the package
ships the kind's namespace with its ``no-<kind>`` no-op. Such a kind has
no node column: a node names its implementation in
``driver_info['<kind>_interface']`` (see ``doc/source/plugin-authors.rst``).

Conductors load only the plugins named by the ``enabled_*`` options, once,
at start; one instance of each interface serves every node, so
implementations keep per-node state on the node (``driver_internal_info``)
and never on ``self``. Methods run in conductor worker threads while the
node is locked (``task.node``); they must not sleep for long: an operation
that waits for the hardware returns a *wait* state and is resumed later.
"""

import abc
import inspect
from urllib import parse as urlparse

from alloc_framework.common import exception
from alloc_framework.common import interface_kinds as interface_kinds_mod
from alloc_framework.drivers import node_tree
from alloc_framework.objects import baremetal as objects

# The kinds are data that conf/ reads too, so they live in a leaf
# (common/interface_kinds.py); plugin authors find them here, in the
# contract of hardware interfaces.
InterfaceKind = interface_kinds_mod.InterfaceKind
INTERFACE_KINDS = interface_kinds_mod.INTERFACE_KINDS
KINDS = interface_kinds_mod.KINDS
INTERFACE_TYPES = interface_kinds_mod.INTERFACE_TYPES
KIND_NAMESPACE = interface_kinds_mod.KIND_NAMESPACE
plugin_kinds = interface_kinds_mod.plugin_kinds
interface_kinds = interface_kinds_mod.interface_kinds


def node_interface(node, kind):
    """The implementation of ``kind`` a node names, or None.

    Kinds of ``INTERFACE_KINDS`` have a node field ``<kind>_interface``;
    plugin kinds are named in ``driver_info['<kind>_interface']``.
    """
    field = '%s_interface' % kind.name
    if kind.name in KINDS:
        return getattr(node, field) if node.obj_attr_is_set(field) else None
    info = (node.driver_info if node.obj_attr_is_set('driver_info')
            else None) or {}
    return info.get(field) or None


STEP_TYPES = ('clean', 'deploy', 'service')
"""The flows whose work is made of interface steps."""


def _step_decorator(step_type, priority, abortable, argsinfo):
    def decorator(func):
        setattr(func, '_%s_step' % step_type,
                {'priority': priority, 'abortable': abortable,
                 'argsinfo': argsinfo or {}})
        return func
    return decorator


def clean_step(priority=0, abortable=False, argsinfo=None):
    """Mark an interface method as a clean step.

    :param priority: order of the step in automated cleaning (higher runs
        first); 0 means the step runs only when requested in manual
        cleaning.
    :param abortable: whether cleaning may be aborted while the step runs.
    :param argsinfo: ``{arg name: {'description': str, 'required': bool}}``
        for the step's keyword arguments in manual cleaning.
    """
    return _step_decorator('clean', priority, abortable, argsinfo)


def deploy_step(priority=0, argsinfo=None):
    """Mark an interface method as a deploy step.

    :param priority: order of the step in a deployment (higher runs
        first); 0 means the step runs only when a deploy template or the
        request asks for it.
    :param argsinfo: as for :func:`clean_step`.
    """
    return _step_decorator('deploy', priority, False, argsinfo)


def service_step(priority=0, abortable=False, argsinfo=None):
    """Mark an interface method as a service step.

    Service steps run on an ``active`` node when the ``service``
    provisioning verb names them (``service_steps``); ``priority`` only
    orders steps of the same request that share it.

    :param argsinfo: as for :func:`clean_step`.
    """
    return _step_decorator('service', priority, abortable, argsinfo)


class BaseInterface(abc.ABC):
    """Base of every hardware interface.

    Subclasses set ``interface_type`` (one of ``INTERFACE_TYPES``).
    Instances are created without arguments; ``conf``, the service's
    ``ConfigOpts`` (with the options of installed plugins registered, see
    :mod:`alloc_framework.conf.hardware`), is set before any other call.
    """

    interface_type = None
    conf = None

    @abc.abstractmethod
    def get_properties(self):
        """Describe the ``driver_info`` keys this interface reads.

        :returns: ``{key: description}``; a description starting with
            "Required." marks a mandatory key.
        """

    @abc.abstractmethod
    def validate(self, task):
        """Check that ``task.node`` has what this interface needs.

        Must not talk to the hardware.

        :param task: the node's ``TaskManager``.
        :raises: InvalidParameterValue when a value is wrong.
        :raises: MissingParameterValue when a required value is missing.
        """

    def get_steps(self, task, step_type):
        """The steps of one flow (methods marked ``<step_type>_step``).

        :param step_type: one of ``STEP_TYPES``.
        :returns: list of ``{'interface', 'step', 'priority', 'abortable',
            'argsinfo'}`` dicts, highest priority first.
        """
        attr = '_%s_step' % step_type
        steps = []
        for name, method in inspect.getmembers(self, inspect.ismethod):
            info = getattr(method, attr, None)
            if info is not None:
                steps.append(dict(info, interface=self.interface_type,
                                  step=name))
        return sorted(steps, key=lambda s: (-s['priority'], s['step']))

    def validate_step_args(self, task, step_name, args):
        """Check the arguments of a requested step beyond ``argsinfo``.

        Called when a clean or service request is accepted, so bad
        arguments are refused (400) before anything runs.

        :raises: InvalidParameterValue naming the argument.
        """

    def step_ended(self, task, step_name, args, result):
        """Called once a step of this interface ended, however it ran
        (synchronously, after a wait, or as a deferred action).

        The step runner calls it for every step and decides nothing by
        the step's name: what a step leaves behind is its interface's
        business. The default does nothing.

        :param step_name: the step (method name) that ended.
        :param args: the step's arguments.
        :param result: what the step returned (for a deferred step, what
            its last call returned).
        """

    def step_failed(self, task, step_name, args, error):
        """Called once a step of this interface failed, before the flow
        is failed (synchronously or as a deferred action).

        For what a step did before it failed and that must not be lost
        (the firmware interface records the components an update flashed
        before failing on the next one). The default does nothing; a
        failure of this hook is logged and does not change the outcome.

        :param step_name: the step (method name) that failed.
        :param args: the step's arguments.
        :param error: the failure message.
        """

    def get_clean_steps(self, task):
        """The clean steps of this interface; see :meth:`get_steps`."""
        return self.get_steps(task, 'clean')

    def execute_step(self, task, step):
        """Run one step of any flow.

        :param step: a dict with ``step`` (method name) and ``args``.
        :returns: None when done; a wait state, or a
            :class:`~alloc_framework.drivers.deferred.Reschedule` from a
            deferrable step, when the step goes on asynchronously.
        """
        method = getattr(self, step['step'])
        return method(task, **(step.get('args') or {}))

    def execute_clean_step(self, task, step):
        """Run one clean step; see :meth:`execute_step`.

        :raises: NodeCleaningFailure on failure.
        """
        return self.execute_step(task, step)


class PowerInterface(BaseInterface):
    """Turns nodes on and off."""

    interface_type = 'power'

    @abc.abstractmethod
    def get_power_state(self, task):
        """Read the node's power state from the hardware.

        :returns: ``states.POWER_ON`` or ``states.POWER_OFF``.
        :raises: PowerStateFailure when the hardware cannot be reached.
        """

    @abc.abstractmethod
    def set_power_state(self, task, power_state, timeout=None):
        """Set the node's power state and wait until it is reached.

        :param power_state: ``states.POWER_ON`` or ``states.POWER_OFF``.
        :param timeout: seconds to wait, or None for the default.
        :raises: PowerStateFailure
        """

    @abc.abstractmethod
    def reboot(self, task, timeout=None):
        """Power cycle the node; it ends powered on.

        :raises: PowerStateFailure
        """

    def get_health(self, task):
        """The node's overall health as its hardware reports it.

        The power state sync reads it with the power state (when
        ``[conductor]enable_health_monitoring``); an interface whose
        hardware reports no health keeps this default.

        :returns: one of ``states.HEALTH_STATES``, or None when the
            hardware does not report it.
        :raises: PowerStateFailure when the hardware cannot be reached.
        """
        return None


class DeployInterface(BaseInterface):
    """Puts an instance on a node and takes it away."""

    interface_type = 'deploy'

    @abc.abstractmethod
    def deploy(self, task):
        """Deploy ``task.node.instance_info`` on the node.

        :returns: None when the deployment is complete, or
            ``states.DEPLOYWAIT`` when it goes on asynchronously (the
            conductor then waits for a call-back).
        :raises: InstanceDeployFailure
        """

    @abc.abstractmethod
    def tear_down(self, task):
        """Remove the instance from the node.

        :returns: None when done (cleaning follows).
        :raises: InstanceDeployFailure
        """

    def continue_deploy(self, task):
        """Go on with a deployment that returned ``states.DEPLOYWAIT``.

        Called when the call-back arrives (``continue_node_deploy``).

        :returns: None when the deployment is complete, or
            ``states.DEPLOYWAIT`` to keep waiting.
        :raises: InstanceDeployFailure
        """
        return None

    def prepare(self, task):
        """Prepare the environment before ``deploy`` (optional)."""

    def clean_up(self, task):
        """Clean the environment after ``tear_down`` (optional)."""


class ManagementInterface(BaseInterface):
    """Boot devices and other out-of-band management."""

    interface_type = 'management'

    @abc.abstractmethod
    def get_supported_boot_devices(self, task):
        """:returns: the boot devices the node supports (strings)."""

    @abc.abstractmethod
    def set_boot_device(self, task, device, persistent=False):
        """Set the next boot device.

        :raises: InvalidParameterValue for an unsupported device.
        """

    @abc.abstractmethod
    def get_boot_device(self, task):
        """:returns: ``{'boot_device': str or None, 'persistent': bool}``"""

    def get_hardware_properties(self, task):
        """Facts the hardware reports about itself, for ``node.properties``.

        The conductor calls it when it verifies a node (``manage``), after
        the power state was read, and merges the answer into
        ``node.properties``: each key returned replaces the node's value,
        every other key stays as it was. It is how a hardware type records
        what only its hardware knows for the code that must not ask the
        hardware: the node's resource providers are synced on every change
        of the node from its ``properties`` (``properties['gpus']`` gives
        its GPU child providers, see :meth:`HardwareType.provider_shape`).

        Return only what the hardware actually reports: a key it cannot
        tell (an older BMC without the resource, say) is left out rather
        than guessed, so that a value set by the operator stays.

        The default knows nothing and returns ``{}``.

        :returns: a dict, ``properties`` key -> JSON-serializable value.
        :raises: any error of the hardware; the conductor logs it as a
            warning and the verification goes on, leaving the properties
            as they were (what the hardware reports is for scheduling, and
            must not keep a node whose power and credentials work from
            being managed).
        """
        return {}


class BootInterface(BaseInterface):
    """Prepares what a node boots: a ramdisk, then the instance."""

    interface_type = 'boot'

    @abc.abstractmethod
    def prepare_ramdisk(self, task, ramdisk_params):
        """Make the node boot the deploy or cleaning ramdisk next.

        :param ramdisk_params: parameters to pass to the ramdisk.
        """

    @abc.abstractmethod
    def clean_up_ramdisk(self, task):
        """Undo ``prepare_ramdisk``."""

    @abc.abstractmethod
    def prepare_instance(self, task):
        """Make the node boot the deployed instance next."""

    @abc.abstractmethod
    def clean_up_instance(self, task):
        """Undo ``prepare_instance``."""


class BIOSInterface(BaseInterface):
    """Reads and applies BIOS settings."""

    interface_type = 'bios'

    @abc.abstractmethod
    def apply_configuration(self, task, settings):
        """Apply BIOS settings.

        :param settings: list of ``{'name': str, 'value': str}``.
        :returns: None when applied, or a wait state (the node reboots
            to apply them, for example).
        :raises: AllocFrameworkException on failure.
        """

    @abc.abstractmethod
    def factory_reset(self, task):
        """Reset the BIOS settings to the factory defaults.

        :returns: None, or a wait state.
        """

    @abc.abstractmethod
    def cache_bios_settings(self, task):
        """Read the current settings from the hardware and store them."""


class FirmwareInterface(BaseInterface):
    """Reads and updates firmware components (BMC, BIOS, NICs...).

    ``update`` is what the ``firmware.update`` clean and service steps
    run; implementations that wait on the hardware mark it
    :func:`~alloc_framework.drivers.deferred.deferrable` and return a
    ``Reschedule`` for each wait, so no thread waits with them.
    """

    interface_type = 'firmware'

    @abc.abstractmethod
    def update(self, task, settings):
        """Update firmware components.

        :param settings: list of ``{'component': str, 'url': str}``;
            ``component`` is ``bmc``, ``bios`` or an implementation's own
            name.
        :returns: when done, ``{'updated': [component names],
            'components': [{'component', 'current_version'}]}`` (the
            versions read at the end, stored by :meth:`step_ended`), or
            None to have them read again; else a wait.
        """

    def validate_step_args(self, task, step_name, args):
        """``settings`` of ``update`` is a list of components and URLs."""
        if step_name != 'update':
            return
        settings = args.get('settings')
        if not isinstance(settings, list) or not settings:
            raise exception.InvalidParameterValue(
                err='args.settings must be a non-empty list of '
                    '{"component": name, "url": URL}.')
        for number, setting in enumerate(settings):
            if (not isinstance(setting, dict)
                    or set(setting) - {'component', 'url'}
                    or not isinstance(setting.get('component'), str)
                    or not setting['component']
                    or not isinstance(setting.get('url'), str)
                    or not setting['url']):
                raise exception.InvalidParameterValue(
                    err='args.settings[%d] must be {"component": name, '
                        '"url": URL}, not %r.' % (number, setting))

    @staticmethod
    def check_settings(settings, components, at_most=None):
        """Check the ``settings`` of :meth:`update`; raise naming the field.

        The settings are stored as a deferred action's arguments, so an
        image URL carrying credentials is refused, and no message repeats
        a URL.

        :param components: the component names this implementation
            updates.
        :param at_most: how many settings one step may hold, or None.
        :raises: InvalidParameterValue
        """
        if not isinstance(settings, list) or not settings:
            raise exception.InvalidParameterValue(
                err='settings must be a non-empty list of {"component": '
                    '..., "url": ...} objects, not %s.'
                    % type(settings).__name__)
        if at_most is not None and len(settings) > at_most:
            raise exception.InvalidParameterValue(
                err='settings must be a list of %s: this interface '
                    'updates at most %d component(s) per step, not %d.'
                    % ('one object' if at_most == 1 else
                       'at most %d objects' % at_most, at_most,
                       len(settings)))
        for i, item in enumerate(settings):
            if not isinstance(item, dict):
                raise exception.InvalidParameterValue(
                    err='settings[%d] must be an object with "component" '
                        'and "url", not %s.' % (i, type(item).__name__))
            unknown = set(item) - {'component', 'url'}
            if unknown:
                raise exception.InvalidParameterValue(
                    err='settings[%d] has unknown key(s) %s.'
                        % (i, ', '.join(sorted(unknown))))
            if item.get('component') not in components:
                raise exception.InvalidParameterValue(
                    err='settings[%d].component must be one of %s, not %r.'
                        % (i, ', '.join(components), item.get('component')))
            url = item.get('url')
            parsed = urlparse.urlsplit(url if isinstance(url, str) else '')
            if parsed.scheme not in ('http', 'https') or not parsed.hostname:
                raise exception.InvalidParameterValue(
                    err='settings[%d].url must be an http or https URL '
                        '(scheme %r).' % (i, parsed.scheme))
            if parsed.username is not None or parsed.password is not None:
                raise exception.InvalidParameterValue(
                    err='settings[%d].url must not carry credentials.' % i)

    def get_components(self, task):
        """Read the firmware components from the hardware.

        :returns: list of ``{'component': str, 'current_version': str}``;
            empty when the hardware cannot tell. An item may also carry
            ``vendor``, ``model`` and ``serial_number`` strings of the
            component's device (absent or None when unknown), shown from
            bare metal API 1.114.
        """
        return []

    def step_ended(self, task, step_name, args, result):
        """After ``update``: store the versions it returned.

        ``update`` returns ``{'updated': [names], 'components':
        [{'component', 'current_version'}]}`` once done, read at its end;
        they are stored as they are, without asking the hardware again.
        An implementation whose ``update`` returns no ``components``
        gets them read by :meth:`cache_firmware_components`.
        """
        if step_name != 'update':
            return
        flashed = [s.get('component') for s in args.get('settings') or ()
                   if isinstance(s, dict)]
        components = (result.get('components')
                      if isinstance(result, dict) else None)
        if components is None:
            self.cache_firmware_components(task, flashed=flashed)
        else:
            objects.FirmwareComponent.sync(task.context, task.node.id,
                                           components, flashed=flashed)

    def step_failed(self, task, step_name, args, error):
        """After a failed ``update``: store what the hardware now reads.

        An update of several components that fails on one of them has
        flashed the ones before it: their new version is read from the
        hardware and stored, and a component whose version changed since
        the last reading is recorded as flashed (its
        ``last_version_flashed``), so that ``GET /v1/nodes/{node}/firmware``
        shows what the node now runs.
        """
        if step_name != 'update':
            return
        named = {s.get('component') for s in args.get('settings') or ()
                 if isinstance(s, dict)}
        before = {c.component: c.current_version for c in
                  objects.FirmwareComponent.list_by_node_id(task.context,
                                                            task.node.id)}
        components = self.get_components(task)
        flashed = [c['component'] for c in components
                   if c.get('component') in named
                   and c['component'] in before
                   and c.get('current_version') != before[c['component']]]
        objects.FirmwareComponent.sync(task.context, task.node.id,
                                       components, flashed=flashed)

    def cache_firmware_components(self, task, flashed=()):
        """Read the component versions from the hardware and store them.

        The conductor calls it when a node is managed and after each
        ``firmware.update`` step; the stored versions are what
        ``GET /v1/nodes/{node}/firmware`` shows. The default stores what
        :meth:`get_components` reads (see ``FirmwareComponent.sync``);
        implementations only override :meth:`get_components`.

        :param flashed: names of the components an update just installed.
        """
        objects.FirmwareComponent.sync(task.context, task.node.id,
                                       self.get_components(task),
                                       flashed=flashed)


class HardwareType:
    """A family of hardware and the interfaces that work with it.

    A hardware type declares what it supports with one attribute or
    property per kind, ``supported_<kind>_interfaces``: a list of
    entry-point names, in order of preference (the first enabled one is
    the default for nodes that do not name one, unless
    ``default_<kind>_interface`` names another supported one). A kind it
    does not declare supports nothing when the kind is required and only
    the no-op when it is optional; the no-op of an optional kind is always
    supported. So adding a kind never breaks an existing hardware type.

    Like interfaces, hardware types are created without arguments and
    get the service's ``ConfigOpts`` as ``conf`` before any other call.

    A hardware type also describes the resource providers of its nodes
    for the ``placement`` allocation backend, with
    :meth:`update_provider_tree`; the easy way is to override
    :meth:`provider_shape` (see ``doc/source/plugin-authors.rst``).
    """

    conf = None

    deprecated_interfaces = {}
    """``{kind: {name: replacement}}``: supported implementations kept
    for the nodes that already name them, to be dropped in a later
    release. Nodes keep working; the conductor logs a warning naming the
    replacement the first time it builds such a node's driver."""

    def provider_shape(self, node):
        """The resource providers ``node`` should have, a ``Shape``.

        By default the node's root provider alone, with one unit of the
        node's resource class (``CUSTOM_<class>``), and GPUs when
        ``properties['gpus']`` counts any (:meth:`gpu_children`). Override
        it to add inventory to the root or children below it; call this
        one first and extend what it returns.

        :param node: the ``Node`` object; do not call the hardware from
            here (it runs on every change of the node): read what the
            node records, as ``properties`` that inspection, verification
            or the operator set.
        """
        inventories = {}
        if node.resource_class:
            inventories[node_tree.node_class(node.resource_class)] = (
                node_tree.inventory(1))
        return node_tree.Shape(inventories,
                               children=self.gpu_children(node))

    def gpu_children(self, node):
        """One child provider per GPU of the node: ``PGPU: 1`` each.

        The count is ``properties['gpus']`` (a non-negative integer);
        anything else counts none.
        """
        return node_tree.gpu_children(node)

    def update_provider_tree(self, provider_tree, nodename,
                             allocations=None, node=None):
        """Make the node's providers in ``provider_tree`` what they should be.

        The contract of the reshaping specification: the conductor calls
        it with the node's tree as Placement has it (root: the node's
        UUID, with its name, traits and aggregates already set by the
        allocation backend) and flushes what it changes.

        * With ``allocations`` None, it must not move inventory that
          consumers hold; when it would, it raises
          ``alloc_framework.placement_client.exception.ReshapeNeeded``.
        * With ``allocations`` (a dict keyed by consumer UUID, each as
          ``GET /allocations/{consumer}`` answers), it edits the tree and
          the allocations in place, so that every consumer holds in the
          new shape what it held in the old one; the conductor then
          flushes both with one ``POST /reshaper``.

        The default brings the tree to :meth:`provider_shape` with
        ``node_tree.apply_shape``, which finds the moves (a class leaving a
        provider, a total going down, the node's class renamed) and moves
        allocations itself.

        :param provider_tree: a ``ProviderTree`` (edited in place).
        :param nodename: the node's UUID, its root provider's.
        :param allocations: None or the allocations to move (see above).
        :param node: the ``Node`` object.
        :returns: a list of words describing what moved (for the log).
        """
        return node_tree.apply_shape(
            provider_tree, nodename, self.provider_shape(node),
            allocations=allocations,
            in_use=node.allocation_id is not None)

    def supported_interfaces(self, interface_type):
        """Names of supported implementations of ``interface_type``.

        A kind of a plugin (not in ``KINDS``) is optional: its no-op is
        supported too.
        """
        kind = KINDS.get(interface_type)
        noop = kind.noop if kind is not None else 'no-%s' % interface_type
        names = list(getattr(self, 'supported_%s_interfaces'
                             % interface_type, None) or ())
        if noop is not None and noop not in names:
            names.append(noop)
        return names
