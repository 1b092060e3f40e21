"""Where the provider tree page draws each provider of its SVG picture.

:func:`layout` turns the providers of ``dashboard_queries.provider_tree``
into boxes, lines and labels with coordinates; the template
(``provider.html``) only writes them out as inline SVG. The tree is drawn
as an indented outline, one row per provider (a parent above its
children, a child one step to the right, elbow lines between them), so
its size grows with the number of providers only, never with their
depth or names. The sharing providers the tree reaches sit in a column
on the right, each joined by a dashed line to the providers of the tree
that share an aggregate with it.

Nothing here is markup: names and uuids stay plain strings that the
template escapes. A picture holds at most :data:`MAX_BOXES` providers;
the page says how many it left out (the detail lists below it show up to
``dashboard_queries.MAX_TREE``).
"""

import collections

# Providers drawn at most (tree and sharing together).
MAX_BOXES = 200
# Geometry, in SVG user units (pixels).
BOX_WIDTH = 230
BOX_HEIGHT = 40
ROW = 52
INDENT = 28
GAP = 90
MARGIN = 4
BAR_WIDTH = BOX_WIDTH - 16
# Dashed lines to sharing providers drawn at most.
MAX_SHARES_LINES = 200
# Characters of a name shown in a box (the whole name is in its title).
NAME_CHARS = 28

Box = collections.namedtuple(
    'Box', ('uuid', 'name', 'label', 'title', 'x', 'y', 'kind', 'usage',
            'bar', 'usage_text'))
"""One provider drawn: ``kind`` is its CSS class (``root``, ``child``,
``sharing``, plus `` current`` for the page's provider); ``bar`` the
width of its usage bar, ``usage`` the highest share of a capacity used
(0 to 1, above 1 when over capacity)."""

Line = collections.namedtuple('Line', ('points', 'kind'))
"""A polyline (``"x,y x,y ..."``) between two boxes; ``kind`` is
``edge`` (parent and child) or ``shares`` (through an aggregate)."""

Picture = collections.namedtuple(
    'Picture', ('boxes', 'lines', 'width', 'height', 'left_out'))


def _usage(provider):
    """``(share, text)``: the most used class of ``provider``."""
    share, text = 0.0, 'no inventory'
    for inv in provider.inventories:
        if inv.capacity > 0:
            ratio = inv.used / inv.capacity
        else:
            ratio = 1.0 if inv.used else 0.0
        if text == 'no inventory' or ratio > share:
            share = ratio
            text = '%s %d of %d' % (inv.resource_class, inv.used,
                                    inv.capacity)
    return share, text


def _box(provider, x, y, kind, current):
    share, text = _usage(provider)
    label = provider.name
    if len(label) > NAME_CHARS:
        label = label[:NAME_CHARS - 1] + '\u2026'
    amounts = ', '.join('%s %d of %d' % (inv.resource_class, inv.used,
                                         inv.capacity)
                        for inv in provider.inventories) or 'no inventory'
    title = '%s (%s)%s: %s' % (provider.name, provider.uuid,
                               ', sharing' if kind == 'sharing' else '',
                               amounts)
    if provider.uuid == current:
        kind += ' current'
    return Box(provider.uuid, provider.name, label, title, x, y, kind,
               share, int(round(BAR_WIDTH * min(share, 1.0))), text)


def _walk(roots):
    """``(provider, depth, parent)`` in outline order."""
    stack = [(root, 0, None) for root in reversed(roots)]
    while stack:
        provider, depth, parent = stack.pop()
        yield provider, depth, parent
        stack.extend((child, depth + 1, provider)
                     for child in reversed(provider.children))


def layout(roots, sharing, current):
    """The :class:`Picture` of a tree and the sharing providers it reaches.

    :param roots: root ``ProviderDetail`` objects, ``children`` filled.
    :param sharing: the sharing ``ProviderDetail`` objects reached.
    :param current: the uuid of the provider the page is about.
    """
    boxes = []
    lines = []
    where = {}
    depth_max = 0
    total = 0
    for provider, depth, parent in _walk(roots):
        total += 1
        if len(boxes) >= MAX_BOXES:
            continue
        x = MARGIN + depth * INDENT
        y = MARGIN + len(boxes) * ROW
        boxes.append(_box(provider, x, y, 'child' if parent else 'root',
                          current))
        where[provider.uuid] = (x, y)
        depth_max = max(depth_max, depth)
        if parent is not None and parent.uuid in where:
            px, py = where[parent.uuid]
            elbow = px + INDENT // 2
            lines.append(Line('%d,%d %d,%d %d,%d' % (
                elbow, py + BOX_HEIGHT, elbow, y + BOX_HEIGHT // 2,
                x, y + BOX_HEIGHT // 2), 'edge'))
    tree_rows = len(boxes)
    edges = len(lines)
    column = MARGIN + depth_max * INDENT + BOX_WIDTH + GAP
    in_tree = [(p, where[p.uuid]) for p, _d, _p in _walk(roots)
               if p.uuid in where]
    for number, provider in enumerate(sharing):
        total += 1
        if len(boxes) >= MAX_BOXES:
            continue
        y = MARGIN + number * ROW
        boxes.append(_box(provider, column, y, 'sharing', current))
        aggregates = set(provider.aggregates)
        for member, (x, my) in in_tree:
            if (aggregates.intersection(member.aggregates)
                    and len(lines) - edges < MAX_SHARES_LINES):
                lines.append(Line('%d,%d %d,%d' % (
                    x + BOX_WIDTH, my + BOX_HEIGHT // 2,
                    column, y + BOX_HEIGHT // 2), 'shares'))
    rows = max(tree_rows, len(boxes) - tree_rows, 1)
    width = column + (BOX_WIDTH + MARGIN if len(boxes) > tree_rows
                      else MARGIN - GAP)
    return Picture(boxes, lines, width, MARGIN + rows * ROW,
                   total - len(boxes))
