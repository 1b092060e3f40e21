"""The contracts of hardware types and hardware interfaces.

A *hardware type* (``alloc_framework.hardware.types`` entry point) says
which interface implementations work with a family of hardware. A
*hardware interface* is one concern of driving a node: power, deploy,
management; each concern has its own entry-point namespace
(``alloc_framework.hardware.interfaces.<type>``). A node names its
hardware type in ``driver`` and may name an implementation per concern
(``power_interface`` ...); unset ones get the hardware type's default.

Conductors load only the plugins named by the ``enabled_*`` options, once,
at start; one instance of each interface serves every node, so
implementations keep per-node state on the node (``driver_internal_info``)
and never on ``self``. Methods run in conductor worker threads while the
node is locked (``task.node``); they must not sleep for long: an operation
that waits for the hardware returns a *wait* state and is resumed later.
"""

import abc
import inspect

INTERFACE_TYPES = ('power', 'deploy', 'management')
"""The hardware interface concerns, in the order nodes list them."""


def clean_step(priority=0, abortable=False, argsinfo=None):
    """Mark an interface method as a clean step.

    :param priority: order of the step in automated cleaning (higher runs
        first); 0 means the step runs only when requested in manual
        cleaning.
    :param abortable: whether cleaning may be aborted while the step runs.
    :param argsinfo: ``{arg name: {'description': str, 'required': bool}}``
        for the step's keyword arguments in manual cleaning.
    """
    def decorator(func):
        func._clean_step = {'priority': priority, 'abortable': abortable,
                            'argsinfo': argsinfo or {}}
        return func
    return decorator


class BaseInterface(abc.ABC):
    """Base of every hardware interface.

    Subclasses set ``interface_type`` (one of ``INTERFACE_TYPES``).
    """

    interface_type = None

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

    def get_clean_steps(self, task):
        """The clean steps of this interface (methods marked ``clean_step``).

        :returns: list of ``{'interface', 'step', 'priority', 'abortable',
            'argsinfo'}`` dicts.
        """
        steps = []
        for name, method in inspect.getmembers(self, inspect.ismethod):
            info = getattr(method, '_clean_step', None)
            if info is not None:
                steps.append(dict(info, interface=self.interface_type,
                                  step=name))
        return sorted(steps, key=lambda s: (-s['priority'], s['step']))

    def execute_clean_step(self, task, step):
        """Run one clean step.

        :param step: a dict with ``step`` (method name) and ``args``.
        :returns: None when done, ``states.CLEANWAIT`` when the step goes
            on asynchronously.
        :raises: NodeCleaningFailure on failure.
        """
        method = getattr(self, step['step'])
        return method(task, **(step.get('args') or {}))


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


class HardwareType(abc.ABC):
    """A family of hardware and the interfaces that work with it.

    The ``supported_<type>_interfaces`` properties list entry-point names;
    the first one that is enabled is the default for nodes that do not
    name one.
    """

    @property
    @abc.abstractmethod
    def supported_power_interfaces(self):
        """Names of the power interfaces this hardware type supports."""

    @property
    @abc.abstractmethod
    def supported_deploy_interfaces(self):
        """Names of the deploy interfaces this hardware type supports."""

    @property
    @abc.abstractmethod
    def supported_management_interfaces(self):
        """Names of the management interfaces this hardware type
        supports."""

    def supported_interfaces(self, interface_type):
        """Names of supported implementations of ``interface_type``."""
        return list(getattr(self, 'supported_%s_interfaces'
                            % interface_type))
