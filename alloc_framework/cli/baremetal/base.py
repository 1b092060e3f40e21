"""Pieces shared by the bare metal commands: lookups, paging, waiting.

``--wait`` polls with :func:`wait_for`; on a terminal a :class:`Progress`
line on standard error says what is being waited for and for how long.
"""

import time

from alloc_framework.cli import common


class BaremetalMixin(common.VersionMixin):
    """A command talking to the bare metal API."""

    service = 'baremetal'


def delete_each(api, url, idents, what):
    """``DELETE url/<ident>`` for each of ``idents``, going on past
    failures; then one error listing every one that failed.

    :param what: the resource, plural, for the message ("nodes").
    :raises: CommandError when any deletion failed.
    """
    failures = []
    for ident in idents:
        try:
            api.delete(url + '/' + ident)
        except common.HttpError as exc:
            failures.append('%s: %s' % (ident, exc))
    if failures:
        raise common.CommandError(
            'Failed to delete %d of %d %s:\n%s'
            % (len(failures), len(idents), what, '\n'.join(failures)))


def add_list_options(parser, resource):
    parser.add_argument(
        '--limit', metavar='<limit>', type=int,
        help='Maximum number of %ss to return (default: all, following '
             'the server pages; 0 means all too).' % resource)
    parser.add_argument('--marker', metavar='<uuid>',
                        help='UUID of the %s after which to start.'
                             % resource)
    parser.add_argument(
        '--sort', metavar='<key>[:<direction>]',
        help='Sort by this field, asc (default) or desc.')


def list_params(parsed_args):
    params = {}
    if parsed_args.limit:
        params['limit'] = parsed_args.limit
    if parsed_args.marker:
        params['marker'] = parsed_args.marker
    if parsed_args.sort:
        key, _sep, direction = parsed_args.sort.partition(':')
        params['sort_key'] = key
        if direction:
            params['sort_dir'] = direction
    return params


def list_all(api, url, collection, params):
    """Every item of a paged collection, or ``limit`` of them.

    The server caps each page at its ``[api]max_limit``; without --limit
    the pages are followed through their markers.
    """
    items = []
    limit = params.get('limit')
    params = dict(params)
    while True:
        answer = api.get(url, params=params)
        page = answer.get(collection, [])
        items.extend(page)
        if limit or not answer.get('next') or not page:
            return items[:limit] if limit else items
        params['marker'] = page[-1]['uuid']


# Output formats meant for programs: no progress line with them.
_MACHINE_FORMATS = ('json', 'value', 'yaml', 'csv', 'shell')


def elapsed_text(seconds):
    """``75.2`` -> ``'1m15s'``."""
    minutes, seconds = divmod(int(seconds), 60)
    return '%dm%02ds' % (minutes, seconds) if minutes else '%ds' % seconds


class Progress:
    """One status line on standard error, rewritten at each poll.

    Shown only when standard error is a terminal and the command's output
    is not for a program (``-f json|value|...``): logs and pipes get
    nothing but the command's own output.
    """

    def __init__(self, app, parsed_args):
        stream = app.stderr
        self.stream = stream
        self.enabled = (callable(getattr(stream, 'isatty', None))
                        and stream.isatty()
                        and getattr(parsed_args, 'formatter', None)
                        not in _MACHINE_FORMATS)
        self._width = 0

    def show(self, text):
        if not self.enabled:
            return
        # Overwrite the previous line, padding out what it had more.
        self.stream.write('\r' + text.ljust(self._width))
        self.stream.flush()
        self._width = len(text)

    def end(self):
        if self.enabled and self._width:
            self.stream.write('\n')
            self.stream.flush()
            self._width = 0


def wait_for(fetch, done, failed, what, timeout, interval=1.0,
             progress=None, describe=None):
    """Poll ``fetch()`` until ``done(obj)``; CommandError on failure.

    ``timeout`` 0 waits forever. This runs in the CLI's main thread: the
    pause between polls is the point of ``--wait``. With a
    :class:`Progress`, ``describe(obj, elapsed)`` gives its line at each
    poll.
    """
    started = time.monotonic()
    deadline = started + timeout if timeout else None
    try:
        while True:
            obj = fetch()
            if done(obj):
                return obj
            error = failed(obj)
            if error:
                raise common.CommandError('%s failed: %s' % (what, error))
            if deadline is not None and time.monotonic() >= deadline:
                raise common.CommandError('Timed out after %s seconds '
                                          'waiting for %s' % (timeout, what))
            if progress is not None and describe is not None:
                progress.show(describe(obj, time.monotonic() - started))
            time.sleep(interval)
    finally:
        if progress is not None:
            progress.end()


def add_wait_option(parser, what):
    parser.add_argument(
        '--wait', metavar='<timeout>', type=int, nargs='?', const=0,
        default=None, dest='wait_timeout',
        help='Wait until %s; optional timeout in seconds (default 0: '
             'wait forever).' % what)
