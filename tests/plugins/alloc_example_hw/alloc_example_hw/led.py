"""The ``led`` interface kind: the identify LED of a node's chassis.

``KIND`` declares the kind (its name, what it does, optional);
``LEDInterface`` is the contract of its implementations; ``NoLED`` is the
no-op every hardware type supports, and ``BlinkyLED`` an implementation
that keeps the LED's state on the node (it has no hardware to talk to).
"""

import abc

from alloc_framework.common import exception
from alloc_framework.drivers import base

KIND = base.InterfaceKind('led', 'switch the identify LED of a chassis')

STATES = ('off', 'on', 'blinking')


class LEDInterface(base.BaseInterface):
    """Switches the identify LED of a node's chassis."""

    interface_type = 'led'

    @abc.abstractmethod
    def get_state(self, task):
        """:returns: one of ``STATES``."""

    @abc.abstractmethod
    def set_state(self, task, state):
        """Switch the LED.

        :param state: one of ``STATES``.
        :raises: InvalidParameterValue for another state.
        """


class NoLED(LEDInterface):
    """No LED to switch: every action is unsupported."""

    def get_properties(self):
        return {}

    def validate(self, task):
        pass

    def get_state(self, task):
        raise exception.UnsupportedDriverExtension(
            driver=task.node.driver, extension=self.interface_type)

    set_state = get_state


class BlinkyLED(LEDInterface):
    """An LED whose state is kept in ``driver_internal_info['led_state']``.

    ``identify`` is a manual clean step: it switches the LED on (or makes
    it blink) so that someone in the data centre finds the node.
    """

    def get_properties(self):
        return {'led_colour': 'Optional. Colour of the LED, for the record.'}

    def validate(self, task):
        colour = (task.node.driver_info or {}).get('led_colour')
        if colour is not None and not isinstance(colour, str):
            raise exception.InvalidParameterValue(
                err='led_colour must be a string')

    def get_state(self, task):
        return (task.node.driver_internal_info or {}).get('led_state',
                                                          'off')

    def set_state(self, task, state):
        if state not in STATES:
            raise exception.InvalidParameterValue(
                err='Unknown LED state %r; valid states are %s'
                    % (state, ', '.join(STATES)))
        info = dict(task.node.driver_internal_info or {})
        info['led_state'] = state
        task.node.driver_internal_info = info

    @base.clean_step(argsinfo={
        'state': {'description': 'on or blinking (default: the '
                                 '[example_hw]identify_state option)',
                  'required': False}})
    def identify(self, task, state=None):
        self.set_state(task, state or self.conf.example_hw.identify_state)
