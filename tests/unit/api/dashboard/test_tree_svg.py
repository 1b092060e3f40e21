"""The layout of the provider tree picture: bounded, and in outline order."""

import types

from alloc_framework.api.dashboard import tree_svg
from alloc_framework.objects.placement import dashboard_queries as rp
from tests import base


def provider(number, aggregates=(), inventories=()):
    return types.SimpleNamespace(
        uuid='rp-%d' % number, name='provider %d' % number,
        children=[], aggregates=list(aggregates),
        inventories=list(inventories))


def inventory(rc, used, capacity):
    return rp.Inventory(rc, capacity, 0, 1.0, 1, capacity, 1, capacity,
                        used)


class TestLayout(base.TestCase):

    def test_outline_usage_and_sharing(self):
        root = provider(0, ['agg'], [inventory('VCPU', 2, 8),
                                     inventory('MEMORY_MB', 900, 1000)])
        child = provider(1)
        grandchild = provider(2, inventories=[inventory('VCPU', 5, 4)])
        child.children.append(grandchild)
        root.children.append(child)
        shared = provider(3, ['agg'], [inventory('DISK_GB', 0, 0)])
        picture = tree_svg.layout([root], [shared], 'rp-1')
        self.assertEqual(
            [('rp-0', 'root', tree_svg.MARGIN, tree_svg.MARGIN),
             ('rp-1', 'child current', tree_svg.MARGIN + tree_svg.INDENT,
              tree_svg.MARGIN + tree_svg.ROW),
             ('rp-2', 'child', tree_svg.MARGIN + 2 * tree_svg.INDENT,
              tree_svg.MARGIN + 2 * tree_svg.ROW)],
            [(b.uuid, b.kind, b.x, b.y) for b in picture.boxes[:3]])
        # The most used class, its bar; over capacity is a full bar.
        self.assertEqual('MEMORY_MB 900 of 1000', picture.boxes[0].usage_text)
        self.assertEqual('no inventory', picture.boxes[1].usage_text)
        self.assertGreater(picture.boxes[2].usage, 1)
        self.assertEqual(tree_svg.BAR_WIDTH, picture.boxes[2].bar)
        self.assertEqual('sharing', picture.boxes[3].kind)
        self.assertEqual(0, picture.boxes[3].bar)
        self.assertEqual(['edge', 'edge', 'shares'],
                         [line.kind for line in picture.lines])
        self.assertGreaterEqual(picture.width, picture.boxes[3].x
                                + tree_svg.BOX_WIDTH)
        self.assertEqual(0, picture.left_out)

    def test_bounded(self):
        root = provider(0, ['agg'])
        root.children = [provider(n, ['agg']) for n in range(1, 300)]
        sharing = [provider(n, ['agg']) for n in range(300, 310)]
        picture = tree_svg.layout([root], sharing, 'rp-0')
        self.assertEqual(tree_svg.MAX_BOXES, len(picture.boxes))
        self.assertEqual(310 - tree_svg.MAX_BOXES, picture.left_out)
        self.assertEqual(tree_svg.MARGIN + tree_svg.MAX_BOXES * tree_svg.ROW,
                         picture.height)
        self.assertEqual('provider 0', picture.boxes[0].name)
        long_name = provider(1)
        long_name.name = 'x' * 100
        label = tree_svg.layout([long_name], [], 'rp-1').boxes[0].label
        self.assertEqual(tree_svg.NAME_CHARS, len(label))
