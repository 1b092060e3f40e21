"""Deferrable driver methods: what a deferred action may call, and how.

A deferred action names its call as ``task.driver.<interface>.<method>``.
Only interface methods marked with :func:`deferrable` can be called so:
the name comes from the database, and marking keeps every other method
out of reach. The method is called on a conductor worker, under the node
lock, as ``method(task, **arguments)`` with the action's JSON arguments,
and answers in one of three ways:

* return a JSON-serializable value (or None): the action is COMPLETED and
  the value, as text, is its ``result``;
* return :class:`Reschedule`: the action is called again later (RESCHEDULE)
  with the new arguments, after ``delay`` seconds (or as soon as there is
  room when ``delay`` is None). This is how a method waits on hardware:
  it starts the operation, then polls it from later calls, and never
  sleeps;
* raise: the action is retried (PENDING_RETRY) while it has retries left,
  otherwise it FAILED, with the node's ``last_error`` and history saying
  why.

Arguments are stored as plain JSON in the database: never put
credentials in them (read them from ``task.node.driver_info`` instead).

A method that goes through several stages (start, poll, reset, poll
again...) declares them as data, a table ``{stage: handler}``, and runs
the stage its arguments name with :func:`run_stages`; the ``redfish`` and
``ipmi`` firmware updates are written so. A handler answers a
:class:`Reschedule` (wait; the next stage travels in its arguments),
:class:`Next` (go on with another stage in the same call), or the
method's result.

Example::

    class MyFirmware(base.BaseInterface):

        @deferred.deferrable
        def update(self, task, url, job=None):
            if job is None:
                job = start_update(task.node, url)
                return deferred.Reschedule(delay=30, url=url, job=job)
            if not finished(task.node, job):
                return deferred.Reschedule(delay=30, url=url, job=job)
            return {'job': job, 'status': 'done'}
"""

import re

from alloc_framework.common import exception

# The attribute :func:`deferrable` sets on the methods it marks.
_MARK = '_alloc_deferrable'
_CALL = re.compile(r'^task\.driver\.([a-z][a-z0-9_]*)\.([a-z][a-z0-9_]*)$')


def deferrable(func):
    """Mark an interface method as callable by deferred actions."""
    setattr(func, _MARK, True)
    return func


def is_deferrable(method):
    """Whether ``method`` (bound or not) was marked with :func:`deferrable`.
    """
    return getattr(getattr(method, '__func__', method), _MARK, False) is True


def call_name(interface, method):
    """The ``call`` of an action running ``<interface>.<method>``."""
    return 'task.driver.%s.%s' % (interface, method)


class Reschedule:
    """What a deferrable method returns to be called again later.

    :param delay: seconds before the next call; None for "when there is
        room" (a lazy action).
    :param retries: a new number of retries for the action; None keeps it.
    :param arguments: the keyword arguments of the next call (JSON).
    """

    def __init__(self, delay=None, retries=None, **arguments):
        self.delay = delay
        self.retries = retries
        self.arguments = arguments

    def __repr__(self):
        return 'Reschedule(delay=%r, retries=%r, arguments=%r)' % (
            self.delay, self.retries, self.arguments)


def resolve(task, call):
    """The bound deferrable method ``call`` names on ``task.driver``.

    :raises: DeferredCallNotAllowed when ``call`` is malformed, names no
        interface or method of the node's driver, or a method that is not
        deferrable.
    """
    match = _CALL.match(call or '')
    if match is None:
        raise exception.DeferredCallNotAllowed(
            call=call, reason='not of the form task.driver.<interface>.'
                              '<method>.')
    if task.driver is None:
        raise exception.DeferredCallNotAllowed(
            call=call, reason='the node has no driver on this conductor.')
    iface_name, method_name = match.groups()
    iface = getattr(task.driver, iface_name, None)
    method = getattr(iface, method_name, None) if iface is not None else None
    if method is None or not callable(method):
        raise exception.DeferredCallNotAllowed(
            call=call, reason='no such method in driver %s.'
                              % task.node.driver)
    if not is_deferrable(method):
        raise exception.DeferredCallNotAllowed(
            call=call, reason='the method is not deferrable.')
    return method


class Next:
    """What a stage handler returns to go on at once with ``stage``, in
    the same call (see :func:`run_stages`)."""

    def __init__(self, stage):
        self.stage = stage

    def __repr__(self):
        return 'Next(%r)' % (self.stage,)


def run_stages(stages, stage, *args):
    """Run a resumable method declared as a table of stages.

    :param stages: ``{stage: handler}``; the stage a fresh call starts
        in is the method's to choose (None, say).
    :param stage: the stage to run, from the method's arguments.
    :param args: what every handler receives, as ``handler(*args)``.
    :returns: the first answer that is not :class:`Next`: a
        :class:`Reschedule`, or the method's result.
    :raises: InvalidParameterValue for a stage the table does not know
        (arguments written by another version of the method); whatever
        a handler raises.
    """
    while True:
        handler = stages.get(stage)
        if handler is None:
            raise exception.InvalidParameterValue(
                err='Unknown stage %r: known stages are %s.'
                    % (stage, ', '.join(sorted(repr(s) for s in stages))))
        answer = handler(*args)
        if not isinstance(answer, Next):
            return answer
        stage = answer.stage
