"""Allocation CRUD notifications of the API, sent as upstream's API does.

A change of an allocation (create, update, delete) sends ``start`` once
the request has been checked, then ``end`` after the change, or
``error`` (with the error the request fails with) when the change is
refused or fails. Requests refused before the change starts (policy,
schema, unknown allocation) send nothing. A notification that cannot be
sent is logged; it never changes the answer.

``[allocation]notification_level`` picks the lowest priority sent; the
notifier is made on first use, per application (``Dispatcher.notifier``).
Without a notification driver (oslo.messaging's default) nothing is
built: the payload of each notification would be made only for the
no-op driver to drop it.
"""

import contextlib

from oslo_log import log
import oslo_messaging

from alloc_framework.api.baremetal import errors
from alloc_framework.common import exception
from alloc_framework.objects.baremetal import notification

LOG = log.getLogger(__name__)


def make_notifier(conf):
    """The oslo.messaging notifier of the API; None without a driver.

    oslo.messaging's notifier without a driver (or with ``noop`` only)
    drops what it is given; None tells the API not to build it at all.
    """
    transport = oslo_messaging.get_notification_transport(conf)
    if not set(conf.oslo_messaging_notifications.driver) - {'noop'}:
        return None
    return oslo_messaging.Notifier(transport,
                                   publisher_id=notification.API_PUBLISHER)


def _error_text(exc):
    """What an ``error`` notification says: the message the client gets."""
    if isinstance(exc, errors.HTTPError):
        return exc.message
    if isinstance(exc, exception.AllocFrameworkException):
        return str(exc)
    # The client sees only a generic 500; operators get the cause.
    return '%s: %s' % (type(exc).__name__, exc)


def _emit(req, allocation, action, status, node_uuid=None, error=None):
    level = req.conf.allocation.notification_level
    if level == 'none':
        return
    notifier = req.dispatcher.notifier
    if notifier is None:
        return
    try:
        notification.AllocationCRUDNotification.for_allocation(
            allocation, action, status, req.conf.host, node_uuid=node_uuid,
            error=error).emit(req.context, notifier, level)
    except Exception:
        LOG.exception('Could not send the %(action)s.%(status)s '
                      'notification of allocation %(uuid)s',
                      {'action': action, 'status': status,
                       'uuid': getattr(allocation, 'uuid', None)})


def start(req, allocation, action, node_uuid=None):
    """``baremetal.allocation.<action>.start``."""
    _emit(req, allocation, action, notification.START, node_uuid)


def end(req, allocation, action, node_uuid=None):
    """``baremetal.allocation.<action>.end``."""
    _emit(req, allocation, action, notification.END, node_uuid)


@contextlib.contextmanager
def on_error(req, allocation, action, node_uuid=None):
    """Send ``<action>.error`` if the block raises; re-raise."""
    try:
        yield
    except Exception as exc:
        _emit(req, allocation, action, notification.ERROR, node_uuid,
              error=_error_text(exc))
        raise
