"""Errors of the Placement client library.

Callers branch on the class and on :attr:`PlacementAPIError.code`
(Placement's stable error code), never on message text. The contract of
:meth:`~alloc_framework.placement_client.report.ReportClient.update_from_provider_tree`:

* :class:`ProviderUpdateConflict`: someone else changed a provider or a
  consumer meanwhile (a 409 ``placement.concurrent_update``). The client
  dropped the trees concerned from its cache; read them again
  (``get_provider_tree_and_ensure_root``), redo the change on the fresh
  copy and try again, a bounded number of times.
* :class:`ReshapeFailed` (``allocations`` given) or
  :class:`ProviderUpdateFailed` (without): any other failure. Retrying
  the same change will fail the same way. When the ``POST /reshaper``
  itself failed, nothing was moved.

Like the rest of the package this module imports only the standard
library: any Placement user can load it without the server.
"""


class PlacementClientError(Exception):
    """Base of every error of the Placement client library."""


class PlacementAPIError(PlacementClientError):
    """Placement gave an answer the client did not expect.

    :param method: the HTTP method of the request.
    :param url: the URL of the request, relative to Placement's endpoint.
    :param status: the HTTP status of the answer.
    :param code: Placement's error code (``placement.concurrent_update``,
        ``placement.duplicate_name``, ...), or None when the answer had
        none (microversions before 1.23, or a body that is not
        Placement's).
    :param detail: what Placement said, or the start of the body.
    """

    def __init__(self, method, url, status, code=None, detail=''):
        self.method = method
        self.url = url
        self.status = status
        self.code = code
        self.detail = detail
        super().__init__('Placement answered %s %s with %s (code %s): %s' % (
            method, url, status, code, detail))


class _Caused(PlacementClientError):
    """An error raised because of another one, kept as ``cause``."""

    what = 'failed'

    def __init__(self, cause, message=None):
        self.cause = cause
        super().__init__(message or '%s: %s' % (self.what, cause))


class ProviderUpdateConflict(_Caused):
    """A 409 ``placement.concurrent_update`` while flushing a tree.

    A provider or consumer generation did not match, or a concurrent
    transaction won. Re-read the tree, redo the change and retry
    (bounded). ``cause`` is the :class:`PlacementAPIError`.
    """

    what = 'Placement changed meanwhile (re-read the provider tree and retry)'


class ProviderUpdateFailed(_Caused):
    """Flushing a tree without allocations failed other than by a conflict.

    ``cause`` is the :class:`PlacementAPIError` or the transport's error.
    """

    what = 'Updating the resource providers failed'


class ReshapeFailed(_Caused):
    """Flushing a tree with allocations failed other than by a conflict.

    When the ``POST /reshaper`` itself failed, Placement moved nothing.
    ``cause`` is the :class:`PlacementAPIError` or the transport's error.
    """

    what = 'Reshaping the resource providers failed'


class ReshapeNeeded(PlacementClientError):
    """Inventory that has allocations must move: a reshape is needed.

    Raised by an ``update_provider_tree(provider_tree, nodename,
    allocations=None)`` of a driver, which must not move such inventory
    without the allocations: the caller gathers them
    (``get_allocations_for_provider_tree``) and calls it again with them.
    """

    def __init__(self, message=None):
        super().__init__(message or 'A reshape of the provider tree is '
                                    'needed: call again with allocations.')
