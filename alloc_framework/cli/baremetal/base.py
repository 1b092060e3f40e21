"""Pieces shared by the bare metal commands: lookups, paging, waiting."""

import time

from alloc_framework.cli import common


class BaremetalMixin(common.VersionMixin):
    """A command talking to the bare metal API."""

    service = 'baremetal'


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


def wait_for(fetch, done, failed, what, timeout, interval=1.0):
    """Poll ``fetch()`` until ``done(obj)``; CommandError on failure.

    ``timeout`` 0 waits forever. This runs in the CLI's main thread: the
    pause between polls is the point of ``--wait``.
    """
    deadline = time.monotonic() + timeout if timeout else None
    while True:
        obj = fetch()
        if done(obj):
            return obj
        error = failed(obj)
        if error:
            raise common.CommandError('%s failed: %s' % (what, error))
        if deadline is not None and time.monotonic() >= deadline:
            raise common.CommandError('Timed out after %s seconds waiting '
                                      'for %s' % (timeout, what))
        time.sleep(interval)


def add_wait_option(parser, what):
    parser.add_argument(
        '--wait', metavar='<timeout>', type=int, nargs='?', const=0,
        default=None, dest='wait_timeout',
        help='Wait until %s; optional timeout in seconds (default 0: '
             'wait forever).' % what)
